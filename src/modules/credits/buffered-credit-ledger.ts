import type { MaybePromise } from '../../lib/maybe-promise.ts';
import { FlushLoop, type FlushHooks } from './flush-loop.ts';
import { nextPeriodEnd, type CreditBalance, type CreditLedger, type CreditPlan, type DebitResult } from './credit-ledger.ts';

interface TeamState {
  /** Balance as the backing ledger last reported it. */
  balance: number;
  resetsAt: number;
  allotment: number;
  periodSeconds: number;
  /** Charged here, not yet sent. */
  pending: number;
  /** Charged in the period that ended before a local refill; sent with that period's time. */
  pendingOld: number;
  oldTime: number;
  /** Sent, not yet acknowledged. */
  inflight: number;
  touched: boolean;
}

/**
 * Write-behind credits for one process: debits are decided in memory (atomic, since JavaScript runs
 * them one at a time) and sent to the backing ledger every flush in one `consume` per team, whose
 * answer also brings in changes other processes made (an operator's `credits set`). A crash loses at
 * most one flush interval of charges: customers may be under-charged, never over-charged.
 */
export class BufferedCreditLedger implements CreditLedger {
  private readonly teams = new Map<string, TeamState>();
  private flushing: Promise<void> | undefined;
  private readonly loop = new FlushLoop(
    () => this.flush(),
    () => this.nowMs(),
    () => this.unsentCredits,
  );

  constructor(
    private readonly inner: CreditLedger,
    private readonly nowMs: () => number,
  ) {}

  private effective(s: TeamState): number {
    return Math.max(0, s.balance - s.inflight - s.pending - s.pendingOld);
  }

  /** Applies a due refill locally; charges of the ended period are kept apart to be sent with its time. */
  private roll(s: TeamState, nowSec: number): void {
    if (nowSec < s.resetsAt) return;
    s.pendingOld += s.pending;
    s.oldTime = s.resetsAt - 1;
    s.pending = 0;
    // The ended period's unsent charges no longer weigh on the refilled balance.
    s.balance = s.allotment + s.pendingOld + s.inflight;
    s.resetsAt = nextPeriodEnd(s.resetsAt, s.periodSeconds, nowSec);
  }

  /** The team's state if it is loaded (refilled and marked seen), else undefined. */
  private loaded(orgId: string, nowSec: number): TeamState | undefined {
    const s = this.teams.get(orgId);
    if (s) {
      this.roll(s, nowSec);
      s.touched = true;
    }
    return s;
  }

  private async state(orgId: string, nowSec: number): Promise<TeamState | undefined> {
    let s = this.loaded(orgId, nowSec);
    if (!s) {
      const row = await this.inner.get(orgId, nowSec);
      if (!row) return undefined;
      // Another call may have loaded it while we waited.
      s = this.teams.get(orgId) ?? { ...row, pending: 0, pendingOld: 0, oldTime: 0, inflight: 0, touched: false };
      this.teams.set(orgId, s);
      this.roll(s, nowSec);
      s.touched = true;
    }
    return s;
  }

  /** Synchronous once the team is loaded: the decision is made in memory and needs no promise. */
  debit(orgId: string, cost: number, nowSec: number): MaybePromise<DebitResult> {
    const s = this.loaded(orgId, nowSec);
    return s
      ? this.charge(s, cost)
      : this.state(orgId, nowSec).then((t) => (t ? this.charge(t, cost) : { ok: false, balance: 0, resetsAt: nowSec }));
  }

  private charge(s: TeamState, cost: number): DebitResult {
    const available = this.effective(s);
    if (available < cost) return { ok: false, balance: available, resetsAt: s.resetsAt };
    s.pending += cost;
    return { ok: true, balance: available - cost, resetsAt: s.resetsAt };
  }

  async refund(orgId: string, amount: number): Promise<void> {
    const s = this.teams.get(orgId);
    if (s && s.pending >= amount) s.pending -= amount;
    else await this.inner.refund(orgId, amount);
  }

