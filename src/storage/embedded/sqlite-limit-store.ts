import type { BucketName, BucketRule } from '../../modules/ratelimit/buckets.ts';
import type { LimitStore } from '../../modules/ratelimit/limit-store.ts';
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

/** Rate-limit overrides in the embedded database (table `rate_limits`). */
export class SqliteLimitStore implements LimitStore {
  private readonly gate: SqliteGate;
  private readonly q;

  constructor(db: SqliteDb) {
    this.gate = sqliteGate(db);
    this.q = {
      limits: db.prepare<[string], { bucket: string; rate: number; burst: number }>(
        'SELECT bucket, rate, burst FROM rate_limits WHERE org_id = ?',
      ),
      upsert: db.prepare(
        'INSERT INTO rate_limits (org_id, bucket, rate, burst) VALUES (?, ?, ?, ?) ON CONFLICT (org_id, bucket) DO UPDATE SET rate = ' +
          'excluded.rate, burst = excluded.burst',
      ),
      remove: db.prepare('DELETE FROM rate_limits WHERE org_id = ? AND bucket = ?'),
    };
  }

  async getLimits(orgId: string): Promise<Partial<Record<BucketName, BucketRule>>> {
    const out: Partial<Record<BucketName, BucketRule>> = {};
    for (const r of await this.gate.run(() => this.q.limits.all(orgId))) out[r.bucket as BucketName] = { rate: r.rate, burst: r.burst };
    return out;
  }

  async setLimit(orgId: string, bucket: BucketName, rule: BucketRule | null): Promise<void> {
    await this.gate.run(() => (rule ? this.q.upsert.run(orgId, bucket, rule.rate, rule.burst) : this.q.remove.run(orgId, bucket)));
  }
}
