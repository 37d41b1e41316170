import type { Problem } from './types.js';

/** The `RateLimit-*` headers of an answer: the team's bucket for the operation. */
export interface RateLimit {
  /** Capacity of the bucket (`RateLimit-Limit`). */
  limit: number;
  /** Tokens left after this request (`RateLimit-Remaining`). */
  remaining: number;
  /** Seconds until the bucket is full again (`RateLimit-Reset`). */
  reset: number;
}

/** Every error the client throws is one of these. */
export class UmbraError extends Error {
  override name = 'UmbraError';
}

/** The service answered with a non-2xx status; `problem` is its `application/problem+json` body. */
export class UmbraApiError extends UmbraError {
  override name = 'UmbraApiError';
  readonly status: number;
  readonly problem: Problem;
  /** `Retry-After` in seconds, when the answer carried one (429, 503, a 404 during the daily rollup). */
  readonly retryAfter: number | undefined;
  readonly rateLimit: RateLimit | undefined;
  /** `X-Request-Id`: quote it to the operator. */
  readonly requestId: string | undefined;
  /** How many requests were made before giving up (1 when the status is not retried). */
  readonly attempts: number;

  constructor(status: number, problem: Problem, headers: Headers, attempts: number) {
    super(`${status} ${problem.title}: ${problem.detail}`);
    this.status = status;
    this.problem = problem;
    this.retryAfter = intHeader(headers, 'retry-after');
    this.rateLimit = rateLimitOf(headers);
    this.requestId = headers.get('x-request-id') ?? undefined;
    this.attempts = attempts;
  }
}

/** 400: a request field is invalid; `errors` maps each field to its messages. */
export class ValidationError extends UmbraApiError {
  override name = 'ValidationError';
  get errors(): Record<string, string[]> {
    return this.problem.errors ?? {};
  }
}
/** 401: the API key is missing or not valid. */
export class AuthenticationError extends UmbraApiError {
  override name = 'AuthenticationError';
}
/** 402: the team's lookup credits are exhausted (exports and streams keep working). Nothing was charged. */
export class InsufficientCreditsError extends UmbraApiError {
  override name = 'InsufficientCreditsError';
}
/** 403: the key is valid but lacks the operation's scope (or a download URL was refused). */
export class PermissionDeniedError extends UmbraApiError {
  override name = 'PermissionDeniedError';
}
/** 404: no such snapshot (during the daily rollup it carries `retryAfter`). */
export class NotFoundError extends UmbraApiError {
  override name = 'NotFoundError';
}
/** 429: the team's rate bucket or concurrent-stream allowance is used up, after every retry. */
export class RateLimitError extends UmbraApiError {
  override name = 'RateLimitError';
}
/** 5xx: the service or a backend failed, after every retry. */
export class ServerError extends UmbraApiError {
  override name = 'ServerError';
}

/** The request could not be sent or its answer not read (connection refused, reset, DNS). */
export class ConnectionError extends UmbraError {
  override name = 'ConnectionError';
  /** How many attempts were made. */
  readonly attempts: number;
  constructor(message: string, cause: unknown, attempts: number) {
    super(message, { cause });
    this.attempts = attempts;
  }
}

/** A downloaded snapshot does not match its metadata (size or SHA-256); the file was not kept. */
export class IntegrityError extends UmbraError {
  override name = 'IntegrityError';
  readonly expected: { size: number; sha256: string };
  readonly actual: { size: number; sha256: string };
  constructor(message: string, expected: { size: number; sha256: string }, actual: { size: number; sha256: string }) {
    super(message);
    this.expected = expected;
    this.actual = actual;
  }
}

/** The typed error of a non-2xx answer. */
export function apiError(status: number, problem: Problem, headers: Headers, attempts: number): UmbraApiError {
  const Kind =
    status === 400
      ? ValidationError
      : status === 401
        ? AuthenticationError
        : status === 402
          ? InsufficientCreditsError
          : status === 403
            ? PermissionDeniedError
            : status === 404
              ? NotFoundError
              : status === 429
                ? RateLimitError
                : status >= 500
                  ? ServerError
                  : UmbraApiError;
  return new Kind(status, problem, headers, attempts);
}

/** A problem body, or one made from the status when the answer was not one (a proxy's HTML page). */
export function problemOf(status: number, text: string, statusText: string): Problem {
  try {
    const p = JSON.parse(text) as Partial<Problem>;
    if (p && typeof p === 'object' && (typeof p.detail === 'string' || typeof p.title === 'string')) {
      const detail = p.detail ?? p.error ?? p.title ?? '';
      return {
        type: p.type ?? 'about:blank',
        title: p.title ?? statusText,
        status: p.status ?? status,
        detail,
        error: p.error ?? detail,
        ...(p.errors ? { errors: p.errors } : {}),
      };
    }
  } catch {
    // Not JSON: described below from the status line.
  }
  const detail = text.slice(0, 200) || statusText;
  return { type: 'about:blank', title: statusText || `HTTP ${status}`, status, detail, error: detail };
}

export function intHeader(headers: Headers, name: string): number | undefined {
  const v = headers.get(name);
  if (v === null || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v);
}

export function rateLimitOf(headers: Headers): RateLimit | undefined {
  const limit = intHeader(headers, 'ratelimit-limit');
  const remaining = intHeader(headers, 'ratelimit-remaining');
  const reset = intHeader(headers, 'ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, reset };
}
