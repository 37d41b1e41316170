/**
 * One line of the data-quality report: a check of umbra's answers against ground truth umbra did not
 * produce (publishers' own range files, registry data, hand-checked labels), as a sample size and
 * the share answered right. Each area of the intelligence adds its checks in a file of this folder
 * and one entry in checks.ts.
 */
export interface QualityResult {
  /** What was checked, e.g. "network.type, 200 largest ASNs by address space". */
  name: string;
  /** How many cases were checked. */
  sample: number;
  /** How many of them umbra answered right. */
  right: number;
  /** What was counted as right, and the worst misses, in a line or two. */
  detail?: string;
}

export type QualityCheck = () => Promise<QualityResult[]>;

export const share = (r: QualityResult): string => (r.sample === 0 ? 'n/a' : `${((100 * r.right) / r.sample).toFixed(1)} %`);
