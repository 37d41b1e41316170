/**
 * The one error table. Every failure the service reports has an ErrorCode; the STATUS table maps
 * it to an HTTP status and a gRPC status code, so HTTP and gRPC can never disagree.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'MALFORMED_REQUEST'
  | 'UNAUTHENTICATED'
  | 'CREDITS_EXHAUSTED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'REQUEST_TIMEOUT'
  | 'HEADERS_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'IDEMPOTENCY_KEY_BUSY'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'RATE_LIMITED'
  | 'TOO_MANY_STREAMS'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'INSUFFICIENT_STORAGE';

/** gRPC status codes by name (numeric values of grpc.status), kept here so modules need no grpc import. */
export const GRPC = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface StatusRow {
  http: number;
  /** 402 has no natural gRPC code: the contract settles it as FAILED_PRECONDITION (RESOURCE_EXHAUSTED is rate limits). */
  grpc: number;
  title: string;
}

export const STATUS: Record<ErrorCode, StatusRow> = {
  VALIDATION_ERROR: { http: 400, grpc: GRPC.INVALID_ARGUMENT, title: 'Validation error' },
  /**
   * Not HTTP/1.1 that node's parser accepts (request line, header syntax, chunked framing): answered at the edge, then the connection is
   * closed.
   */
  MALFORMED_REQUEST: { http: 400, grpc: GRPC.INVALID_ARGUMENT, title: 'Bad request' },
  UNAUTHENTICATED: { http: 401, grpc: GRPC.UNAUTHENTICATED, title: 'Unauthorized' },
  CREDITS_EXHAUSTED: { http: 402, grpc: GRPC.FAILED_PRECONDITION, title: 'Lookup credits exhausted' },
  PERMISSION_DENIED: { http: 403, grpc: GRPC.PERMISSION_DENIED, title: 'Forbidden' },
  NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND, title: 'Not found' },
  ROUTE_NOT_FOUND: { http: 404, grpc: GRPC.UNIMPLEMENTED, title: 'Not found' },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GRPC.UNIMPLEMENTED, title: 'Method not allowed' },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GRPC.INVALID_ARGUMENT, title: 'Payload too large' },
  URI_TOO_LONG: { http: 414, grpc: GRPC.INVALID_ARGUMENT, title: 'URI too long' },
  /** The request head (or whole request) did not arrive within the server's timeouts. */
  REQUEST_TIMEOUT: { http: 408, grpc: GRPC.DEADLINE_EXCEEDED, title: 'Request timeout' },
  HEADERS_TOO_LARGE: { http: 431, grpc: GRPC.INVALID_ARGUMENT, title: 'Request header fields too large' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GRPC.INVALID_ARGUMENT, title: 'Unsupported media type' },
  // Idempotency-Key (ingestion): a request under the key is still running (retry later), or the key
  // was used for other records or another feed (a client bug: never retry as is).
  IDEMPOTENCY_KEY_BUSY: { http: 409, grpc: GRPC.ABORTED, title: 'Idempotency key in use' },
  IDEMPOTENCY_KEY_REUSED: { http: 422, grpc: GRPC.FAILED_PRECONDITION, title: 'Idempotency key reused' },
  RATE_LIMITED: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED, title: 'Too many requests' },
  TOO_MANY_STREAMS: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED, title: 'Too many concurrent streams' },
  INTERNAL: { http: 500, grpc: GRPC.INTERNAL, title: 'Internal server error' },
  UNAVAILABLE: { http: 503, grpc: GRPC.UNAVAILABLE, title: 'Service unavailable' },
  // The disk under the data dir is full or below its reserve: retry once the operator freed space.
  INSUFFICIENT_STORAGE: { http: 507, grpc: GRPC.UNAVAILABLE, title: 'Insufficient storage' },
};

/** Field name → messages, as in a problem body's `errors` member. */
export type FieldErrors = Record<string, string[]>;

export interface AppErrorContext {
  /** Seconds; becomes `Retry-After` on HTTP and the `retry-after` trailer on gRPC. */
  retryAfter?: number;
  fields?: FieldErrors;
  headers?: Record<string, string | number>;
  /** Extra members of the problem body (snake_case), e.g. what part of an ingest request was stored. */
  members?: Record<string, string | number>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly context: AppErrorContext;

