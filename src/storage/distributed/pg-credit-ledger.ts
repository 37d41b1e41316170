import {
  nextPeriodEnd,
  type CreditBalance,
  type CreditLedger,
  type CreditPlan,
  type DebitResult,
} from '../../modules/credits/credit-ledger.ts';
import type { PgPool } from './pg-pool.ts';

interface Row {
  balance: number;
  period_end: number;
}

// $1 is the team, $2 now (Unix seconds). A due refill, as SQL: once the period has ended the effective
// balance is the allotment, and the period end moves to the first end after now (nextPeriodEnd).
const EFFECTIVE = 'CASE WHEN $2 >= period_end THEN allotment ELSE balance END';
const NEXT_END =
  'CASE WHEN $2 >= period_end THEN period_end + (($2 - period_end) / period_seconds + 1) * period_seconds ELSE period_end END';

/**
 * Credits in PostgreSQL (table credit_accounts). Every change is one statement, so it is atomic on its
 * own: a debit's condition is checked on the row it updates, after waiting for any concurrent change
 * of that row, so concurrent debits from every node can never overdraw.
 */
export class PgCreditLedger implements CreditLedger {
  constructor(private readonly db: PgPool) {}

  async open(orgId: string, plan: CreditPlan, nowSec: number): Promise<void> {
    // An account that exists already is kept as it is (opening twice is no error).
    await this.db.query(
      `INSERT INTO credit_accounts (org_id, balance, allotment, period_seconds, period_end) VALUES ($1, $2, $2, $3, $4)
       ON CONFLICT (org_id) DO NOTHING`,
      [orgId, plan.allotment, plan.periodSeconds, nowSec + plan.periodSeconds],
    );
  }

  async debit(orgId: string, cost: number, nowSec: number): Promise<DebitResult> {
    // Refill if due, then charge only when the balance covers the whole cost.
    const { rows } = await this.db.query<Row>(
      `UPDATE credit_accounts SET balance = ${EFFECTIVE} - $3, period_end = ${NEXT_END}
        WHERE org_id = $1 AND ${EFFECTIVE} >= $3 RETURNING balance, period_end`,
      [orgId, nowSec, cost],
    );
    const r = rows[0];
    if (r) return { ok: true, balance: r.balance, resetsAt: r.period_end };
    // Refused: the balance as it stands now. Read by a statement of its own, which sees the debits that
    // committed while this one waited for the row (a read in the same statement would not).
    const current = await this.get(orgId, nowSec);
    return { ok: false, balance: current?.balance ?? 0, resetsAt: current?.resetsAt ?? nowSec };
  }

  async consume(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    return this.write(`balance = GREATEST(0, ${EFFECTIVE} - $3)`, orgId, nowSec, amount);
  }

  async refund(orgId: string, amount: number): Promise<void> {
    const r = await this.db.query('UPDATE credit_accounts SET balance = balance + $2 WHERE org_id = $1', [orgId, amount]);
    if (r.rowCount !== 1) throw new Error(`no credit account for team ${orgId}: ${amount} credits not refunded`);
  }

  async get(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined> {
    const { rows } = await this.db.query<Row & { allotment: number; period_seconds: number }>(
      'SELECT balance, allotment, period_seconds, period_end FROM credit_accounts WHERE org_id = $1',
      [orgId],
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      balance: nowSec >= r.period_end ? r.allotment : r.balance,
      resetsAt: nextPeriodEnd(r.period_end, r.period_seconds, nowSec),
      allotment: r.allotment,
      periodSeconds: r.period_seconds,
    };
  }

  async set(orgId: string, balance: number, nowSec: number): Promise<CreditBalance> {
    return this.write('balance = $3', orgId, nowSec, balance);
  }

  async add(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    return this.write(`balance = ${EFFECTIVE} + $3`, orgId, nowSec, amount);
  }

  async setPlan(orgId: string, plan: Partial<CreditPlan>): Promise<void> {
    const r = await this.db.query(
      'UPDATE credit_accounts SET allotment = COALESCE($2, allotment), period_seconds = COALESCE($3, period_seconds) WHERE org_id = $1',
      [orgId, plan.allotment ?? null, plan.periodSeconds ?? null],
    );
    if (r.rowCount !== 1) throw new Error(`no credit account for team ${orgId}`);
  }

  /** One UPDATE setting the balance as `assign` says and moving a due period end; $3 is the value. */
  private async write(assign: string, orgId: string, nowSec: number, value: number): Promise<CreditBalance> {
    const { rows } = await this.db.query<Row>(
      `UPDATE credit_accounts SET ${assign}, period_end = ${NEXT_END} WHERE org_id = $1 RETURNING balance, period_end`,
      [orgId, nowSec, value],
    );
    const r = rows[0];
    if (!r) throw new Error(`no credit account for team ${orgId}`);
    return { balance: r.balance, resetsAt: r.period_end };
  }
}
