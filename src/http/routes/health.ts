import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import type { RouteSpec } from '../route-spec.ts';
import { Health } from '../schemas.ts';
import { VERSION } from '../../version.ts';

/**
 * Plain application/json (not problem+json), 200 or 503, no key, no rate limit. Both answers name the
 * version, so an operator (or a rolling deploy's check) sees which build each node behind a balancer runs.
 */
export const health = (s: Services): RouteSpec => ({
  operation: OPERATIONS.health,
  schema: { response: { 200: Health, 503: Health } },
  handler: async (_req, reply) => {
    const report = await s.health();
    if (report.status === 'ok') return { status: 'ok', version: VERSION, exports: report.exports };
    reply.code(503);
    return { status: report.status, version: VERSION, problems: report.problems, ...(report.exports && { exports: report.exports }) };
  },
});
