import {
  nextPeriodEnd,
  type CreditBalance,
  type CreditLedger,
  type CreditPlan,
  type DebitResult,
} from '../../modules/credits/credit-ledger.ts';
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

interface Row {
  balance: number;
  allotment: number;
  period_s: number;
  period_end: number;
}

/** A due refill, as SQL: the effective balance when the period has ended is the allotment. */
const EFFECTIVE = 'CASE WHEN @now >= period_end THEN allotment ELSE balance END';
const NEXT_END =
  'CASE WHEN @now >= period_end THEN period_end + (CAST((@now - period_end) / period_s AS INTEGER) + 1) * period_s ELSE period_end END';

/**
 * Credits in the embedded database. Every write runs in its own transaction and reads its RETURNING
 * rows to the end: a bare `.get()` of an UPDATE … RETURNING hands back the new row even when SQLite
 * then fails to commit it (a full disk), and the change is silently gone. Here a failed commit throws.
 */
export class SqliteCreditLedger implements CreditLedger {
  private readonly q;
  private readonly gate: SqliteGate;
  private readonly tx: <T>(fn: () => T) => Promise<T>;

  constructor(db: SqliteDb) {
    this.gate = sqliteGate(db);
    // IMMEDIATE: the write lock is taken at BEGIN, so a busy database fails before any work is done.
    this.tx = <T>(fn: () => T) => this.gate.run(() => db.transaction(fn).immediate());
    this.q = {
      open: db.prepare(
        'INSERT INTO credit_accounts (org_id, balance, allotment, period_s, period_end) VALUES (@org, @allotment, @allotment, @period, ' +
          '@end) ON CONFLICT DO NOTHING',
      ),
      // One statement: refill if due, then charge only when the balance covers the whole cost.
      debit: db.prepare<Record<string, string | number>, { balance: number; period_end: number }>(
        `UPDATE credit_accounts SET balance = ${EFFECTIVE} - @cost, period_end = ${NEXT_END}
         WHERE org_id = @org AND ${EFFECTIVE} >= @cost RETURNING balance, period_end`,
      ),
      consume: db.prepare<Record<string, string | number>, { balance: number; period_end: number }>(
        `UPDATE credit_accounts SET balance = MAX(0, ${EFFECTIVE} - @value), period_end = ${NEXT_END} WHERE org_id = @org RETURNING ` +
          `balance, period_end`,
      ),
      refund: db.prepare('UPDATE credit_accounts SET balance = balance + ? WHERE org_id = ?'),
      get: db.prepare<[string], Row>('SELECT balance, allotment, period_s, period_end FROM credit_accounts WHERE org_id = ?'),
      set: db.prepare<Record<string, string | number>, { balance: number; period_end: number }>(
        `UPDATE credit_accounts SET balance = @value, period_end = ${NEXT_END} WHERE org_id = @org RETURNING balance, period_end`,
      ),
      add: db.prepare<Record<string, string | number>, { balance: number; period_end: number }>(
        `UPDATE credit_accounts SET balance = ${EFFECTIVE} + @value, period_end = ${NEXT_END} WHERE org_id = @org RETURNING balance, ` +
          `period_end`,
      ),
      setAllotment: db.prepare('UPDATE credit_accounts SET allotment = ? WHERE org_id = ?'),
      setPeriod: db.prepare('UPDATE credit_accounts SET period_s = ? WHERE org_id = ?'),
    };
  }

  async open(orgId: string, plan: CreditPlan, nowSec: number): Promise<void> {
    await this.tx(() =>
      this.q.open.run({ org: orgId, allotment: plan.allotment, period: plan.periodSeconds, end: nowSec + plan.periodSeconds }),
    );
  }

  async debit(orgId: string, cost: number, nowSec: number): Promise<DebitResult> {
    const [row] = await this.tx(() => this.q.debit.all({ org: orgId, cost, now: nowSec }));
    if (row) return { ok: true, balance: row.balance, resetsAt: row.period_end };
    const current = await this.get(orgId, nowSec);
    return { ok: false, balance: current?.balance ?? 0, resetsAt: current?.resetsAt ?? nowSec };
  }

  async consume(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    return this.write(this.q.consume, orgId, amount, nowSec);
  }

  async refund(orgId: string, amount: number): Promise<void> {
    await this.tx(() => this.q.refund.run(amount, orgId));
  }

  async get(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined> {
    const r = await this.gate.run(() => this.q.get.get(orgId));
    if (!r) return undefined;
    const due = nowSec >= r.period_end;
    return {
      balance: due ? r.allotment : r.balance,
      resetsAt: nextPeriodEnd(r.period_end, r.period_s, nowSec),
      allotment: r.allotment,
      periodSeconds: r.period_s,
    };
  }

  async set(orgId: string, balance: number, nowSec: number): Promise<CreditBalance> {
    return this.write(this.q.set, orgId, balance, nowSec);
  }

  async add(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    return this.write(this.q.add, orgId, amount, nowSec);
  }

  async setPlan(orgId: string, plan: Partial<CreditPlan>): Promise<void> {
    await this.tx(() => {
      if (plan.allotment !== undefined) this.q.setAllotment.run(plan.allotment, orgId);
      if (plan.periodSeconds !== undefined) this.q.setPeriod.run(plan.periodSeconds, orgId);
    });
  }

  private async write(stmt: typeof this.q.set, orgId: string, value: number, nowSec: number): Promise<CreditBalance> {
    const [row] = await this.tx(() => stmt.all({ org: orgId, value, now: nowSec }));
    if (!row) throw new Error(`no credit account for team ${orgId}`);
    return { balance: row.balance, resetsAt: row.period_end };
  }
}
