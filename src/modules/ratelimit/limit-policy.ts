import type { Clock } from '../../lib/clock.ts';
import { isAppError } from '../../errors.ts';
import { BackgroundOnce } from '../../lib/background-once.ts';
import type { MaybePromise } from '../../lib/maybe-promise.ts';
import type { LimitStore } from './limit-store.ts';
import { DEFAULT_BUCKETS, type BucketName, type BucketRule } from './buckets.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';

interface TeamRules {
  rules: Partial<Record<BucketName, BucketRule>>;
  /** Limiter keys `orgId:bucket`, built once: a fresh string per request would be hashed per request. */
  keys: Partial<Record<BucketName, string>>;
  until: number;
}

/**
 * Applies each team's bucket rules: the contract's defaults (docs/contract.md) unless the operator set an override.
 * Overrides are re-read at most every refreshMs, so `umbra admin limits set` takes effect within it.
 */
export class LimitPolicy {
  private readonly rules = new Map<string, TeamRules>();
  /** Set while the store fails as unavailable: known teams keep their last rules meanwhile. */
  private storeFailing = false;
  private readonly refreshing = new BackgroundOnce<string>();

  constructor(
    private readonly store: LimitStore,
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly refreshMs: number,
  ) {}

  async rule(orgId: string, bucket: BucketName): Promise<BucketRule> {
    const team = this.fresh(orgId, this.clock.now()) ?? (await this.load(orgId));
    return team.rules[bucket] ?? DEFAULT_BUCKETS[bucket];
  }

  /**
   * Takes one token from the team's bucket. Keys of one team share it. Synchronous while the team's
   * rules are fresh and the limiter answers in process, which is every request but one per refreshMs.
   */
  take(orgId: string, bucket: BucketName): MaybePromise<RateDecision> {
    // One clock read for the cached rules and the bucket (a clock read is a fair part of an admission).
    const now = this.clock.now();
    const team = this.fresh(orgId, now);
    return team ? this.takeFrom(team, orgId, bucket, now) : this.load(orgId).then((t) => this.takeFrom(t, orgId, bucket, this.clock.now()));
  }

  invalidate(): void {
    this.rules.clear();
  }

  private takeFrom(team: TeamRules, orgId: string, bucket: BucketName, now: number): MaybePromise<RateDecision> {
    const key = (team.keys[bucket] ??= `${orgId}:${bucket}`);
    return this.limiter.take(key, team.rules[bucket] ?? DEFAULT_BUCKETS[bucket], now);
  }

  private fresh(orgId: string, now: number): TeamRules | undefined {
    const team = this.rules.get(orgId);
    if (team === undefined) return undefined;
    if (team.until > now) return team;
    // The store is failing: a known team keeps its last rules (read again in the background) rather
    // than wait on the store for every request.
    if (this.storeFailing) {
      this.refreshing.start(orgId, () => this.load(orgId));
      return team;
    }
    return undefined;
  }

  private async load(orgId: string): Promise<TeamRules> {
    let rules: Partial<Record<BucketName, BucketRule>>;
    try {
      rules = await this.store.getLimits(orgId);
      this.storeFailing = false;
    } catch (e) {
      if (!(isAppError(e) && e.code === 'UNAVAILABLE')) throw e;
      this.storeFailing = true;
      const last = this.rules.get(orgId);
      if (last) return last;
      throw e;
    }
    const team: TeamRules = { rules, keys: {}, until: this.clock.now() + this.refreshMs };
    this.rules.set(orgId, team);
    return team;
  }
}
