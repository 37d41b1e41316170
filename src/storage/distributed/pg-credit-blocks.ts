import type { BlockReport, BlockState, CreditBlocks } from '../../modules/credits/credit-blocks.ts';
import type { CreditBalance, CreditPlan } from '../../modules/credits/credit-ledger.ts';
import type { PgPool } from './pg-pool.ts';

/**
 * Block reservations on PostgreSQL: each step is one call of a function the migration installs
 * (`umbra_credit_reserve`, `umbra_credit_reclaim`, `umbra_credit_set`), so it is one round trip and one
 * transaction that locks the team's account row first.
 */
export class PgCreditBlocks implements CreditBlocks {
  constructor(private readonly pool: PgPool) {}

  async reserve(r: BlockReport & { want: number; leaseUntilSec: number }): Promise<BlockState | undefined> {
    const { rows } = await this.pool.query<{ block_left: string; team_credits: string; period_end: string }>(
      'SELECT block_left, team_credits, period_end FROM umbra_credit_reserve($1, $2, $3, $4, $5, $6, $7, false)',
      [r.nodeId, r.orgId, r.spent, r.spentPeriodEnd, r.want, r.nowSec, r.leaseUntilSec],
    );
    const row = rows[0];
    return row && { left: Number(row.block_left), teamCredits: Number(row.team_credits), periodEnd: Number(row.period_end) };
  }

  async release(r: BlockReport): Promise<void> {
    await this.pool.query('SELECT 1 FROM umbra_credit_reserve($1, $2, $3, $4, 0, $5, 0, true)', [
      r.nodeId,
      r.orgId,
      r.spent,
      r.spentPeriodEnd,
      r.nowSec,
    ]);
  }

  async reclaimExpired(nowSec: number): Promise<number> {
    const { rows } = await this.pool.query<{ back: string }>('SELECT umbra_credit_reclaim($1) AS back', [nowSec]);
    return Number(rows[0]?.back ?? 0);
  }

  async view(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined> {
    const { rows } = await this.pool.query<{
      balance: string;
      period_end: string;
      allotment: string;
      period_seconds: string;
      out: string;
    }>(
      `SELECT a.balance, a.period_end, a.allotment, a.period_seconds,
              COALESCE((SELECT sum(b.reserved - b.used) FROM credit_blocks b
                        WHERE b.org_id = a.org_id AND b.period_end = a.period_end AND b.lease_until > $2), 0) AS out
         FROM credit_accounts a WHERE a.org_id = $1`,
      [orgId, nowSec],
    );
    const row = rows[0];
    if (!row) return undefined;
    const periodSeconds = Number(row.period_seconds);
    const periodEnd = Number(row.period_end);
    const allotment = Number(row.allotment);
    // A period that has ended reads as refilled, as every ledger's get does; the next write applies it.
    if (nowSec >= periodEnd) {
      const next = periodEnd + (Math.floor((nowSec - periodEnd) / periodSeconds) + 1) * periodSeconds;
      return { balance: allotment, resetsAt: next, allotment, periodSeconds };
    }
    return { balance: Number(row.balance) + Number(row.out), resetsAt: periodEnd, allotment, periodSeconds };
  }

  async set(orgId: string, total: number, nowSec: number): Promise<CreditBalance> {
    const { rows } = await this.pool.query<{ balance: string; period_end: string }>(
      'SELECT balance, period_end FROM umbra_credit_set($1, $2, $3)',
      [orgId, total, nowSec],
    );
    const row = rows[0];
    return row ? { balance: Number(row.balance), resetsAt: Number(row.period_end) } : { balance: 0, resetsAt: nowSec };
  }
}
