import type { MaybePromise } from '../../lib/maybe-promise.ts';
import { FlushLoop, type FlushHooks } from './flush-loop.ts';
import type { BlockState, CreditBlocks } from './credit-blocks.ts';
import type { CreditBalance, CreditLedger, CreditPlan, DebitResult } from './credit-ledger.ts';

export interface BlockLedgerOptions {
  /** This node's id: its blocks are rows of its own. */
  nodeId: string;
  nowMs: () => number;
  /** Credits a node asks for at a time (a larger request reserves what it costs). */
  blockSize: number;
  /** How long a block outlives its node's last report (s): a dead node's block returns after it. */
  leaseSeconds: number;
  /** A team unused this long gives its block back, so idle credits do not sit on one node (ms). */
  idleReturnMs: number;
}

interface TeamBlock {
  /** Credits left to spend here. */
  left: number;
  /** Spent here and not yet reported. */
  unsent: number;
  /** Reported, not yet acknowledged. */
  sending: number;
  periodEnd: number;
  /** The team's credits at the last report, and what this node spent since (for X-Credits-Remaining). */
  teamCredits: number;
  spentSinceView: number;
  lastUsedMs: number;
  /** A reserve asked for less than it needed last time: the team is nearly out, so ask for exact costs. */
  scarce: boolean;
  /** The reservation in flight, shared by every debit that waits for it. */
  reserving?: Promise<void>;
  leaseRenewedMs: number;
}

/** How often a node gives back the blocks of dead nodes whose lease ended (ms). */
const RECLAIM_EVERY_MS = 5_000;

const floorSec = (ms: number) => Math.floor(ms / 1000);

/**
 * Credits for one node of a distributed deployment. The ledger of record (PostgreSQL) holds every
 * team's balance; this node reserves blocks of it (CreditBlocks.reserve, one atomic statement), decides
 * debits in memory from its block (synchronously, as the embedded buffer does), reports what it spent
 * every flush and tops the block up before it runs out, and gives an idle team's block back.
 *
 * What this guarantees: every debit is covered by credits moved out of the balance in an atomic step,
 * so all nodes together never spend more than the team had and no balance goes negative. A node that
 * is killed loses the charges of its last flush interval (customers may be under-charged, never
 * over-charged) and its block's unspent part returns when the lease ends. `get` (what /account/me
 * shows) is the balance plus every live block's unspent part as last reported, minus what this node
 * has not reported yet: it lags other nodes' charges by at most one flush interval.
 */
export class BlockCreditLedger implements CreditLedger {
  private readonly teams = new Map<string, TeamBlock>();
  private flushing: Promise<void> | undefined;
  private lastReclaimMs = Number.NEGATIVE_INFINITY;
  private readonly loop = new FlushLoop(
    () => this.flush(),
    () => this.o.nowMs(),
    () => this.unsentCredits,
  );

  constructor(
    /** For what blocks do not change: opening a team, adding credits, plans, refunds of charges already reported. */
    private readonly inner: CreditLedger,
    private readonly blocks: CreditBlocks,
    private readonly o: BlockLedgerOptions,
  ) {}

  debit(orgId: string, cost: number, nowSec: number): MaybePromise<DebitResult> {
    const s = this.teams.get(orgId);
    if (s && !s.reserving && nowSec < s.periodEnd && s.left >= cost) return this.spend(s, cost);
    return this.debitAfterReserve(orgId, cost, nowSec);
  }

  /**
   * The block does not cover the cost: wait for a reservation in flight (another debit's, a flush's)
   * and look again, or make one; refused only once a reservation of this debit's own came back short.
   */
  private async debitAfterReserve(orgId: string, cost: number, nowSec: number): Promise<DebitResult> {
    for (;;) {
      const s = this.teams.get(orgId);
      if (s?.reserving) {
        await s.reserving;
        continue;
      }
      if (s && nowSec < s.periodEnd && s.left >= cost) return this.spend(s, cost);
      const want = s?.scarce ? cost : Math.max(cost, this.o.blockSize);
      if (!(await this.report(orgId, nowSec, want))) return { ok: false, balance: 0, resetsAt: nowSec };
      // A flush may have given the block back meanwhile (the team looked idle): look again.
      const t = this.teams.get(orgId);
      if (!t) continue;
      if (nowSec < t.periodEnd && t.left >= cost) return this.spend(t, cost);
      return { ok: false, balance: this.remaining(t), resetsAt: t.periodEnd };
    }
  }

