import type { QualityCheck } from './check.ts';
import { demoProviderChecks, listChecks } from './lists.ts';
import { locationChecks } from './locations.ts';
import { nettypeChecks } from './nettype.ts';
import { riskChecks } from './risk.ts';

/** Every check of the data-quality report, by area; each area adds its own file and one line here. */
export const CHECKS: Record<string, QualityCheck> = {
  'network type and ownership': nettypeChecks,
  lists: async () => [...(await listChecks()), ...(await demoProviderChecks())],
  risk: riskChecks,
  locations: locationChecks,
};
