import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import type { Metrics } from '../metrics.ts';
import { sendBilled, type RouteSpec } from '../route-spec.ts';
import { errorResponses } from '../schemas.ts';

const Params = Type.Object({ ip_address: Type.String({ maxLength: 256, description: 'IPv4 or IPv6 (raw colons allowed)' }) });
// Literal strings, not a coerced boolean: `explain=1` or `explain=maybe` is a 400 validation error.
const Query = Type.Object({ explain: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'adds `evidence` (same price)' })) });

export const lookupIp = (s: Services, metrics: Metrics): RouteSpec => ({
  operation: OPERATIONS.lookupIp,
  schema: { params: Params, querystring: Query, response: { 200: Type.Ref('IpResult'), ...errorResponses([400, 401, 402, 403, 429]) } },
  // Not async: on the in-memory ledger the body is returned at once, with no promise per request.
  handler: (req: FastifyRequest<{ Params: { ip_address: string }; Querystring: { explain?: 'true' | 'false' } }>, reply) =>
    sendBilled(reply, metrics, OPERATIONS.lookupIp, s.lookup.lookupIp(callerOf(req), req.params.ip_address, { explain: req.query.explain === 'true' })),
});