  async get(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined> {
    const s = await this.state(orgId, nowSec);
    return s && { balance: this.effective(s), resetsAt: s.resetsAt, allotment: s.allotment, periodSeconds: s.periodSeconds };
  }

  async consume(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    const s = await this.state(orgId, nowSec);
    if (s) s.pending += amount;
    return { balance: s ? this.effective(s) : 0, resetsAt: s?.resetsAt ?? nowSec };
  }

  // Operator changes go straight through, after this team's unsent charges, and reload the team.
  async open(orgId: string, plan: CreditPlan, nowSec: number): Promise<void> {
    await this.inner.open(orgId, plan, nowSec);
  }

  async set(orgId: string, balance: number, nowSec: number): Promise<CreditBalance> {
    return this.passThrough(orgId, nowSec, () => this.inner.set(orgId, balance, nowSec));
  }

  async add(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    return this.passThrough(orgId, nowSec, () => this.inner.add(orgId, amount, nowSec));
  }

  async setPlan(orgId: string, plan: Partial<CreditPlan>): Promise<void> {
    await this.passThrough(orgId, 0, async () => {
      await this.inner.setPlan(orgId, plan);
      return { balance: 0, resetsAt: 0 };
    });
  }

  private async passThrough(orgId: string, nowSec: number, change: () => Promise<CreditBalance>): Promise<CreditBalance> {
    await this.flush(nowSec || undefined);
    const result = await change();
    this.teams.delete(orgId);
    return result;
  }

  /**
   * Sends every team's unsent charges and refreshes every team seen since the last flush; teams not
   * seen are dropped, so memory follows active teams. Concurrent calls share one flush.
   */
  flush(nowSec = Math.floor(this.nowMs() / 1000)): Promise<void> {
    this.flushing ??= this.doFlush(nowSec).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async doFlush(nowSec: number): Promise<void> {
    for (const [orgId, s] of this.teams) {
      if (!s.touched && s.pending === 0 && s.pendingOld === 0) {
        this.teams.delete(orgId);
        continue;
      }
      s.touched = false;
      let old = s.pendingOld;
      const now = s.pending;
      s.pendingOld = 0;
      s.pending = 0;
      s.inflight += old + now;
      try {
        if (old > 0) {
          await this.inner.consume(orgId, old, s.oldTime);
          // Committed: from here on only `now` is at stake. The local balance counted the ended
          // period's charges in (roll), so it drops with them and the effective balance stays put.
          s.inflight -= old;
          s.balance -= old;
          old = 0;
        }
        const fresh = await this.inner.consume(orgId, now, Math.max(nowSec, s.oldTime + 1));
        // The answer includes what was just sent; `inflight` drops it in finally, synchronously.
        s.balance = fresh.balance;
        s.resetsAt = fresh.resetsAt;
      } catch (e) {
        // Keep the charges that did not commit for the next flush rather than lose them.
        s.pending += now;
        s.pendingOld += old;
        throw e;
      } finally {
        s.inflight -= old + now;
      }
    }
  }

  /** Unsent credits per team (for the log line of a shutdown that could not write them). */
  unsentByTeam(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [org, s] of this.teams) if (s.pending + s.pendingOld + s.inflight > 0) out[org] = s.pending + s.pendingOld + s.inflight;
    return out;
  }

  /** Credits charged here and not yet committed to the backing ledger, all teams. */
  get unsentCredits(): number {
    let n = 0;
    for (const s of this.teams.values()) n += s.pending + s.pendingOld + s.inflight;
    return n;
  }

  /** Flushes every intervalMs until stopFlushing(), backing off while flushes fail (flush-loop.ts). */
  flushEvery(intervalMs: number, hooks: FlushHooks = {}): void {
    this.loop.start(intervalMs, hooks);
  }

  stopFlushing(): void {
    this.loop.stop();
  }

  /** What /health says while charges cannot be written. */
  /** What /health says while charges cannot be written. */
  problems(): string[] {
    return this.loop.problems();
  }
}
