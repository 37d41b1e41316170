import { AppError } from '../errors.ts';
import { isPromise, type MaybePromise } from '../lib/maybe-promise.ts';
import type { AccountService, Caller, VerifyResult } from '../modules/accounts/account-service.ts';
import type { LimitPolicy } from '../modules/ratelimit/limit-policy.ts';
import type { RateDecision } from '../modules/ratelimit/rate-limiter.ts';
import type { Operation } from '../operations.ts';

/**
 * The verdict on one request to an authenticated operation. `rate` is set whenever the team's bucket
 * was consulted (allowed or not), so its RateLimit-* headers go on the answer either way.
 */
export type Admission = { ok: true; caller: Caller; rate: RateDecision | undefined } | { ok: false; error: AppError; rate: RateDecision | undefined };

/** Decides one request from its x-api-key header; the operation has a scope (public ones need no admission). */
export type Admit = (keyHeader: string | string[] | undefined) => MaybePromise<Admission>;

const unauthenticated = (reason: Exclude<VerifyResult, { ok: true }>['reason']): AppError =>
  new AppError(
    'UNAUTHENTICATED',
    reason === 'MISSING' ? 'No API key: send it in the x-api-key header.' : reason === 'REVOKED' ? 'This API key has been revoked.' : 'The API key is not valid.',
  );

/**
 * Key (401), scope (403), then the team's rate bucket (429), driven by the operation's operations.ts
 * row. The one implementation: fastify's operation guard and the lookup fast path both call it.
 *
 * Synchronous when the key cache and the bucket answer from memory (no promise per admitted request);
 * a store read continues asynchronously. A fault in a port throws (or rejects): that is a 500.
 */
export function admitter(accounts: AccountService, limits: LimitPolicy, onRateLimited: (op: Operation) => void) {
  return (op: Operation): Admit => {
    const { scope, bucket } = op;
    if (scope === null) throw new Error(`${op.id} is public: it has no admission`);
    const missingScope = `This key lacks the ${scope} scope that ${op.method} ${op.path} needs. /account/me lists the key's scopes.`;

    const decide = (caller: Caller, rate: RateDecision): Admission => {
      if (rate.allowed) return { ok: true, caller, rate };
      onRateLimited(op);
      return { ok: false, rate, error: new AppError('RATE_LIMITED', `Rate limit of the team's ${bucket} bucket exceeded; retry in ${rate.retryAfterSeconds} s.`, { retryAfter: rate.retryAfterSeconds }) };
    };

    const afterVerify = (verified: VerifyResult): MaybePromise<Admission> => {
      if (!verified.ok) return { ok: false, error: unauthenticated(verified.reason), rate: undefined };
      const caller = verified.caller;
      if (!caller.scopes.has(scope)) return { ok: false, error: new AppError('PERMISSION_DENIED', missingScope), rate: undefined };
      if (bucket === null) return { ok: true, caller, rate: undefined };
      const rate = limits.take(caller.orgId, bucket);
      return isPromise(rate) ? rate.then((r) => decide(caller, r)) : decide(caller, rate);
    };

    return (keyHeader) => {
      const verified = accounts.verifyKey(Array.isArray(keyHeader) ? keyHeader[0] : keyHeader);
      return isPromise(verified) ? verified.then(afterVerify) : afterVerify(verified);
    };
  };
}
