/** The rate buckets of the contract (docs/contract.md#rate-limits-token-buckets-per-team). Rates are tokens per second; each request takes one token. */
export const BUCKETS = ['lookup', 'domain', 'account', 'stream', 'export', 'download'] as const;
export type BucketName = (typeof BUCKETS)[number];

export interface BucketRule {
  /** Sustained refill rate, tokens per second. */
  rate: number;
  /** Bucket capacity: the burst a full bucket allows. */
  burst: number;
}

export const DEFAULT_BUCKETS: Record<BucketName, BucketRule> = {
  lookup: { rate: 100, burst: 200 },
  domain: { rate: 100, burst: 200 },
  account: { rate: 10, burst: 10 },
  // Streams and exports are shared by all eight feeds of a team.
  stream: { rate: 0.5, burst: 20 },
  export: { rate: 2, burst: 60 },
  download: { rate: 0.1, burst: 120 },
};

export const isBucketName = (s: string): s is BucketName => (BUCKETS as readonly string[]).includes(s);
