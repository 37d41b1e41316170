/**
 * Counts of one thing per time unit (UTC day, day × hour, minute) as a plain array of doubles, one per
 * unit that saw events, units ascending. Each element packs `unit * 2^32 + count`, so an entry costs
 * 8 bytes with no object around it, and a thing seen on one day costs one element, not a 32-slot ring.
 * Units must stay below 2^21 (days and day × hour do, until the year 2200) and counts below 2^32.
 */
export type DaySeries = number[];

const UNIT = 2 ** 32;

export const unitOf = (v: number): number => Math.floor(v / UNIT);
export const countOf = (v: number): number => v % UNIT;

/**
 * Adds one event at `unit`. Units arrive mostly in order, so the newest entry is tried first; a late
 * one is inserted in place. Pushing a new unit first drops entries older than `oldest`, which keeps the
 * series as short as the ring it replaces.
 */
export function bumpSeries(s: DaySeries, unit: number, oldest: number): void {
  let i = s.length - 1;
  const last = i >= 0 ? unitOf(s[i]!) : -1;
  if (last === unit) {
    s[i]! += 1;
    return;
  }
  if (last < unit) {
    if (i >= 0 && unitOf(s[0]!) < oldest) trimSeries(s, oldest);
    s.push(unit * UNIT + 1);
    return;
  }
  if (unit < oldest) return;
  while (i >= 0 && unitOf(s[i]!) > unit) i--;
  if (i >= 0 && unitOf(s[i]!) === unit) s[i]! += 1;
  else s.splice(i + 1, 0, unit * UNIT + 1);
}

/** Drops the entries with unit < oldest. */
export function trimSeries(s: DaySeries, oldest: number): void {
  let k = 0;
  while (k < s.length && unitOf(s[k]!) < oldest) k++;
  if (k > 0) s.splice(0, k);
}

/** Events with from ≤ unit < to. */
export function sumSeries(s: DaySeries, from: number, to: number): number {
  let n = 0;
  for (let i = s.length - 1; i >= 0; i--) {
    const v = s[i]!;
    const u = unitOf(v);
    if (u < from) break;
    if (u < to) n += countOf(v);
  }
  return n;
}

/** A series holding one event at unit. */
export const newSeries = (unit: number): DaySeries => [unit * UNIT + 1];
