// A bench prototype of a proposal, not product code: a node takes tokens from the shared (Redis) bucket
// a chunk at a time and spends them in memory, so most takes are decided without a round trip. Tokens
// are taken before they are spent, so the nodes together never admit more than the bucket allows;
// what they may do is refuse a little early: a node's unspent chunk is withheld from the others until
// it is spent or dropped (after holdMs). With chunk ≤ 10 % of the burst divided among the nodes, a
// team gets at least 90 % of its bucket across the cluster.
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
    if (h && !h.fetching && nowMs < h.untilMs && h.tokens >= cost) return this.spend(h, rule, cost);
    return this.fetch(key, rule, nowMs, cost);
  }

  private spend(h: Held, rule: BucketRule, cost: number): RateDecision {
    h.tokens -= cost;
    return bucketDecision(rule, h.sharedLeft + h.tokens, true, cost);
  }

  private async fetch(key: string, rule: BucketRule, nowMs: number, cost: number): Promise<RateDecision> {
    for (;;) {
      const h = this.held.get(key);
      if (h?.fetching) {
        await h.fetching;
        continue;
      }
      if (h && nowMs < h.untilMs && h.tokens >= cost) return this.spend(h, rule, cost);
      const chunk = Math.max(cost, Math.floor(this.o.chunk(rule)));
      const entry: Held = h ?? { tokens: 0, sharedLeft: 0, untilMs: 0 };
      this.held.set(key, entry);
      let done!: () => void;
      entry.fetching = new Promise<void>((r) => (done = r));
      try {
        // Leftover tokens of an expired hold are dropped (never given back: a refusal too early, never an admission too many).
        let got = chunk;
        let d = await this.shared.take(key, rule, nowMs, chunk);
        // A nearly empty bucket: take exactly what this request costs.
        if (!d.allowed && chunk > cost) {
          got = cost;
          d = await this.shared.take(key, rule, nowMs, cost);
        }
        if (!d.allowed) return d;
        entry.tokens = got - cost;
        entry.sharedLeft = d.remaining;
        entry.untilMs = nowMs + this.o.holdMs;
        return bucketDecision(rule, entry.sharedLeft + entry.tokens, true, cost);
      } finally {
        entry.fetching = undefined;
        done();
      }
    }
  }
}
