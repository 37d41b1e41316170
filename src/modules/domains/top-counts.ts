/**
 * Bounded key counts for one domain and one day. A day keeps at most COUNTER_LIMIT keys: when a new key
 * would exceed that, the COUNTER_KEEP most frequent stay and the rest are dropped. Counts stay exact
 * until a day sees more than COUNTER_LIMIT distinct keys (random-label floods, port sweeps); after that a
 * dropped key that comes back restarts from 1, so only heavy hitters are reported reliably, which is all
 * a top-10 needs. Shrinking sorts COUNTER_LIMIT entries once per COUNTER_KEEP new keys: O(log n) amortised.
 */
export const COUNTER_KEEP = 256;
export const COUNTER_LIMIT = 2 * COUNTER_KEEP;

export function bump<K>(counts: Map<K, number>, key: K): void {
  const c = counts.get(key);
  if (c !== undefined) {
    counts.set(key, c + 1);
    return;
  }
  if (counts.size >= COUNTER_LIMIT) {
    const ranked = [...counts].sort((a, b) => b[1] - a[1]);
    for (let i = COUNTER_KEEP; i < ranked.length; i++) counts.delete(ranked[i]![0]);
  }
  counts.set(key, 1);
}

export function addAll<K>(into: Map<K, number>, from: Map<K, number>): void {
  for (const [k, c] of from) into.set(k, (into.get(k) ?? 0) + c);
}

/** The n largest counts, most first, ties by key ascending; one pass with an n-slot insertion list. */
export function topCounts<K extends string | number>(counts: Map<K, number>, n: number): Array<[K, number]> {
  const best: Array<[K, number]> = [];
  for (const [k, c] of counts) {
    if (best.length === n) {
      const last = best[n - 1]!;
      if (c < last[1] || (c === last[1] && k > last[0])) continue;
      best.pop();
    }
    let i = best.length;
    while (i > 0 && (best[i - 1]![1] < c || (best[i - 1]![1] === c && best[i - 1]![0] > k))) i--;
    best.splice(i, 0, [k, c]);
  }
  return best;
}
