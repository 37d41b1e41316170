import type { BucketRule } from './buckets.ts';
import type { RateDecision } from './rate-limiter.ts';

/** Bucket state: tokens (fractional) as of updatedMs. */
export interface BucketState {
  tokens: number;
  updatedMs: number;
}

/**
 * Pure token-bucket step shared by every backend (the Redis Lua script does the same arithmetic, in the
 * same order, on the same doubles). A new bucket starts full. Tokens refill continuously at rule.rate
 * per second up to rule.burst. A take stamped before the bucket's last one (another node whose clock
 * is behind) refills nothing and leaves the stamp where it was, so clocks that disagree a little never
 * refill the same interval twice.
 */
export function takeToken(
  state: BucketState | undefined,
  rule: BucketRule,
  nowMs: number,
  cost = 1,
): { state: BucketState; decision: RateDecision } {
  let tokens = rule.burst;
  let updatedMs = nowMs;
  if (state) {
    const elapsed = Math.max(0, nowMs - state.updatedMs) / 1000;
    tokens = Math.min(rule.burst, state.tokens + elapsed * rule.rate);
    if (state.updatedMs > nowMs) updatedMs = state.updatedMs;
  }
  const allowed = tokens >= cost;
  if (allowed) tokens -= cost;
  return { state: { tokens, updatedMs }, decision: bucketDecision(rule, tokens, allowed, cost) };
}

/** What a take tells the client, from the tokens left after it: the one rounding of every backend. */
export function bucketDecision(rule: BucketRule, tokens: number, allowed: boolean, cost: number): RateDecision {
  return {
    allowed,
    limit: rule.burst,
    remaining: Math.max(0, Math.floor(tokens + 1e-9)),
    resetSeconds: secondsTo(rule.burst - tokens, rule.rate),
    retryAfterSeconds: allowed ? 0 : Math.max(1, secondsTo(cost - tokens, rule.rate)),
  };
}

// Tiny epsilon keeps 0.1/s buckets from reporting a spurious extra second after float drift.
// Module level rather than a closure per call: this runs on every rate-limited request.
function secondsTo(need: number, rate: number): number {
  return need <= 1e-9 ? 0 : Math.ceil(need / rate - 1e-9);
}