  private spend(s: TeamBlock, cost: number): DebitResult {
    s.left -= cost;
    s.unsent += cost;
    s.spentSinceView += cost;
    s.lastUsedMs = this.o.nowMs();
    return { ok: true, balance: this.remaining(s), resetsAt: s.periodEnd };
  }

  private remaining(s: TeamBlock): number {
    return Math.max(0, s.teamCredits - s.spentSinceView);
  }

  /** Sends the unsent charges of a team and asks for `want` more credits; creates the team's entry. */
  private async report(orgId: string, nowSec: number, want: number): Promise<BlockState | undefined> {
    let team = this.teams.get(orgId);
    if (!team) {
      team = {
        left: 0,
        unsent: 0,
        sending: 0,
        periodEnd: 0,
        teamCredits: 0,
        spentSinceView: 0,
        lastUsedMs: this.o.nowMs(),
        scarce: false,
        leaseRenewedMs: 0,
      };
      this.teams.set(orgId, team);
    }
    // One report of a team at a time: answers applied out of order would restore a stale block.
    while (team.reserving) await team.reserving;
    const sent = team.unsent;
    team.unsent = 0;
    team.sending += sent;
    let done!: () => void;
    team.reserving = new Promise<void>((r) => (done = r));
    try {
      const state = await this.blocks.reserve({
        nodeId: this.o.nodeId,
        orgId,
        spent: sent,
        spentPeriodEnd: team.periodEnd,
        nowSec,
        want,
        leaseUntilSec: nowSec + this.o.leaseSeconds,
      });
      if (!state) {
        this.teams.delete(orgId);
        return undefined;
      }
      // Charges made while the statement ran are not in its answer yet.
      team.left = Math.max(0, state.left - team.unsent);
      team.periodEnd = state.periodEnd;
      team.teamCredits = state.teamCredits;
      team.spentSinceView = team.unsent;
      team.scarce = want > 0 && state.left < want;
      team.leaseRenewedMs = this.o.nowMs();
      return state;
    } catch (e) {
      // Not recorded: sent again with the next report.
      team.unsent += sent;
      throw e;
    } finally {
      team.sending -= sent;
      team.reserving = undefined;
      done();
    }
  }

  async refund(orgId: string, amount: number): Promise<void> {
    const s = this.teams.get(orgId);
    if (s && s.unsent >= amount) {
      s.unsent -= amount;
      s.left += amount;
      s.spentSinceView -= amount;
    } else await this.inner.refund(orgId, amount);
  }

