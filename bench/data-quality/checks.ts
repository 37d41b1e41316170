import type { QualityCheck } from './check.ts';
import { demoProviderChecks, listChecks } from './lists.ts';

/** Every check of the data-quality report, by area; each area adds its own file and one line here. */
export const CHECKS: Record<string, QualityCheck> = {
  lists: async () => [...(await listChecks()), ...(await demoProviderChecks())],
};
