// A bench prototype of a proposal, not product code: a node takes tokens from the shared (Redis) bucket
// a chunk at a time and spends them in memory, taking the next chunk in the background once a quarter
// of the last is left, so a request waits for Redis only when its node's tokens ran out. Tokens are
// taken before they are spent, so the nodes together never admit more than the bucket allows; what
// they may do is refuse a little early: tokens a node holds (at most 1.25 chunks) are withheld from the
// others until spent or dropped (after holdMs). Chunks of 8 % of the burst divided among the nodes keep
// what all nodes hold within 10 % of the bucket, so a team always gets at least 90 % of its limit.
import type { MaybePromise } from '../../src/lib/maybe-promise.ts';
import type { BucketRule } from '../../src/modules/ratelimit/buckets.ts';
import type { RateDecision, RateLimiter } from '../../src/modules/ratelimit/rate-limiter.ts';
import { bucketDecision } from '../../src/modules/ratelimit/token-bucket.ts';

interface Held {
  /** Tokens taken from the shared bucket and not yet spent here. */
  tokens: number;
  /** What the shared bucket had left after the take that brought them (for RateLimit-Remaining). */
  sharedLeft: number;
  untilMs: number;
  /** The shared bucket refused the last chunk: take exact costs until it has tokens again. */
  scarce: boolean;
  fetching?: Promise<void>;
}

export class PrefetchRateLimiter implements RateLimiter {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly shared: RateLimiter,
    private readonly o: { chunk: (rule: BucketRule) => number; holdMs: number },
  ) {}

  take(key: string, rule: BucketRule, nowMs: number, cost = 1): MaybePromise<RateDecision> {
    const h = this.held.get(key);
    if (h && nowMs < h.untilMs && h.tokens >= cost) {
      h.tokens -= cost;
      const chunk = this.chunkOf(rule, cost);
      if (!h.fetching && !h.scarce && h.tokens <= chunk / 4) {
        h.fetching = this.refill(h, key, rule, nowMs, chunk);
        h.fetching.catch(() => {}); // a failed refill: the next request that needs tokens tries again
      }
      return bucketDecision(rule, h.sharedLeft + h.tokens, true, cost);
    }
    return this.slow(key, rule, nowMs, cost);
  }

  private chunkOf(rule: BucketRule, cost: number): number {
    return Math.max(cost, Math.floor(this.o.chunk(rule)));
  }

  /** Takes a chunk from the shared bucket and adds it to what this node holds; rejects as the shared take does. */
  private refill(h: Held, key: string, rule: BucketRule, nowMs: number, chunk: number): Promise<void> {
    return Promise.resolve(this.shared.take(key, rule, nowMs, chunk))
      .then((d) => {
        if (!d.allowed) {
          h.scarce = true;
          return;
        }
        if (nowMs >= h.untilMs) h.tokens = 0; // an expired hold is dropped, never given back
        h.tokens += chunk;
        h.sharedLeft = d.remaining;
        h.untilMs = nowMs + this.o.holdMs;
        h.scarce = false;
      })
      .finally(() => (h.fetching = undefined));
  }

  private async slow(key: string, rule: BucketRule, nowMs: number, cost: number): Promise<RateDecision> {
    let h = this.held.get(key);
    if (!h) this.held.set(key, (h = { tokens: 0, sharedLeft: 0, untilMs: 0, scarce: false }));
    for (;;) {
      if (nowMs < h.untilMs && h.tokens >= cost) {
        h.tokens -= cost;
        return bucketDecision(rule, h.sharedLeft + h.tokens, true, cost);
      }
      if (h.fetching) {
        await h.fetching;
        continue;
      }
      if (!h.scarce) {
        h.fetching = this.refill(h, key, rule, nowMs, this.chunkOf(rule, cost));
        await h.fetching;
        if (!h.scarce) continue;
      }
      // A nearly empty bucket: exactly what this request costs, decided by the shared bucket.
      const d = await this.shared.take(key, rule, nowMs, cost);
      if (d.allowed) h.scarce = false;
      return d;
    }
  }
}
