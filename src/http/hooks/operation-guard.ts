import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { AppError } from '../../errors.ts';
import { isPromise } from '../../lib/maybe-promise.ts';
import type { Caller, AccountService, VerifyResult } from '../../modules/accounts/account-service.ts';
import type { LimitPolicy } from '../../modules/ratelimit/limit-policy.ts';
import type { RateDecision } from '../../modules/ratelimit/rate-limiter.ts';
import type { Operation } from '../../operations.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: Operation;
  }
  interface FastifyRequest {
    caller?: Caller;
    /** The operations.ts row of the matched route, set by the guard (metrics and logs read it). */
    operation?: Operation;
  }
}

export function setRateLimitHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('ratelimit-limit', d.limit);
  reply.header('ratelimit-remaining', d.remaining);
  reply.header('ratelimit-reset', d.resetSeconds);
}

/**
 * Installs the operation guard on every route whose config names an operations.ts row, bound to that
 * row when the route is registered (so no per-request route lookup). Call before adding routes.
 */
// Any server and logger type: server.ts passes a pino-typed instance.
export function registerOperationGuard(app: FastifyInstance<any, any, any, any>, accounts: AccountService, limits: LimitPolicy, onRateLimited: (op: Operation) => void): void {
  // Declared up front so every request object has the same shape.
  app.decorateRequest('caller', undefined);
  app.decorateRequest('operation', undefined);
  const guardFor = operationGuard(accounts, limits, onRateLimited);
  app.addHook('onRoute', (route) => {
    const op = route.config?.operation;
    if (!op) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...own, guardFor(op)];
  });
}

const unauthenticated = (reason: Exclude<VerifyResult, { ok: true }>['reason']): AppError =>
  new AppError(
    'UNAUTHENTICATED',
    reason === 'MISSING' ? 'No API key: send it in the x-api-key header.' : reason === 'REVOKED' ? 'This API key has been revoked.' : 'The API key is not valid.',
  );

/**
 * Runs before every operation, driven by its operations.ts row: key (401), scope (403), then the
 * team's rate bucket (429). Routes never check any of these by hand.
 *
 * Callback style, not async: with the in-memory key cache and buckets every step answers at once, so
 * an admitted request makes no promise here; a store read (cache miss) continues asynchronously.
 */
export function operationGuard(accounts: AccountService, limits: LimitPolicy, onRateLimited: (op: Operation) => void) {
  return (op: Operation): onRequestHookHandler => {
    const { scope, bucket } = op;

    const decide = (reply: FastifyReply, decision: RateDecision, done: HookHandlerDoneFunction): void => {
      setRateLimitHeaders(reply, decision);
      if (decision.allowed) return done();
      onRateLimited(op);
      done(new AppError('RATE_LIMITED', `Rate limit of the team's ${bucket} bucket exceeded; retry in ${decision.retryAfterSeconds} s.`, { retryAfter: decision.retryAfterSeconds }));
    };

    const admit = (req: FastifyRequest, reply: FastifyReply, verified: VerifyResult, done: HookHandlerDoneFunction): void => {
      if (!verified.ok) return done(unauthenticated(verified.reason));
      const caller = verified.caller;
      if (!caller.scopes.has(scope!)) {
        return done(new AppError('PERMISSION_DENIED', `This key lacks the ${scope} scope that ${op.method} ${op.path} needs. /account/me lists the key's scopes.`));
      }
      req.caller = caller;
      if (bucket === null) return done();
      let decision;
      try {
        decision = limits.take(caller.orgId, bucket);
      } catch (e) {
        return done(e as Error);
      }
      if (isPromise(decision)) decision.then((d) => decide(reply, d, done), done);
      else decide(reply, decision, done);
    };

    return function guard(req, reply, done) {
      req.operation = op;
      if (scope === null) return done();
      const header = req.headers['x-api-key'];
      const verified = accounts.verifyKey(Array.isArray(header) ? header[0] : header);
      if (isPromise(verified)) verified.then((v) => admit(req, reply, v, done), done);
      else admit(req, reply, verified, done);
    };
  };
}

/** The caller that operationGuard attached; only reachable on authenticated routes. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('operation has no caller: route is missing its operation config');
  return req.caller;
}