  async get(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined> {
    const v = await this.blocks.view(orgId, nowSec);
    const s = this.teams.get(orgId);
    // Unsent charges of a period that has ended went with it.
    const unsent = s && s.periodEnd === v?.resetsAt ? s.unsent + s.sending : 0;
    return v && { ...v, balance: Math.max(0, v.balance - unsent) };
  }

  async consume(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    let s = this.teams.get(orgId);
    if (s?.reserving) await s.reserving;
    // A team this node holds no block of, or whose period has ended: learn the period first, so the
    // charge is recorded in the one it belongs to.
    if (!s || nowSec >= s.periodEnd) {
      if (!(await this.report(orgId, nowSec, 0))) return { balance: 0, resetsAt: nowSec };
      s = this.teams.get(orgId)!;
    }
    // Charged like a debit that must pass: from the block first, the rest taken from the balance.
    s.unsent += amount;
    s.left = Math.max(0, s.left - amount);
    s.lastUsedMs = this.o.nowMs();
    await this.report(orgId, nowSec, 0);
    const v = await this.get(orgId, nowSec);
    return { balance: v?.balance ?? 0, resetsAt: v?.resetsAt ?? nowSec };
  }

  async open(orgId: string, plan: CreditPlan, nowSec: number): Promise<void> {
    await this.inner.open(orgId, plan, nowSec);
  }

  async set(orgId: string, balance: number, nowSec: number): Promise<CreditBalance> {
    await this.settle(orgId, nowSec);
    return this.blocks.set(orgId, balance, nowSec);
  }

  async add(orgId: string, amount: number, nowSec: number): Promise<CreditBalance> {
    await this.settle(orgId, nowSec);
    await this.inner.add(orgId, amount, nowSec);
    const v = await this.blocks.view(orgId, nowSec);
    return { balance: v?.balance ?? 0, resetsAt: v?.resetsAt ?? nowSec };
  }

  async setPlan(orgId: string, plan: Partial<CreditPlan>): Promise<void> {
    await this.inner.setPlan(orgId, plan);
  }

  /** Gives this node's block of a team back (after reporting its charges) and forgets the team. */
  private async settle(orgId: string, nowSec: number): Promise<void> {
    const s = this.teams.get(orgId);
    if (!s) return;
    if (s.reserving) await s.reserving;
    const sent = s.unsent;
    s.unsent = 0;
    try {
      await this.blocks.release({ nodeId: this.o.nodeId, orgId, spent: sent, spentPeriodEnd: s.periodEnd, nowSec });
      this.teams.delete(orgId);
    } catch (e) {
      s.unsent += sent;
      throw e;
    }
  }

  /**
   * One pass: reports every team's charges, tops up blocks that are half spent, renews leases, and
   * gives back the blocks of teams idle for idleReturnMs. Concurrent calls share one pass.
   */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    const nowMs = this.o.nowMs();
    const nowSec = floorSec(nowMs);
    let failure: unknown;
    for (const [orgId, s] of [...this.teams]) {
      if (s.reserving) continue;
      try {
        if (nowMs - s.lastUsedMs >= this.o.idleReturnMs) await this.settle(orgId, nowSec);
        else if (s.unsent > 0 || nowSec >= s.periodEnd || nowMs - s.leaseRenewedMs >= (this.o.leaseSeconds * 1000) / 3) {
          // Top up before the block runs out, so debits keep deciding in memory.
          const want = !s.scarce && s.left < this.o.blockSize / 2 ? this.o.blockSize : 0;
          await this.report(orgId, nowSec, want);
        }
      } catch (e) {
        failure ??= e;
      }
    }
    // Leases last leaseSeconds: looking for dead nodes' blocks a few times per lease is enough, and
    // every flush pass (50 a second) would be a statement each for nothing.
    if (nowMs - this.lastReclaimMs >= RECLAIM_EVERY_MS) {
      try {
        await this.blocks.reclaimExpired(nowSec);
        this.lastReclaimMs = nowMs;
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure) throw failure;
  }

  /** Credits charged here and not yet recorded by the ledger of record, all teams. */
  get unsentCredits(): number {
    let n = 0;
    for (const s of this.teams.values()) n += s.unsent + s.sending;
    return n;
  }

  unsentByTeam(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [org, s] of this.teams) if (s.unsent + s.sending > 0) out[org] = s.unsent + s.sending;
    return out;
  }

  /** Flushes every intervalMs until stopFlushing(), backing off while flushes fail (flush-loop.ts). */
  flushEvery(intervalMs: number, hooks: FlushHooks = {}): void {
    this.loop.start(intervalMs, hooks);
  }

  stopFlushing(): void {
    this.loop.stop();
  }

  /** Gives every block back (shutdown): the node's unspent credits return to their teams at once. */
  async releaseAll(): Promise<void> {
    const nowSec = floorSec(this.o.nowMs());
    for (const orgId of [...this.teams.keys()]) await this.settle(orgId, nowSec);
  }

  /** What /health says while charges cannot be written. */
  problems(): string[] {
    return this.loop.problems();
  }
}
