import type { Clock } from '../../lib/clock.ts';
import type { AccountStore } from '../accounts/account-store.ts';
import { DEFAULT_BUCKETS, type BucketName, type BucketRule } from './buckets.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';

/**
 * Applies each team's bucket rules: service.md's defaults unless the operator set an override.
 * Overrides are re-read at most every refreshMs, so `umbra admin limits set` takes effect within it.
 */
export class LimitPolicy {
  private readonly rules = new Map<string, { rules: Partial<Record<BucketName, BucketRule>>; until: number }>();

  constructor(
    private readonly store: AccountStore,
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly refreshMs: number,
  ) {}

  async rule(orgId: string, bucket: BucketName): Promise<BucketRule> {
    const now = this.clock.now();
    let entry = this.rules.get(orgId);
    if (!entry || entry.until <= now) {
      entry = { rules: await this.store.getLimits(orgId), until: now + this.refreshMs };
      this.rules.set(orgId, entry);
    }
    return entry.rules[bucket] ?? DEFAULT_BUCKETS[bucket];
  }

  /** Takes one token from the team's bucket. Keys of one team share it. */
  async take(orgId: string, bucket: BucketName): Promise<RateDecision> {
    const rule = await this.rule(orgId, bucket);
    return this.limiter.take(`${orgId}:${bucket}`, rule, this.clock.now());
  }

  invalidate(): void {
    this.rules.clear();
  }
}
