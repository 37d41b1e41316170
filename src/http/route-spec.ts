import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Billed } from '../modules/lookup/lookup-service.ts';
import type { Operation } from '../operations.ts';
import type { Metrics } from './metrics.ts';

/** One operation's HTTP binding: its operations.ts row, its schemas and a thin handler. */
export interface RouteSpec {
  operation: Operation;
  schema: FastifySchema;
  // Handlers get validated input; typing stays loose here and tight in each route file.
  handler: (req: FastifyRequest<any>, reply: FastifyReply) => Promise<unknown>;
}

/** Sets X-Credits-Remaining and counts the charge; returns the body. */
export function sendBilled<T>(reply: FastifyReply, metrics: Metrics, op: Operation, billed: Billed<T>): T {
  reply.header('x-credits-remaining', billed.creditsRemaining);
  metrics.creditsCharged.inc({ operation: op.id }, billed.charged);
  return billed.value;
}
