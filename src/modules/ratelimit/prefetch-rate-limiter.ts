import type { MaybePromise } from '../../lib/maybe-promise.ts';
import type { BucketRule } from './buckets.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';
import { bucketDecision } from './token-bucket.ts';

export interface PrefetchOptions {
  /** A chunk is this fraction of the bucket's burst (at least the request's cost). */
  chunkFraction: number;
  /** Tokens held longer than this (ms) unspent are dropped, never given back. */
  holdMs: number;
}

interface Held {
  /** Tokens taken from the shared bucket and not yet spent here. */
  tokens: number;
  /** What the shared bucket had left after the take that brought them (for RateLimit-Remaining). */
  sharedLeft: number;
  untilMs: number;
  /** The shared bucket refused: it is taken to be empty until then, and requests are refused here. */
  emptyUntilMs: number;
  /** What it had left when it refused, and when (the refusals made here count the refill since). */
  emptyLeft: number;
  emptyAtMs: number;
  fetching?: Promise<void>;
}

export class PrefetchRateLimiter implements RateLimiter {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly shared: RateLimiter,
    private readonly o: PrefetchOptions,
  ) {}

  take(key: string, rule: BucketRule, nowMs: number, cost = 1): MaybePromise<RateDecision> {
    const chunk = this.chunkOf(rule, cost);
    // A bucket too small for chunks (a burst under 1/chunkFraction) is decided take by take.
    if (chunk <= cost) return this.shared.take(key, rule, nowMs, cost);
    const h = this.held.get(key);
    if (h && nowMs < h.untilMs && h.tokens >= cost) {
      h.tokens -= cost;
      if (!h.fetching && h.tokens <= chunk / 4 && nowMs >= h.emptyUntilMs) {
        h.fetching = this.refill(h, key, rule, nowMs, chunk);
        // A failed background refill: the next request that needs tokens tries again, and answers 503.
        h.fetching.catch(() => {});
      }
      return bucketDecision(rule, h.sharedLeft + h.tokens, true, cost);
    }
    if (h && nowMs < h.emptyUntilMs && this.estimate(h, rule, nowMs) < cost) return this.refusedHere(h, rule, nowMs, cost);
    return this.slow(key, rule, nowMs, cost, chunk);
  }

  private chunkOf(rule: BucketRule, cost: number): number {
    return Math.max(cost, Math.floor(rule.burst * this.o.chunkFraction));
  }

  /** What the shared bucket holds now, as far as this node knows: what it had when short, plus the refill since. */
  private estimate(h: Held, rule: BucketRule, nowMs: number): number {
    return h.emptyLeft + (Math.max(0, nowMs - h.emptyAtMs) / 1000) * rule.rate;
  }

  /** A refusal decided here while the shared bucket is known to be short. */
  private refusedHere(h: Held, rule: BucketRule, nowMs: number, cost: number): RateDecision {
    return bucketDecision(rule, Math.min(this.estimate(h, rule, nowMs), cost - 1e-6), false, cost);
  }

  /**
   * The shared bucket refused `want` tokens with `left` whole ones left: it is taken to be short until
   * it would hold a chunk again, so that a node under a flood asks it about rate/chunk times a second
   * rather than once per request.
   */
  private noteShort(h: Held, rule: BucketRule, nowMs: number, left: number, chunk: number): void {
    h.emptyLeft = left;
    h.emptyAtMs = nowMs;
    h.emptyUntilMs = nowMs + Math.max(1, ((chunk - left) / rule.rate) * 1000);
  }

  /** Takes a chunk from the shared bucket and adds it to what this node holds; rejects as the shared take does. */
  private refill(h: Held, key: string, rule: BucketRule, nowMs: number, chunk: number): Promise<void> {
    return Promise.resolve(this.shared.take(key, rule, nowMs, chunk))
      .then((d) => {
        if (!d.allowed) {
          this.noteShort(h, rule, nowMs, d.remaining, chunk);
          return;
        }
        if (nowMs >= h.untilMs) h.tokens = 0; // an expired hold is dropped, never given back
        h.tokens += chunk;
        h.sharedLeft = d.remaining;
        h.untilMs = nowMs + this.o.holdMs;
      })
      .finally(() => {
        h.fetching = undefined;
      });
  }

  private async slow(key: string, rule: BucketRule, nowMs: number, cost: number, chunk: number): Promise<RateDecision> {
    let h = this.held.get(key);
    if (!h) this.held.set(key, (h = { tokens: 0, sharedLeft: 0, untilMs: 0, emptyUntilMs: 0, emptyLeft: 0, emptyAtMs: 0 }));
    for (;;) {
      if (nowMs < h.untilMs && h.tokens >= cost) {
        h.tokens -= cost;
        return bucketDecision(rule, h.sharedLeft + h.tokens, true, cost);
      }
      if (h.fetching) {
        await h.fetching;
        continue;
      }
      if (nowMs >= h.emptyUntilMs) {
        h.fetching = this.refill(h, key, rule, nowMs, chunk);
        await h.fetching;
        if (nowMs >= h.emptyUntilMs) continue;
      }
      // Short of a chunk: when the shared bucket still has this request's cost, it decides exactly.
      if (this.estimate(h, rule, nowMs) < cost) return this.refusedHere(h, rule, nowMs, cost);
      const d = await this.shared.take(key, rule, nowMs, cost);
      this.noteShort(h, rule, nowMs, d.remaining, chunk);
      return d;
    }
  }
}
