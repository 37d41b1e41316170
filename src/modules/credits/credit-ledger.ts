import type { MaybePromise } from '../../lib/maybe-promise.ts';

/** Balance of a team after an operation. */
export interface CreditBalance {
  balance: number;
  /** Unix seconds at which the balance next refills to the allotment. */
  resetsAt: number;
}

export interface DebitResult extends CreditBalance {
  /** false: the balance did not cover the whole cost and nothing was charged. */
  ok: boolean;
}

export interface CreditPlan {
  allotment: number;
  periodSeconds: number;
}

/**
 * Team lookup credits. Every change is one atomic call: a debit applies any due refill and charges
 * only when the balance covers the whole cost, so concurrent requests can never overdraw.
 */
export interface CreditLedger {
  /** Creates the team's account with a full balance; the first period ends periodSeconds after now. */
  open(orgId: string, plan: CreditPlan, nowSec: number): Promise<void>;
  /** Synchronous when the answer is already in memory (a write-behind buffer's loaded team). */
  debit(orgId: string, cost: number, nowSec: number): MaybePromise<DebitResult>;
  /**
   * Charges an amount already granted elsewhere (a write-behind buffer's batch): applies any due refill,
   * then subtracts, never below zero.
   */
  consume(orgId: string, amount: number, nowSec: number): Promise<CreditBalance>;
  /** Gives back a charge whose request then failed. */
  refund(orgId: string, amount: number): Promise<void>;
  /** Current balance, with any due refill applied. undefined for an unknown team. */
  get(orgId: string, nowSec: number): Promise<(CreditBalance & CreditPlan) | undefined>;
  /** Sets the balance (operator action); the allotment and period are unchanged. */
  set(orgId: string, balance: number, nowSec: number): Promise<CreditBalance>;
  add(orgId: string, amount: number, nowSec: number): Promise<CreditBalance>;
  /** Changes the plan; the current balance and period end are unchanged. */
  setPlan(orgId: string, plan: Partial<CreditPlan>): Promise<void>;
}

/** When a period has ended, the next period end strictly after now (periods are back to back). */
export function nextPeriodEnd(periodEnd: number, periodSeconds: number, nowSec: number): number {
  if (nowSec < periodEnd) return periodEnd;
  return periodEnd + (Math.floor((nowSec - periodEnd) / periodSeconds) + 1) * periodSeconds;
}
