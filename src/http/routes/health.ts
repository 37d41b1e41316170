import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import type { RouteSpec } from '../route-spec.ts';
import { Health } from '../schemas.ts';

/** Plain application/json (not problem+json), 200 or 503, no key, no rate limit. */
export const health = (s: Services): RouteSpec => ({
  operation: OPERATIONS.health,
  schema: { response: { 200: Health, 503: Health } },
  handler: async (_req, reply) => {
    const report = await s.health();
    if (report.status === 'ok') return { status: 'ok', exports: report.exports };
    reply.code(503);
    return report;
  },
});
