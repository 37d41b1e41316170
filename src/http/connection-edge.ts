import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { EdgeConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { ConnectionLimiter } from './connection-limit.ts';
import { answerAndClose, problemResponse, type EdgeAnswers } from './edge-answers.ts';
import type { Metrics } from './metrics.ts';

/**
 * How often node looks for requests past headersTimeout / requestTimeout (its default, 30 s, would
 * let a slow client hold a connection up to 30 s past its deadline): a quarter of the headers timeout,
 * between 50 ms and 1 s. The check walks only connections with a request under way.
 */
export function checkingIntervalMs(headersTimeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.floor(headersTimeoutMs / 4)));
}

/** A connection is idle when no answer is in flight on it: node sets `_httpMessage` from a request's arrival to its answer's end. */
const httpIdle = (socket: Socket): boolean => !(socket as Socket & { _httpMessage?: unknown })._httpMessage;

/**
 * The connection edge of the HTTP server: the connection limit (idle connections reclaimed, then
 * 503 problem+json refusals), CONNECT answered with a 405 problem, and the metrics of both. Timeouts
 * are node's, set where the server is made (headersTimeout, requestTimeout, keepAliveTimeout).
 * Nothing here runs per request.
 */
export function protectConnections(server: HttpServer, edge: EdgeConfig, answers: EdgeAnswers, metrics: Metrics, logger: Logger): ConnectionLimiter {
  const refusal = problemResponse(new AppError('UNAVAILABLE', 'This server is at its connection limit and every connection is busy; retry shortly.', { retryAfter: 1 }));
  const limiter = new ConnectionLimiter({
    transport: 'http',
    max: edge.maxConnections,
    isIdle: httpIdle,
    // The answer is written at once, before the request is read: the client reads it as the answer to
    // whatever it sends, and the connection closes (one shared request id: nothing was parsed to echo).
    refuse: (socket) => answerAndClose(socket, refusal.bytes),
    counters: { refused: () => metrics.httpConnectionsRefused.inc(), reclaimed: (n) => metrics.httpConnectionsReclaimed.inc(n) },
    logger,
  });
  limiter.attach(server);
  metrics.connectionsOpen.http = () => limiter.connections;
  metrics.httpConnectionsLimit.set(limiter.max);
  // Without a listener node destroys a CONNECT's socket without a word.
  server.on('connect', answers.connect);
  return limiter;
}
