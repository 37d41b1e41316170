import { bumpSeries, newSeries, sumSeries, trimSeries, type DaySeries } from './day-series.ts';

/**
 * Bounded key counts for one domain over the day ring: each key (subdomain, port, ASN, country) is
 * stored once, with its counts per day as a DaySeries. A record keeps at most COUNTER_LIMIT keys: when a
 * new key would exceed that, the COUNTER_KEEP with the most events in the ring stay and the rest are
 * dropped. Counts stay exact until a domain sees more than COUNTER_LIMIT distinct keys in the ring
 * (random-label floods, port sweeps); after that a dropped key that comes back restarts from 1, so only
 * heavy hitters are reported reliably, which is all a top-10 needs. Shrinking sorts COUNTER_LIMIT
 * entries once per COUNTER_KEEP new keys: O(log n) amortised.
 */
export const COUNTER_KEEP = 256;
export const COUNTER_LIMIT = 2 * COUNTER_KEEP;

export type KeyDays<K> = Map<K, DaySeries>;

/** oldest: the first day the ring still holds; older entries are dropped as keys move on. */
export function bumpKeyDay<K>(counts: KeyDays<K>, key: K, day: number, oldest: number): void {
  const s = counts.get(key);
  if (s !== undefined) return bumpSeries(s, day, oldest);
  if (counts.size >= COUNTER_LIMIT) shrink(counts, oldest);
  counts.set(key, newSeries(day));
}

function shrink<K>(counts: KeyDays<K>, oldest: number): void {
  const ranked: Array<[K, number]> = [];
  for (const [k, s] of counts) ranked.push([k, sumSeries(s, oldest, Infinity)]);
  ranked.sort((a, b) => b[1] - a[1]);
  for (let i = COUNTER_KEEP; i < ranked.length; i++) counts.delete(ranked[i]![0]);
}

/** Drops days before oldest, and keys left with none. */
export function trimKeyDays<K>(counts: KeyDays<K>, oldest: number): void {
  for (const [k, s] of counts) {
    trimSeries(s, oldest);
    if (s.length === 0) counts.delete(k);
  }
}

/** (key, day) entries held, for estimateMemory. */
export function keyDayEntries(counts: ReadonlyMap<unknown, DaySeries> | undefined): number {
  let n = 0;
  for (const s of counts?.values() ?? []) n += s.length;
  return n;
}

/**
 * The n keys with most events on the days from ≤ day < to, most first, ties by key ascending; one pass
 * with an n-slot insertion list, no per-summary map.
 */
export function topInWindow<K extends string | number>(
  counts: KeyDays<K> | undefined,
  from: number,
  to: number,
  n: number,
): Array<[K, number]> {
  const best: Array<[K, number]> = [];
  if (!counts) return best;
  for (const [k, s] of counts) {
    const c = sumSeries(s, from, to);
    if (c > 0) insertTop(best, k, c, n);
  }
  return best;
}

/** The n largest counts, most first, ties by key ascending. */
export function topCounts<K extends string | number>(counts: Map<K, number>, n: number): Array<[K, number]> {
  const best: Array<[K, number]> = [];
  for (const [k, c] of counts) insertTop(best, k, c, n);
  return best;
}

function insertTop<K extends string | number>(best: Array<[K, number]>, k: K, c: number, n: number): void {
  if (best.length === n) {
    const last = best[n - 1]!;
    if (c < last[1] || (c === last[1] && k > last[0])) return;
    best.pop();
  }
  let i = best.length;
  while (i > 0 && (best[i - 1]![1] < c || (best[i - 1]![1] === c && best[i - 1]![0] > k))) i--;
  best.splice(i, 0, [k, c]);
}
