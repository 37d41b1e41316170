import { parseIp, type ParsedIp } from '../../lib/ip-address.ts';

export const MAX_BATCH = 1000;

export interface BatchPlan {
  /** Unique valid addresses in order of first appearance (duplicates decided on the canonical form). */
  addresses: ParsedIp[];
  /** Rejected inputs, each once, in input order. */
  invalid: string[];
  cost: number;
}

/** ceil(n × 0.9) credits for n unique valid addresses. Integer math avoids 0.9's float error. */
export const batchCost = (n: number): number => Math.ceil((n * 9) / 10);

/** Deduplicates, validates and prices a batch. Pure: billing happens elsewhere, in one ledger call. */
export function planBatch(inputs: readonly string[]): BatchPlan {
  const seen = new Set<string>();
  const rejected = new Set<string>();
  const addresses: ParsedIp[] = [];
  const invalid: string[] = [];
  for (const input of inputs) {
    const ip = parseIp(input);
    if (!ip) {
      if (!rejected.has(input)) {
        rejected.add(input);
        invalid.push(input);
      }
      continue;
    }
    if (seen.has(ip.text)) continue;
    seen.add(ip.text);
    addresses.push(ip);
  }
  return { addresses, invalid, cost: batchCost(addresses.length) };
}
