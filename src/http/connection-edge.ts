import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { EdgeConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { ConnectionLimiter } from '../lib/connection-limit.ts';
import { answerAndClose, problemResponse, type EdgeAnswers } from './edge-answers.ts';
import type { Metrics } from '../metrics.ts';

/**
 * How often node looks for requests past headersTimeout / requestTimeout (its default, 30 s, would
 * let a slow client hold a connection up to 30 s past its deadline): a quarter of the headers timeout,
 * between 50 ms and 1 s. The check walks only connections with a request under way.
 */
export function checkingIntervalMs(headersTimeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.floor(headersTimeoutMs / 4)));
}

interface PendingAnswer {
  headersSent: boolean;
  req?: { complete: boolean };
}

/**
 * Whether a connection waits on its client rather than on umbra, and so may be closed to make room:
 * no request on it (node sets `_httpMessage` from a request's headers to the end of its answer), or a
 * request whose body is still arriving and whose answer has not begun. The second keeps a client
 * that opens an upload and stalls (no key needed: routes wait for the body) from holding a slot for
 * the whole request timeout; an upload still sending bytes counts as recently active, so it goes last.
 */
function waitsOnClient(socket: Socket): boolean {
  const answer = (socket as Socket & { _httpMessage?: PendingAnswer | null })._httpMessage;
  return !answer || (!answer.headersSent && answer.req?.complete === false);
}

/** No request on the connection now (node sets `_httpMessage` from a request's headers to the end of its answer). */
export function noRequest(socket: Socket): boolean {
  return !(socket as Socket & { _httpMessage?: unknown })._httpMessage;
}

/**
 * The connection edge of the HTTP server: the connection limit (idle connections reclaimed, then
 * 503 problem+json refusals), CONNECT answered with a 405 problem, and the metrics of both. Timeouts
 * are node's, set where the server is made (headersTimeout, requestTimeout, keepAliveTimeout).
 * Nothing here runs per request.
 */
export function protectConnections(
  server: HttpServer,
  edge: EdgeConfig,
  answers: EdgeAnswers,
  metrics: Metrics,
  logger: Logger,
): ConnectionLimiter {
  const refusal = problemResponse(
    new AppError('UNAVAILABLE', 'This server is at its connection limit and every connection is busy; retry shortly.', { retryAfter: 1 }),
  );
  const limiter = new ConnectionLimiter({
    transport: 'http',
    max: edge.maxConnections,
    isIdle: waitsOnClient,
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
