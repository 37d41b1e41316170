import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { isPromise } from '../../lib/maybe-promise.ts';
import type { Caller } from '../../modules/accounts/account-service.ts';
import type { RateDecision } from '../../modules/ratelimit/rate-limiter.ts';
import type { Operation } from '../../operations.ts';
import type { Admission, Admit, OperationGuard } from '../../operation-guard.ts';

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
export function registerOperationGuard(app: FastifyInstance, guard: OperationGuard): void {
  // Declared up front so every request object has the same shape.
  app.decorateRequest('caller', undefined);
  app.decorateRequest('operation', undefined);
  app.addHook('onRoute', (route) => {
    const op = route.config?.operation;
    if (!op) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...own, operationGuard(op, op.scope === null ? undefined : guard.admitFor(op))];
  });
}

/**
 * Runs before every operation: the shared admission of src/operation-guard.ts (401, 403, 429) applied to
 * fastify's request and reply. Routes never check any of these by hand.
 *
 * Callback style, not async: with the in-memory key cache and buckets every step answers at once, so
 * an admitted request makes no promise here; a store read (cache miss) continues asynchronously.
 */
export function operationGuard(op: Operation, decide: Admit | undefined): onRequestHookHandler {
  const apply = (req: FastifyRequest, reply: FastifyReply, a: Admission, done: HookHandlerDoneFunction): void => {
    if (a.rate !== undefined) setRateLimitHeaders(reply, a.rate);
    if (!a.ok) return done(a.error);
    req.caller = a.caller;
    done();
  };
  return function guard(req, reply, done) {
    req.operation = op;
    if (decide === undefined) return done();
    let a: ReturnType<Admit>;
    try {
      a = decide(req.headers['x-api-key']);
    } catch (e) {
      return done(e as Error);
    }
    if (isPromise(a)) a.then((v) => apply(req, reply, v, done), done);
    else apply(req, reply, a, done);
  };
}

export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('operation has no caller: route is missing its operation config');
  return req.caller;
}
