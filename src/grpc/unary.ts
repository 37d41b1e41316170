import { isPromise, type MaybePromise } from '../lib/maybe-promise.ts';
import type { Caller } from '../modules/accounts/account-service.ts';
import type { Billed } from '../modules/lookup/lookup-service.ts';
import type { OperationGuard } from '../operation-guard.ts';
import type { Operation } from '../operations.ts';
import type { Metrics } from '../metrics.ts';
import type { Logger } from 'pino';
import { isAppError } from '../errors.ts';
import { rateMetadata, toGrpcFailure } from './status.ts';
import { GrpcStatus, statusName, type IncomingMetadata, type UnaryHandler } from './wire-server.ts';

/** A status code's name (`RESOURCE_EXHAUSTED`), the metrics label. */
export const codeName = (code: number | undefined): string => statusName(code ?? GrpcStatus.UNKNOWN);

/** The x-api-key metadata entry as sent (the first one). */
export function apiKeyOf(md: IncomingMetadata): string | undefined {
  return md.get('x-api-key')[0];
}

export interface CallContext {
  guard: OperationGuard;
  metrics: Metrics;
  logger: Logger;
}

/** A handler's answer; `billed` adds the `x-credits-remaining` trailer and counts the charge. */
export interface Outcome<Res> {
  value: Res;
  /** Billing of the call (x-credits-remaining) and, for IP lookups, the data version (x-data-version), both trailing metadata. */
  billed?: { creditsRemaining: number; charged: number; dataVersion?: string };
}

/** What a handler may know of the call besides its request (the call itself: nothing is built per call for it). */
export interface CallInfo {
  /** The :authority the client called (`host:port`), as the client sent it. */
  getHost(): string;
}

/**
 * One unary method: `resolve` picks the operations.ts row from the request (export methods map to a
 * daily or an hourly operation), the shared guard admits the key, then `run` makes the module call.
 * A request that names no operation (an unknown feed) still gets 401 before its 400, as on HTTP.
 * Trailers mirror the HTTP headers: ratelimit-*, retry-after, x-credits-remaining.
 */
export function unary<Req, Res>(
  ctx: CallContext,
  resolve: (req: Req) => Operation,
  run: (caller: Caller, req: Req, op: Operation, call: CallInfo) => MaybePromise<Outcome<Res>>,
): UnaryHandler<Req, Res> {
  // The method's counters by status code, made once: prom-client hashes a label set on every inc.
  const counters = new Map<number, { inc(): void }>();
  const count = (method: string, code: number) => {
    let c = counters.get(code);
    if (c === undefined) {
      c = ctx.metrics.grpcCalls.labels({ method, code: codeName(code) });
      counters.set(code, c);
    }
    c.inc();
  };
  return (call, rawCallback) => {
    const method = call.getPath().slice(call.getPath().lastIndexOf('/') + 1);
    // Every answer is counted by method and status code.
    const callback: typeof rawCallback = (err, value, trailer) => {
      count(method, err ? err.code : GrpcStatus.OK);
      rawCallback(err, value, trailer);
    };
    const secret = apiKeyOf(call.metadata);
    let op: Operation;
    try {
      op = resolve(call.request);
    } catch (e) {
      ctx.guard.authenticate(secret, (err) => callback(toGrpcFailure(err ?? e)));
      return;
    }
    ctx.guard.admit(op, secret, (err, admission) => {
      if (err) return callback(toGrpcFailure(err, admission.rate));
      const fail = (e: unknown) => {
        // Faults (not expected denials) are logged with their cause; the client sees a hidden detail.
        if (!isAppError(e) || e.code === 'INTERNAL') ctx.logger.error({ err: e, operation: op.id, transport: 'grpc' }, 'call failed');
        callback(toGrpcFailure(e, admission.rate));
      };
      const finish = (o: Outcome<Res>) => {
        const trailer = rateMetadata({}, admission.rate);
        if (o.billed) {
          trailer['x-credits-remaining'] = String(o.billed.creditsRemaining);
          if (o.billed.dataVersion !== undefined) trailer['x-data-version'] = o.billed.dataVersion;
          ctx.metrics.charge(op.id, o.billed.charged);
        }
        callback(null, o.value, trailer);
      };
      let out: MaybePromise<Outcome<Res>>;
      try {
        out = run(admission.caller!, call.request, op, call);
      } catch (e) {
        return fail(e);
      }
      if (isPromise(out)) out.then(finish, fail);
      else finish(out);
    });
  };
}

/** A billed module result as an Outcome, mapping its value to the proto message (sync stays sync). */
export function billedOutcome<T, R>(billed: MaybePromise<Billed<T>>, map: (v: T) => R): MaybePromise<Outcome<R>> {
  const to = (b: Billed<T>): Outcome<R> => ({
    value: map(b.value),
    billed: { creditsRemaining: b.creditsRemaining, charged: b.charged, dataVersion: b.dataVersion },
  });
  return isPromise(billed) ? billed.then(to) : to(billed);
}
