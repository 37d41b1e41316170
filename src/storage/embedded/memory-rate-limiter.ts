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

  async take(key: string, rule: BucketRule, nowMs: number, cost = 1): Promise<RateDecision> {
    const { state, decision } = takeToken(this.buckets.get(key), rule, nowMs, cost);
    this.buckets.set(key, { ...state, fullAtMs: nowMs + decision.resetSeconds * 1000 });
    if (nowMs - this.lastSweepMs > 60_000) this.sweep(nowMs);
    return decision;
  }

  private sweep(nowMs: number): void {
    this.lastSweepMs = nowMs;
    for (const [key, s] of this.buckets) if (s.fullAtMs <= nowMs) this.buckets.delete(key);
  }
}
