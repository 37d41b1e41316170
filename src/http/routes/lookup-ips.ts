import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import type { Metrics } from '../../metrics.ts';
import { sendBilled, type RouteSpec } from '../route-spec.ts';
import { BatchResult, errorResponses } from '../schemas.ts';

const Body = Type.Object({ ips: Type.Array(Type.String(), { maxItems: 1000, description: 'Up to 1,000 IPv4/IPv6 addresses' }) });

export const lookupIps = (s: Services, metrics: Metrics): RouteSpec => ({
  operation: OPERATIONS.lookupIps,
  schema: { body: Body, response: { 200: BatchResult, ...errorResponses([400, 401, 402, 403, 413, 415, 429, 503]) } },
  handler: async (req: FastifyRequest<{ Body: Static<typeof Body> }>, reply) =>
    sendBilled(reply, metrics, OPERATIONS.lookupIps, await s.lookup.lookupIps(callerOf(req), req.body.ips)),
});
