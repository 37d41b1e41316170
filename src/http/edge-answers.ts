import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { AppError } from '../errors.ts';
import { requestIdFrom } from '../lib/request-id.ts';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem.ts';

/**
 * Answers given at the connection edge, where node's HTTP parser (not fastify) has the connection: a
 * request it cannot parse, a request that came too slowly, CONNECT, a refused connection. Each is a
 * complete problem+json answer (type, title, status, detail, error) with `Connection: close`, after
 * which the connection is closed, so a client always learns why.
 */

/** How long a closed-for-writing connection still reads (and discards) what the client sends. */
const LINGER_MS = 1000;

/** Marks a socket whose edge answer is written: node reports each later parse error again. */
const answered = Symbol('umbra.edgeAnswered');

/** The whole HTTP/1.1 answer for an error: status line, headers, problem+json body. */
export function problemResponse(err: AppError, requestId: string = requestIdFrom(undefined)): { status: number; bytes: string } {
  const problem = toProblem(err);
  const body = JSON.stringify(problem.body);
  let head = `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nx-request-id: ${requestId}\r\n`;
  for (const name in problem.headers) head += `${name}: ${problem.headers[name]}\r\n`;
  head += `content-type: ${PROBLEM_CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
  return { status: problem.status, bytes: head + body };
}

/**
 * Writes `bytes` (when the socket can still take them) and closes the connection: the write side
 * first, then, after reading and discarding what the client still sends for a moment, the socket.
 * Closing at once with unread input would make the kernel reset the connection, and a reset can
 * destroy the answer in the client's receive buffer before it reads it.
 */
export function answerAndClose(socket: Duplex, bytes: string | undefined): void {
  if (socket.destroyed) return;
  (socket as Duplex & { [answered]?: true })[answered] = true;
  const destroy = setTimeout(() => socket.destroy(), LINGER_MS);
  destroy.unref();
  socket.once('close', () => clearTimeout(destroy));
  socket.on('error', () => socket.destroy());
  if (bytes !== undefined && socket.writable) socket.end(bytes);
  else socket.end();
  // Reading keeps the kernel's receive buffer empty; a socket node's parser consumes is read already.
  socket.resume();
}

/** The problem for an error node's HTTP server reports through `clientError`; undefined: nothing to answer. */
export function clientErrorProblem(
  err: NodeJS.ErrnoException,
  limits: { maxHeaderBytes: number; headersTimeoutMs: number; requestTimeoutMs: number },
): AppError | undefined {
  const close = 'the connection is closed';
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'HEADERS_TOO_LARGE',
        `The request line and headers together exceed ${limits.maxHeaderBytes} bytes, the most this server reads; ${close}.`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT': {
      const whole = limits.requestTimeoutMs > 0 ? `; the whole request within ${limits.requestTimeoutMs} ms` : '';
      return new AppError(
        'REQUEST_TIMEOUT',
        `The request was not received in time (its line and headers must arrive within ${limits.headersTimeoutMs} ms of its first byte, ` +
          `or of the connection opening${whole}); ${close}.`,
      );
    }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('PAYLOAD_TOO_LARGE', `The chunk extensions of the request body are larger than this server accepts; ${close}.`);
    default:
      return new AppError('MALFORMED_REQUEST', `The request is not valid HTTP/1.1: ${malformation(err.code)}; ${close}.`);
  }
}

function malformation(code: string | undefined): string {
  switch (code) {
    case 'HPE_INVALID_METHOD':
      return 'unknown or malformed method';
    case 'HPE_INVALID_URL':
      return 'malformed request target';
    case 'HPE_INVALID_VERSION':
      return 'unsupported HTTP version';
    case 'HPE_INVALID_HEADER_TOKEN':
      return 'a header name or value holds a character HTTP does not allow';
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'malformed chunked body';
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return 'invalid or conflicting Content-Length';
    case 'HPE_CR_EXPECTED':
    case 'HPE_LF_EXPECTED':
    case 'HPE_STRICT':
      return 'malformed line ending';
    case 'HPE_INVALID_EOF_STATE':
      return 'the connection ended in the middle of a request';
    default:
      return 'malformed request';
  }
}

export interface EdgeAnswers {
  /** For node's `clientError` event (fastify's clientErrorHandler option). */
  clientError(err: NodeJS.ErrnoException, socket: Duplex): void;
  /** For node's `connect` event: CONNECT is not served (umbra is not a proxy). */
  connect(req: IncomingMessage, socket: Duplex): void;
}

/**
 * `observe(status)` counts each answer (the metrics' `edge` operation); client errors are logged at
 * debug with their code only: a parse error carries the raw request bytes, which may hold a
 * presigned URL, so neither the error object nor the request target is ever logged here.
 */
export function edgeAnswers(
  limits: () => { maxHeaderBytes: number; headersTimeoutMs: number; requestTimeoutMs: number },
  observe: (status: number) => void,
  logger: Logger,
): EdgeAnswers {
  return {
    clientError(err, socket) {
      if ((socket as Duplex & { [answered]?: true })[answered] || socket.destroyed) return;
      const problem = clientErrorProblem(err, limits());
      // An answer already under way on this connection cannot be followed by another one.
      const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
      if (problem === undefined || inFlight?.headersSent) {
        socket.destroy();
        return;
      }
      const { status, bytes } = problemResponse(problem);
      observe(status);
      if (logger.isLevelEnabled('debug')) logger.debug({ code: err.code, status }, 'client error answered at the edge');
      answerAndClose(socket, bytes);
    },
    connect(req, socket) {
      const err = new AppError(
        'METHOD_NOT_ALLOWED',
        'CONNECT is not supported: umbra is an API server, not a proxy. It accepts GET, HEAD and POST.',
        { headers: { allow: 'GET, HEAD, POST' } },
      );
      const { status, bytes } = problemResponse(err, requestIdFrom(req.headers['x-request-id']));
      observe(status);
      answerAndClose(socket, bytes);
    },
  };
}
