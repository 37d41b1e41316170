import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { TObject } from 'typebox';
import { isPromise, type MaybePromise } from '../lib/maybe-promise.ts';
import type { Caller } from '../modules/accounts/account-service.ts';
import type { Billed } from '../modules/lookup/lookup-service.ts';
import type { Operation } from '../operations.ts';
import { callerOf } from './hooks/operation-guard.ts';
import type { Metrics } from '../metrics.ts';

/** One operation's HTTP binding: its operations.ts row, its schemas and a thin handler. */
export interface RouteSpec {
  operation: Operation;
  schema: FastifySchema;
  // Handlers get validated input, typed in each route file (a method: its parameter types may be narrower
  // than the table's). A handler may return the body itself (fastify sends it at once) or a promise of it.
  handler(req: FastifyRequest, reply: FastifyReply): unknown;
  /** Called once fastify is ready, with the instance whose compilers the route's own serializers come from. */
  ready?(app: FastifyInstance): void;
}

/** A successful answer, independent of the transport: status, extra headers, and the body to serialize. */
export interface OperationReply<T = unknown> {
  status: number;
  headers: Record<string, string | number>;
  body: T;
}

/**
 * Turns an admitted caller and validated params and query into the answer, or throws an AppError.
 * Synchronous when every port answers from memory.
 */
// biome-ignore lint/suspicious/noExplicitAny: one table holds answers of every params and query type (each route validates its own)
export type Answer<P = any, Q = any, T = unknown> = (caller: Caller, params: P, query: Q) => MaybePromise<OperationReply<T>>;

/** A route whose whole answer is one Answer function, so another front end (the fast path) can serve it too. */
export interface AnsweredRouteSpec extends RouteSpec {
  answer: Answer;
  /**
   * The object schema of the 200 body when `schema.response[200]` refers to it by $ref: the fast path
   * then writes 200 bodies with frozenPartsSerializer (same bytes, record JSON reused).
   */
  okBody?: TObject;
}

/** The fastify binding of an Answer: the guard's caller in, status and headers onto the reply, the body out. */
export function answeredRoute<P, Q, T>(
  operation: Operation,
  schema: FastifySchema,
  answer: Answer<P, Q, T>,
  okBody?: TObject,
): AnsweredRouteSpec {
  return {
    operation,
    schema,
    answer,
    okBody,
    // Not async: an answer given at once is sent at once, with no promise per request.
    handler: (req: FastifyRequest, reply: FastifyReply) => {
      const answered = answer(callerOf(req), req.params as P, req.query as Q);
      return isPromise(answered) ? answered.then((a) => applyReply(reply, a)) : applyReply(reply, answered);
    },
  };
}

function applyReply<T>(reply: FastifyReply, a: OperationReply<T>): T {
  reply.code(a.status);
  for (const name in a.headers) reply.header(name, a.headers[name]);
  return a.body;
}

/** The answer of a billed operation: 200, X-Credits-Remaining, and the charge counted in the metrics. */
export function billedReply<T>(metrics: Metrics, op: Operation, billed: MaybePromise<Billed<T>>): MaybePromise<OperationReply<T>> {
  if (isPromise(billed)) return billed.then((b) => billedAnswer(metrics, op, b));
  return billedAnswer(metrics, op, billed);
}

function billedAnswer<T>(metrics: Metrics, op: Operation, billed: Billed<T>): OperationReply<T> {
  metrics.charge(op.id, billed.charged);
  const headers: Record<string, string | number> = { 'x-credits-remaining': billed.creditsRemaining };
  if (billed.dataVersion !== undefined) headers['x-data-version'] = billed.dataVersion;
  return { status: 200, headers, body: billed.value };
}

/** Sets X-Credits-Remaining and counts the charge; returns the body (at once when billed is a value). */
export function sendBilled<T>(reply: FastifyReply, metrics: Metrics, op: Operation, billed: MaybePromise<Billed<T>>): MaybePromise<T> {
  const answered = billedReply(metrics, op, billed);
  return isPromise(answered) ? answered.then((a) => applyReply(reply, a)) : applyReply(reply, answered);
}
