import type { BucketRule } from '../../modules/ratelimit/buckets.ts';
import type { RateDecision, RateLimiter } from '../../modules/ratelimit/rate-limiter.ts';
import { takeToken, type BucketState } from '../../modules/ratelimit/token-bucket.ts';

/**
 * In-process token buckets for the one-process embedded mode. Buckets that have refilled completely
 * carry no information, so a periodic sweep drops them and memory stays bounded by active teams.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, BucketState & { fullAtMs: number }>();
  private lastSweepMs = 0;

  /** Synchronous: the embedded mode's hot path takes no promise. The bucket is updated in place. */
  take(key: string, rule: BucketRule, nowMs: number, cost = 1): RateDecision {
    const bucket = this.buckets.get(key);
    const { state, decision } = takeToken(bucket, rule, nowMs, cost);
    const fullAtMs = nowMs + decision.resetSeconds * 1000;
    if (bucket) {
      bucket.tokens = state.tokens;
      bucket.updatedMs = state.updatedMs;
      bucket.fullAtMs = fullAtMs;
    } else {
      this.buckets.set(key, { tokens: state.tokens, updatedMs: state.updatedMs, fullAtMs });
    }
    if (nowMs - this.lastSweepMs > 60_000) this.sweep(nowMs);
    return decision;
  }

  private sweep(nowMs: number): void {
    this.lastSweepMs = nowMs;
    for (const [key, s] of this.buckets) if (s.fullAtMs <= nowMs) this.buckets.delete(key);
  }
}
