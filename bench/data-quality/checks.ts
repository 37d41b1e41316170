import type { QualityCheck } from './check.ts';
import { nettypeChecks } from './nettype.ts';

/** Every check of the data-quality report, by area; each area adds its own file and one line here. */
export const CHECKS: Record<string, QualityCheck> = {
  'network type and ownership': nettypeChecks,
};
