import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { OPERATIONS } from '../../operations.ts';
import { DEFAULT_RECENT, MAX_RECENT } from '../../modules/domains/domain-service.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import type { Metrics } from '../../metrics.ts';
import { sendBilled, type RouteSpec } from '../route-spec.ts';
import { DomainResult, errorResponses } from '../schemas.ts';

const Params = Type.Object({ domain: Type.String({ maxLength: 1024, description: 'Unicode or Punycode domain' }) });
const Query = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: DEFAULT_RECENT,
      description: `recent_events to return, at least 1; values above ${MAX_RECENT} are clamped to ${MAX_RECENT}`,
    }),
  ),
});

export const lookupDomain = (s: Services, metrics: Metrics): RouteSpec => ({
  operation: OPERATIONS.lookupDomain,
  schema: { params: Params, querystring: Query, response: { 200: DomainResult, ...errorResponses([400, 401, 402, 403, 429, 503]) } },
  handler: async (req: FastifyRequest<{ Params: Static<typeof Params>; Querystring: Static<typeof Query> }>, reply) =>
    sendBilled(reply, metrics, OPERATIONS.lookupDomain, await s.domains.lookup(callerOf(req), req.params.domain, req.query.limit)),
});
