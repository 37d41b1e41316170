import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import type { RouteSpec } from '../route-spec.ts';
import { AccountInfo, errorResponses } from '../schemas.ts';

export const accountMe = (s: Services): RouteSpec => ({
  operation: OPERATIONS.accountMe,
  schema: { response: { 200: AccountInfo, ...errorResponses([401, 403, 429, 503]) } },
  handler: async (req) => s.accounts.accountInfo(callerOf(req)),
});