  constructor(code: ErrorCode, detail: string, context: AppErrorContext = {}) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.context = context;
  }

  static validation(fields: FieldErrors): AppError {
    const detail = Object.entries(fields)
      .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
      .join('. ');
    return new AppError('VALIDATION_ERROR', detail, { fields });
  }

  static field(field: string, message: string): AppError {
    return AppError.validation({ [field]: [message] });
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

const HIDDEN_DETAIL = 'The server failed to handle this request. It has been logged; retry later.';

/** The detail a client may see: 5xx texts never leak internals (UNAVAILABLE's says what to do). Both transports use it. */
export function publicDetail(e: AppError): string {
  return e.code === 'INTERNAL' ? HIDDEN_DETAIL : e.message;
}

/** Seconds a client is told to wait after a dependency fault (the disk, the embedded database). */
export const FAULT_RETRY_AFTER_S = 5;

// SQLite cannot grow its shared-memory index on a full disk: SQLITE_IOERR_SHMSIZE.
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE']);
const IO_FAULT = new Set(['EROFS', 'EIO', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY']);
const SQLITE_FAULT = /^SQLITE_(BUSY|LOCKED|IOERR|READONLY|CANTOPEN|PROTOCOL|NOMEM)/;
/**
 * What an engine holds, by the codes the distributed backends (storage/distributed/) give a fault of
 * it: Redis unreachable or not answering, NATS unreachable, too slow to acknowledge or refusing.
 */
export const engineOf = (code: string): string | undefined =>
  code === 'REDIS_UNAVAILABLE' ? 'shared state store' : code.startsWith('NATS_') ? 'feed log (NATS)' : undefined;
/**
 * A remote service a backend depends on (the S3 object store) refused, failed or did not answer within
 * the backend's bound. The backend throws it with `dependency` naming the service, never its address.
 */
export const DEPENDENCY_UNAVAILABLE = 'DEPENDENCY_UNAVAILABLE';

/**
 * A thrown error caused by a dependency rather than a bug (the disk is full or read-only, the embedded
 * database is locked or cannot write, a distributed engine is unreachable or does not answer) as a 503 (507 for a full disk) with Retry-After; undefined for
 * anything else, which stays a 500. Both transports and the CLI use it, so a fault reads the same
 * everywhere. The detail names the cause, never a path or a query.
 */
export function dependencyFault(err: unknown): AppError | undefined {
  if (err instanceof AppError || typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  const retryAfter = FAULT_RETRY_AFTER_S;
  if (DISK_FULL.has(code))
    return new AppError(
      'INSUFFICIENT_STORAGE',
      `The server's disk is full (${code}); nothing of this request was stored. Retry once space has been freed.`,
      { retryAfter },
    );
  if (IO_FAULT.has(code))
    return new AppError('UNAVAILABLE', `The server cannot use its storage right now (${code}). Retry later.`, { retryAfter });
  if (SQLITE_FAULT.test(code))
    return new AppError('UNAVAILABLE', `The server's database is unavailable right now (${code}). Retry later.`, { retryAfter });
  const engine = engineOf(code);
  if (engine) return new AppError('UNAVAILABLE', `The server's ${engine} is unavailable right now (${code}). Retry later.`, { retryAfter });
  if (code === DEPENDENCY_UNAVAILABLE) {
    const dependency = (err as { dependency?: unknown }).dependency;
    return new AppError(
      'UNAVAILABLE',
      `The server's ${typeof dependency === 'string' ? dependency : 'storage'} is unavailable right now. Retry later.`,
      {
        retryAfter,
      },
    );
  }
  return undefined;
}

/** Any thrown value as an AppError: itself, a dependency fault, or INTERNAL (a bug, detail hidden). */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return dependencyFault(err) ?? new AppError('INTERNAL', String((err as Error)?.message ?? err));
}

/** Integer seconds for Retry-After (HTTP header, gRPC trailer), at least 1. */
export const retryAfterSeconds = (e: AppError): number | undefined =>
  e.context.retryAfter === undefined ? undefined : Math.max(1, Math.ceil(e.context.retryAfter));
