import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import type { Caller } from '../../modules/accounts/account-service.ts';
import type { OperationGuard } from '../../operation-guard.ts';
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
export function registerOperationGuard(app: FastifyInstance<any, any, any, any>, guard: OperationGuard): void {
  // Declared up front so every request object has the same shape.
  app.decorateRequest('caller', undefined);
  app.decorateRequest('operation', undefined);
  app.addHook('onRoute', (route) => {
    const op = route.config?.operation;
    if (!op) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...own, httpGuard(guard, op)];
  });
}

/**
 * The HTTP side of the shared operation guard (src/operation-guard.ts): reads x-api-key, attaches the
 * caller and sets the RateLimit-* headers (on a 429 too). Routes never check scopes or buckets by hand.
 */
function httpGuard(guard: OperationGuard, op: Operation): onRequestHookHandler {
  return function guardHook(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    req.operation = op;
    if (op.scope === null) return done();
    const header = req.headers['x-api-key'];
    guard.admit(op, Array.isArray(header) ? header[0] : header, (err, admission) => {
      if (admission.rate) setRateLimitHeaders(reply, admission.rate);
      if (err) return done(err);
      req.caller = admission.caller;
      done();
    });
  };
}

/** The caller that operationGuard attached; only reachable on authenticated routes. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('operation has no caller: route is missing its operation config');
  return req.caller;
}
