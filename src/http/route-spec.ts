import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { isPromise, type MaybePromise } from '../lib/maybe-promise.ts';
import type { Billed } from '../modules/lookup/lookup-service.ts';
import type { Operation } from '../operations.ts';
import type { Metrics } from './metrics.ts';

/** One operation's HTTP binding: its operations.ts row, its schemas and a thin handler. */
export interface RouteSpec {
  operation: Operation;
  schema: FastifySchema;
  // Handlers get validated input; typing stays loose here and tight in each route file. A handler may
  // return the body itself (fastify sends it at once) or a promise of it.
  handler: (req: FastifyRequest<any>, reply: FastifyReply) => unknown;
}

/** Sets X-Credits-Remaining and counts the charge; returns the body (at once when billed is a value). */
export function sendBilled<T>(reply: FastifyReply, metrics: Metrics, op: Operation, billed: MaybePromise<Billed<T>>): MaybePromise<T> {
  if (isPromise(billed)) return billed.then((b) => billedBody(reply, metrics, op, b));
  return billedBody(reply, metrics, op, billed);
}

function billedBody<T>(reply: FastifyReply, metrics: Metrics, op: Operation, billed: Billed<T>): T {
  reply.header('x-credits-remaining', billed.creditsRemaining);
  metrics.charge(op.id, billed.charged);
  return billed.value;
}
