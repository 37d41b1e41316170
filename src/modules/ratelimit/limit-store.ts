import type { BucketName, BucketRule } from './buckets.ts';

/**
 * Per-team overrides of the rate buckets (`umbra admin limits`): a team without one uses the default
 * rule of each bucket. Written by operators, read by every node's LimitPolicy.
 */
export interface LimitStore {
  /** The team's overrides, by bucket; empty when it has none. */
  getLimits(orgId: string): Promise<Partial<Record<BucketName, BucketRule>>>;
  /** Sets (rule) or removes (null) one bucket's override. */
  setLimit(orgId: string, bucket: BucketName, rule: BucketRule | null): Promise<void>;
}
