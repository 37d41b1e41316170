import type { Rng } from './types.ts';

import { mulberry32 } from '../../lib/prng.ts';

export { mulberry32 };

/** FNV-1a of a string: seeds the stable pools, so a provider's sticky IPs survive restarts. */
export function seedFrom(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A PRNG that depends only on the label: for data that must be the same in every run. */
export function stableRng(label: string): Rng {
  return mulberry32(seedFrom(label));
}

/** Integer in [min, max], both inclusive. */
export function int(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function chance(rng: Rng, p: number): boolean {
  return rng() < p;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pick from an empty list');
  return items[Math.floor(rng() * items.length)]!;
}

/** Picks by relative weight; entries are [item, weight]. */
export function weighted<T>(rng: Rng, entries: ReadonlyArray<readonly [T, number]>): T {
  let total = 0;
  for (const [, w] of entries) total += w;
  let r = rng() * total;
  for (const [item, w] of entries) {
    r -= w;
    if (r < 0) return item;
  }
  return entries[entries.length - 1]![0];
}

/** Weights 1/(rank+1)^s: a few items get most of the traffic, as with real honeypot domains. */
export function zipfWeights<T>(items: readonly T[], s = 1.1): Array<readonly [T, number]> {
  return items.map((item, rank) => [item, 1 / (rank + 1) ** s] as const);
}

const HEX = '0123456789abcdef';
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function hex(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += HEX[Math.floor(rng() * 16)];
  return s;
}

export function alnum(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALNUM[Math.floor(rng() * ALNUM.length)];
  return s;
}

/** Uniform over [0, 2^bits) as a bigint, drawn 32 bits at a time (mulberry32's resolution). */
export function randomBits(rng: Rng, bits: number): bigint {
  let v = 0n;
  for (let left = bits; left > 0; left -= 32) {
    const take = Math.min(32, left);
    v = (v << BigInt(take)) | BigInt(Math.floor(rng() * 2 ** take));
  }
  return v;
}
