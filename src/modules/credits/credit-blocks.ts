import type { CreditBalance, CreditPlan } from './credit-ledger.ts';

/** A node's block of a team's credits after a reservation or a report. */
export interface BlockState {
  /** Credits this node may still spend from its block (reserved minus used, after the report). */
  left: number;
  /** The team's credits as the ledger of record sees them now: the balance plus every live block's unspent part. */
  teamCredits: number;
  /** End of the current period (Unix s): the block belongs to that period and ends with it. */
  periodEnd: number;
}

/** What a node reports about its block: credits spent since its last report, in the block's period. */
export interface BlockReport {
  nodeId: string;
  orgId: string;
  spent: number;
  /** The period (its end, Unix s) the spent credits belong to; a report for an ended period is dropped. */
  spentPeriodEnd: number;
  nowSec: number;
}

/**
 * The ledger of record's side of block reservations (distributed mode): each node moves credits from a
 * team's balance into a block of its own with one atomic statement, spends them in memory, reports what
 * it spent, and gives back what it did not. Every step is atomic per team, so blocks never hold more
 * than the balance had: concurrent nodes never overspend and a balance never goes negative.
 *
 * A block has a lease: a node that stops reporting (it died) loses its block when the lease ends, and
 * the unspent part as last reported goes back to the team (reclaimExpired).
 */
export interface CreditBlocks {
  /**
   * One atomic step: applies a due refill (every block of the ended period ends with it), records
   * `spent` against this node's block (what the block no longer covers, because an operator set the
   * team's credits meanwhile, is taken from the balance, never below zero), then moves up to `want`
   * credits from the balance into the block and extends its lease to `leaseUntilSec`. undefined for an
   * unknown team.
   */
  reserve(report: BlockReport & { want: number; leaseUntilSec: number }): Promise<BlockState | undefined>;
  /** Records `spent` as reserve does, then gives the unspent rest back to the balance; the block ends. */
  release(report: BlockReport): Promise<void>;
  /** Gives back the unspent part of every block whose lease ended; returns how many credits went back. */
  reclaimExpired(nowSec: number): Promise<number>;
  /** The team's credits (balance plus live blocks' unspent parts) with any due refill applied. */
  view(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined>;
  /** The team's credits become `total`: the balance takes it and the blocks' unspent parts are voided. */
  set(orgId: string, total: number, nowSec: number): Promise<CreditBalance>;
}
