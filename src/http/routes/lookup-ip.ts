import { type Static, Type } from 'typebox';
import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import type { Metrics } from '../../metrics.ts';
import { answeredRoute, billedReply, type AnsweredRouteSpec } from '../route-spec.ts';
import { errorResponses, IpResult } from '../schemas.ts';

const Params = Type.Object({ ip_address: Type.String({ maxLength: 256, description: 'IPv4 or IPv6 (raw colons allowed)' }) });
// The query validator coerces only the texts `true` and `false` to a boolean: `explain=1` or `explain=maybe` is a 400.
const Query = Type.Object({
  explain: Type.Optional(Type.Boolean({ default: false, description: 'true adds `evidence`, the source of every value (same price)' })),
});

/**
 * GET /lookup/ip/{ip_address}. Its answer is the one place this operation's reply is made: fastify's
 * route and the fast path in front of fastify (http/fast-route.ts) both call it, so a new query member
 * or response header goes here (and into the schema) and nowhere else.
 */
export const lookupIp = (s: Services, metrics: Metrics): AnsweredRouteSpec =>
  answeredRoute(
    OPERATIONS.lookupIp,
    { params: Params, querystring: Query, response: { 200: Type.Ref('IpResult'), ...errorResponses([400, 401, 402, 403, 429, 503]) } },
    (caller, params: Static<typeof Params>, query: Static<typeof Query>) =>
      billedReply(metrics, OPERATIONS.lookupIp, s.lookup.lookupIp(caller, params.ip_address, { explain: query.explain === true })),
    IpResult,
  );
