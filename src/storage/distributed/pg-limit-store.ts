import type { BucketName, BucketRule } from '../../modules/ratelimit/buckets.ts';
import type { LimitStore } from '../../modules/ratelimit/limit-store.ts';
import type { PgPool } from './pg-pool.ts';

/** Rate-limit overrides in PostgreSQL (table rate_limits), read by every node's LimitPolicy. */
export class PgLimitStore implements LimitStore {
  constructor(private readonly db: PgPool) {}

  async getLimits(orgId: string): Promise<Partial<Record<BucketName, BucketRule>>> {
    const { rows } = await this.db.query<{ bucket: string; rate: number; burst: number }>(
      'SELECT bucket, rate, burst FROM rate_limits WHERE org_id = $1',
      [orgId],
    );
    const out: Partial<Record<BucketName, BucketRule>> = {};
    for (const r of rows) out[r.bucket as BucketName] = { rate: r.rate, burst: r.burst };
    return out;
  }

  async setLimit(orgId: string, bucket: BucketName, rule: BucketRule | null): Promise<void> {
    if (rule === null) {
      // Removing an override the team does not have is no error: the outcome is the same.
      await this.db.query('DELETE FROM rate_limits WHERE org_id = $1 AND bucket = $2', [orgId, bucket]);
      return;
    }
    const r = await this.db.query(
      `INSERT INTO rate_limits (org_id, bucket, rate, burst) VALUES ($1, $2, $3, $4)
       ON CONFLICT (org_id, bucket) DO UPDATE SET rate = excluded.rate, burst = excluded.burst`,
      [orgId, bucket, rule.rate, rule.burst],
    );
    if (r.rowCount !== 1) throw new Error(`the rate limit override of team ${orgId} was not written`);
  }
}
