import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { Caller, AccountService } from '../../modules/accounts/account-service.ts';
import type { LimitPolicy } from '../../modules/ratelimit/limit-policy.ts';
import type { RateDecision } from '../../modules/ratelimit/rate-limiter.ts';
import type { Operation } from '../../operations.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: Operation;
  }
  interface FastifyRequest {
    caller?: Caller;
  }
}

export function setRateLimitHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('ratelimit-limit', d.limit);
  reply.header('ratelimit-remaining', d.remaining);
  reply.header('ratelimit-reset', d.resetSeconds);
}

/**
 * Runs before every operation, driven by its operations.ts row: key (401), scope (403), then the
 * team's rate bucket (429). Routes never check any of these by hand.
 */
export function operationGuard(accounts: AccountService, limits: LimitPolicy, onRateLimited: (op: Operation) => void) {
  return async function guard(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const op = req.routeOptions.config.operation;
    if (!op || op.scope === null) return;
    const header = req.headers['x-api-key'];
    const verified = await accounts.verifyKey(Array.isArray(header) ? header[0] : header);
    if (!verified.ok) {
      const why = verified.reason === 'MISSING' ? 'No API key: send it in the x-api-key header.' : verified.reason === 'REVOKED' ? 'This API key has been revoked.' : 'The API key is not valid.';
      throw new AppError('UNAUTHENTICATED', why);
    }
    const caller = verified.caller;
    if (!caller.scopes.has(op.scope)) {
      throw new AppError('PERMISSION_DENIED', `This key lacks the ${op.scope} scope that ${op.method} ${op.path} needs. /account/me lists the key's scopes.`);
    }
    req.caller = caller;
    if (op.bucket === null) return;
    const decision = await limits.take(caller.orgId, op.bucket);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) {
      onRateLimited(op);
      throw new AppError('RATE_LIMITED', `Rate limit of the team's ${op.bucket} bucket exceeded; retry in ${decision.retryAfterSeconds} s.`, {
        retryAfter: decision.retryAfterSeconds,
      });
    }
  };
}

/** The caller that operationGuard attached; only reachable on authenticated routes. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('operation has no caller: route is missing its operation config');
  return req.caller;
}
