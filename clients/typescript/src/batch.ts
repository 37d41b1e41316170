import { isIP } from 'node:net';
import type { UmbraClient } from './client.js';
import { UmbraError } from './errors.js';
import type { IpResult } from './types.js';

export interface LookupManyOptions {
  /** Addresses per request, 1 to 1,000 (default 1,000: the service's maximum). */
  batchSize?: number;
  /** Batches in flight at once (default: the client's `concurrency`). */
  concurrency?: number;
  /** Called as each batch completes (in completion order). */
  onBatch?: (batch: BatchReport) => void;
  signal?: AbortSignal;
}

export interface BatchReport {
  /** 0-based position of the batch in input order. */
  index: number;
  /** Addresses sent. */
  size: number;
  /** Results the service returned (unique valid addresses). */
  results: number;
  /** Credits charged: ceil(results x 0.9), the service's batch price. */
  credits: number;
  /** `X-Credits-Remaining` after the batch. */
  creditsRemaining: number | undefined;
}

export interface LookupManyResult {
  /** One entry per input, in input order; `undefined` for an address the service rejected. */
  results: Array<IpResult | undefined>;
  /** Rejected inputs, each once, in input order. */
  invalid: string[];
  /** Every batch, in input order. */
  batches: BatchReport[];
  /** Credits charged in all. */
  credits: number;
}

/** A batch failed; `partial` holds what the batches that completed returned (and were charged for). */
export class LookupManyError extends UmbraError {
  override name = 'LookupManyError';
  readonly partial: LookupManyResult;
  constructor(cause: unknown, partial: LookupManyResult) {
    super(`lookupMany stopped: ${(cause as Error).message}`, { cause });
    this.partial = partial;
  }
}

/**
 * The service's canonical form of an address (compressed lower-case IPv6; an IPv4-mapped IPv6 is the
 * IPv4 address), the form results carry in `ip`, so each input finds its result. Undefined: invalid.
 */
export function canonicalIp(s: string): string | undefined {
  const t = s.trim();
  const kind = isIP(t);
  if (kind === 4) return t;
  if (kind !== 6) return undefined;
  const host = new URL(`http://[${t}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = Number.parseInt(mapped[1]!, 16);
    const lo = Number.parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return host;
}

export async function lookupMany(client: UmbraClient, input: Iterable<string>, options: LookupManyOptions): Promise<LookupManyResult> {
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000)
    throw new RangeError('batchSize must be an integer from 1 to 1,000');
  const concurrency = options.concurrency ?? client.concurrency;
  const inputs = [...input];
  // Each distinct input string is sent once: the service charges a repeat in another batch again.
  const firstIndex = new Map<string, number>();
  const unique: string[] = [];
  for (const ip of inputs) {
    if (!firstIndex.has(ip)) {
      firstIndex.set(ip, unique.length);
      unique.push(ip);
    }
  }
  const byUnique: Array<IpResult | undefined> = new Array(unique.length);
  const rejected = new Set<string>();
  const batchCount = Math.ceil(unique.length / batchSize);
  const batches: Array<BatchReport | undefined> = new Array(batchCount);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;

  const worker = async () => {
    while (!failure && next < batchCount) {
      const index = next++;
      const from = index * batchSize;
      const ips = unique.slice(from, from + batchSize);
      try {
        const answer = await client.lookupIps(ips, signal);
        const byIp = new Map<string, IpResult>();
        for (const r of answer.body.results) byIp.set(r.ip, r);
        for (const bad of answer.body.invalid ?? []) rejected.add(bad);
        ips.forEach((ip, i) => {
          const c = canonicalIp(ip);
          byUnique[from + i] = (c === undefined ? undefined : byIp.get(c)) ?? byIp.get(ip);
          if (byUnique[from + i] === undefined) rejected.add(ip);
        });
        const report = {
          index,
          size: ips.length,
          results: answer.body.results.length,
          credits: Math.ceil(answer.body.results.length * 0.9),
          creditsRemaining: answer.creditsRemaining,
        };
        batches[index] = report;
        options.onBatch?.(report);
      } catch (e) {
        // A batch the service refused as a whole (all invalid: 400) has no results and costs nothing.
        if ((e as { status?: number }).status === 400 && (e as { errors?: Record<string, string[]> }).errors?.ips) {
          for (const ip of ips) rejected.add(ip);
          batches[index] = { index, size: ips.length, results: 0, credits: 0, creditsRemaining: undefined };
          continue;
        }
        failure ??= { error: e };
        stop.abort(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batchCount) }, worker));
  const done = batches.filter((b): b is BatchReport => b !== undefined);
  const result: LookupManyResult = {
    results: inputs.map((ip) => byUnique[firstIndex.get(ip)!]),
    invalid: unique.filter((ip) => rejected.has(ip)),
    batches: done,
    credits: done.reduce((s, b) => s + b.credits, 0),
  };
  if (failure) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new LookupManyError(failure.error, result);
  }
  return result;
}
