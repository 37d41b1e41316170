import { AppError } from './errors.ts';
import { isPromise } from './lib/maybe-promise.ts';
import type { AccountService, Caller, VerifyResult } from './modules/accounts/account-service.ts';
import type { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import type { RateDecision } from './modules/ratelimit/rate-limiter.ts';
import type { Operation } from './operations.ts';

/** What the guard learned about a request, also when it refused it (a 429 still carries its RateLimit-* values). */
export interface Admission {
  caller?: Caller;
  rate?: RateDecision;
}

export type AdmitCallback = (err: Error | null, admission: Admission) => void;

export interface OperationGuardDeps {
  accounts: AccountService;
  limits: LimitPolicy;
  /** Counts a rate-limit refusal (metrics). */
  onRateLimited: (op: Operation) => void;
}

const unauthenticated = (reason: Exclude<VerifyResult, { ok: true }>['reason']): AppError =>
  new AppError(
    'UNAUTHENTICATED',
    reason === 'MISSING' ? 'No API key: send it in x-api-key (HTTP header or gRPC metadata).' : reason === 'REVOKED' ? 'This API key has been revoked.' : 'The API key is not valid.',
  );

const NONE: Admission = Object.freeze({});

/**
 * The transport-free operation guard, driven by an operations.ts row: key (401), scope (403), then the
 * team's rate bucket (429). HTTP and gRPC both call it, so one team has one set of buckets whichever
 * protocol it speaks, and the checks run in the same order with the same messages.
 *
 * Callback style, not async: with the in-memory key cache and buckets every step answers at once, so
 * an admitted request makes no promise here; a store read (cache miss) continues asynchronously.
 */
export function createOperationGuard(deps: OperationGuardDeps) {
  const { accounts, limits, onRateLimited } = deps;

  const takeToken = (op: Operation, caller: Caller, done: AdmitCallback): void => {
    const decide = (rate: RateDecision): void => {
      if (rate.allowed) return done(null, { caller, rate });
      onRateLimited(op);
      done(new AppError('RATE_LIMITED', `Rate limit of the team's ${op.bucket} bucket exceeded; retry in ${rate.retryAfterSeconds} s.`, { retryAfter: rate.retryAfterSeconds }), { caller, rate });
    };
    let decision;
    try {
      decision = limits.take(caller.orgId, op.bucket!);
    } catch (e) {
      return done(e as Error, { caller });
    }
    if (isPromise(decision)) decision.then(decide, (e: Error) => done(e, { caller }));
    else decide(decision);
  };

  const admitVerified = (op: Operation, verified: VerifyResult, done: AdmitCallback): void => {
    if (!verified.ok) return done(unauthenticated(verified.reason), NONE);
    const caller = verified.caller;
    if (!caller.scopes.has(op.scope!)) {
      return done(new AppError('PERMISSION_DENIED', `This key lacks the ${op.scope} scope that ${op.grpc ?? op.id} (${op.method} ${op.path}) needs. /account/me (GetAccountInfo) lists the key's scopes.`), { caller });
    }
    if (op.bucket === null) return done(null, { caller });
    takeToken(op, caller, done);
  };

  return {
    /** Admits `secret` (the x-api-key value as sent) to `op`; public operations pass without a key. */
    admit(op: Operation, secret: string | undefined, done: AdmitCallback): void {
      if (op.scope === null) return done(null, NONE);
      const verified = accounts.verifyKey(secret);
      if (isPromise(verified)) verified.then((v) => admitVerified(op, v, done), (e: Error) => done(e, NONE));
      else admitVerified(op, verified, done);
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
