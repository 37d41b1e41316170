/** Time as the client sees it; tests inject one that records the waits instead of sleeping. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** The service's client recipe. */
export interface RetryOptions {
  /** Attempts in all, the first included: 5 to 8 (default 6). */
  maxAttempts?: number;
  /** First delay (default 1,000 ms), doubled per failure. */
  baseDelayMs?: number;
  /** Longest computed delay (default 60,000 ms). */
  maxDelayMs?: number;
  /** Plus or minus this share of the delay, drawn from `random` (default 0.25). */
  jitter?: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: number;
}

export function retryPolicy(o: RetryOptions | false | undefined): RetryPolicy {
  if (o === false) return { maxAttempts: 1, baseDelayMs: 1000, maxDelayMs: 60_000, jitter: 0.25 };
  const p = { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 60_000, jitter: 0.25, ...o };
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 5 || p.maxAttempts > 8)
    throw new RangeError(`retry.maxAttempts must be an integer from 5 to 8 (or retry: false), not ${p.maxAttempts}`);
  if (!(p.baseDelayMs > 0 && p.maxDelayMs >= p.baseDelayMs))
    throw new RangeError('retry delays must be positive, maxDelayMs >= baseDelayMs');
  if (!(p.jitter >= 0 && p.jitter < 1)) throw new RangeError('retry.jitter must be in [0, 1)');
  return p;
}

/** Statuses that heal by waiting: rate limits and server-side failures. No other 4xx is retried. */
export const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

/**
 * The wait before attempt `failures + 1`: base doubling per failure, capped, with jitter; a
 * `Retry-After` from the server replaces the computed delay, since the server knows when a token frees.
 */
export function backoffDelay(p: RetryPolicy, failures: number, random: () => number, retryAfterS?: number): number {
  if (retryAfterS !== undefined) return retryAfterS * 1000;
  const raw = Math.min(p.baseDelayMs * 2 ** (failures - 1), p.maxDelayMs);
  return Math.round(raw * (1 + p.jitter * (2 * random() - 1)));
}
