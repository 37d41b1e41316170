import type { MaybePromise } from '../../lib/maybe-promise.ts';
import type { BucketRule } from './buckets.ts';

/** What a rate-limited response tells the client (RateLimit-* headers and Retry-After). */
export interface RateDecision {
  allowed: boolean;
  /** Bucket capacity (RateLimit-Limit). */
  limit: number;
  /** Whole tokens left after this request (RateLimit-Remaining). */
  remaining: number;
  /** Whole seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Whole seconds until a denied request would pass; 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * Token buckets. take() is the only way a bucket changes, and it is atomic per key. In-process
 * backends answer synchronously; networked ones return a promise.
 */
export interface RateLimiter {
  take(key: string, rule: BucketRule, nowMs: number, cost?: number): MaybePromise<RateDecision>;
}
