import { AppError } from './errors.ts';
import { isPromise, type MaybePromise } from './lib/maybe-promise.ts';
import type { AccountService, Caller, VerifyResult } from './modules/accounts/account-service.ts';
import type { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import type { RateDecision } from './modules/ratelimit/rate-limiter.ts';
import type { Operation } from './operations.ts';

/**
 * The verdict on one request to an authenticated operation. `rate` is set whenever the team's bucket
 * was consulted (allowed or not), so its RateLimit-* headers (or gRPC trailers) go on the answer either way.
 */
export type Admission =
  | { ok: true; caller: Caller; rate: RateDecision | undefined }
  | { ok: false; error: AppError; caller: Caller | undefined; rate: RateDecision | undefined };

/** Decides one request from its x-api-key value (header or metadata); bound to one operation. */
export type Admit = (keyHeader: string | string[] | undefined) => MaybePromise<Admission>;

export interface OperationGuardDeps {
  accounts: AccountService;
  limits: LimitPolicy;
  /** Counts a rate-limit refusal (metrics). */
  onRateLimited: (op: Operation) => void;
}

const unauthenticated = (reason: Exclude<VerifyResult, { ok: true }>['reason']): AppError =>
  new AppError(
    'UNAUTHENTICATED',
    reason === 'MISSING'
      ? 'No API key: send it in x-api-key (HTTP header or gRPC metadata).'
      : reason === 'REVOKED'
        ? 'This API key has been revoked.'
        : 'The API key is not valid.',
  );

const PUBLIC: Admit = () => ({ ok: true, caller: undefined as unknown as Caller, rate: undefined });

/**
 * The transport-free operation guard, driven by an operations.ts row: key (401), scope (403), then the
 * team's rate bucket (429). fastify's hook, the HTTP lookup fast path and gRPC all call it, so one team
 * has one set of buckets whichever protocol it speaks, with the same checks, order and messages.
 *
 * Synchronous when the key cache and the bucket answer from memory (no promise per admitted request);
 * a store read continues asynchronously. A fault in a port throws (or rejects): that is a 500.
 */
export function createOperationGuard(deps: OperationGuardDeps) {
  const { accounts, limits, onRateLimited } = deps;
  const bound = new Map<Operation, Admit>();

  const bind = (op: Operation): Admit => {
    const { scope, bucket } = op;
    if (scope === null) return PUBLIC;
    const missingScope =
      `This key lacks the ${scope} scope that ${op.grpc ?? op.id} (${op.method} ${op.path}) needs. /account/me ` +
      `(GetAccountInfo) lists the key's scopes.`;

    const decide = (caller: Caller, rate: RateDecision): Admission => {
      if (rate.allowed) return { ok: true, caller, rate };
      onRateLimited(op);
      return {
        ok: false,
        caller,
        rate,
        error: new AppError('RATE_LIMITED', `Rate limit of the team's ${bucket} bucket exceeded; retry in ${rate.retryAfterSeconds} s.`, {
          retryAfter: rate.retryAfterSeconds,
        }),
      };
    };
    const afterVerify = (verified: VerifyResult): MaybePromise<Admission> => {
      if (!verified.ok) return { ok: false, error: unauthenticated(verified.reason), caller: undefined, rate: undefined };
      const caller = verified.caller;
      if (!caller.scopes.has(scope)) return { ok: false, error: new AppError('PERMISSION_DENIED', missingScope), caller, rate: undefined };
      if (bucket === null) return { ok: true, caller, rate: undefined };
      const rate = limits.take(caller.orgId, bucket);
      return isPromise(rate) ? rate.then((r) => decide(caller, r)) : decide(caller, rate);
    };
    return (keyHeader) => {
      const verified = accounts.verifyKey(Array.isArray(keyHeader) ? keyHeader[0] : keyHeader);
      return isPromise(verified) ? verified.then(afterVerify) : afterVerify(verified);
    };
  };

  const admitFor = (op: Operation): Admit => {
    let admit = bound.get(op);
    if (admit === undefined) bound.set(op, (admit = bind(op)));
    return admit;
  };

  return {
    /** The admission of one operation, bound once (hooks and the fast path keep it per route). */
    admitFor,
    /** Callback form for transports that are callback driven (gRPC); public operations pass without a key. */
    admit(op: Operation, secret: string | undefined, done: (err: Error | null, admission: Partial<Admission>) => void): void {
      let a: MaybePromise<Admission>;
      try {
        a = admitFor(op)(secret);
      } catch (e) {
        return done(e as Error, {});
      }
      const settle = (v: Admission) => done(v.ok ? null : v.error, v);
      if (isPromise(a)) a.then(settle, (e: Error) => done(e, {}));
      else settle(a);
    },
    /** Key check alone, for a request that names no operation (an unknown feed): 401 before 400. */
    authenticate(secret: string | undefined, done: (err: Error | null, caller?: Caller) => void): void {
      const verified = accounts.verifyKey(secret);
      const settle = (v: VerifyResult) => (v.ok ? done(null, v.caller) : done(unauthenticated(v.reason)));
      if (isPromise(verified)) verified.then(settle, (e: Error) => done(e));
      else settle(verified);
    },
  };
}

export type OperationGuard = ReturnType<typeof createOperationGuard>;
