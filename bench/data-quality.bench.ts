// `npm run bench -- data-quality`: umbra's answers against ground truth it did not produce, as
// sample sizes and shares right. Rerun after any change to the dataset build, the lists or the
// intelligence rules; docs/intelligence.md keeps the figures.
import { share } from './data-quality/check.ts';
import { CHECKS } from './data-quality/checks.ts';

export async function benchDataQuality(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const [area, run] of Object.entries(CHECKS)) {
    for (const r of await run()) {
      out[`${area}: ${r.name}`] = `${r.right}/${r.sample} right (${share(r)})${r.detail ? ` — ${r.detail}` : ''}`;
    }
  }
  return out;
}
