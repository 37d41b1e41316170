import type { BucketRule } from './buckets.ts';
import type { RateDecision } from './rate-limiter.ts';

/** Bucket state: tokens (fractional) as of updatedMs. */
export interface BucketState {
  tokens: number;
  updatedMs: number;
}

/**
 * Pure token-bucket step shared by every backend (the Redis Lua script does the same arithmetic).
 * A new bucket starts full. Tokens refill continuously at rule.rate per second up to rule.burst.
 */
export function takeToken(
  state: BucketState | undefined,
  rule: BucketRule,
  nowMs: number,
  cost = 1,
): { state: BucketState; decision: RateDecision } {
  let tokens = rule.burst;
  if (state) {
    const elapsed = Math.max(0, nowMs - state.updatedMs) / 1000;
    tokens = Math.min(rule.burst, state.tokens + elapsed * rule.rate);
  }
  const allowed = tokens >= cost;
  if (allowed) tokens -= cost;
  return {
    state: { tokens, updatedMs: nowMs },
    decision: {
      allowed,
      limit: rule.burst,
      remaining: Math.max(0, Math.floor(tokens + 1e-9)),
      resetSeconds: secondsTo(rule.burst - tokens, rule.rate),
      retryAfterSeconds: allowed ? 0 : Math.max(1, secondsTo(cost - tokens, rule.rate)),
    },
  };
}

// Tiny epsilon keeps 0.1/s buckets from reporting a spurious extra second after float drift.
// Module level rather than a closure per call: this runs on every rate-limited request.
function secondsTo(need: number, rate: number): number {
  return need <= 1e-9 ? 0 : Math.ceil(need / rate - 1e-9);
}
