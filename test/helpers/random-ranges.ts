/**
 * Random but reproducible range tables for the index tests: shaped like the real data (tiny, /24-aligned and large ranges, gaps, overlaps,
 * repeated values).
 */

import { mulberry32 } from '../../src/lib/prng.ts';

/** A deterministic PRNG, so a failure reproduces. */
export const rng = mulberry32;

/** Ascending v4 ranges with gaps, overlaps (clipped by the builder), /24-aligned and tiny ones, few values so neighbours repeat. */
export function randomRanges4(random: () => number, count: number, values: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  let at = 0;
  for (let k = 0; k < count && at <= 0xffffffff; k++) {
    const r = random();
    const size = r < 0.3 ? 1 + Math.floor(random() * 300) : r < 0.7 ? 256 * (1 + Math.floor(random() * 8)) : Math.floor(random() * 2 ** 20);
    const gap = random() < 0.5 ? 0 : random() < 0.3 ? -Math.floor(random() * 100) : Math.floor(random() * 2 ** 16);
    const start = Math.max(0, Math.min(0xffffffff, at + gap));
    const end = Math.min(0xffffffff, start + size);
    out.push([start, end, Math.floor(random() * values)]);
    at = end + 1;
  }
  return out;
}

/** A 128-bit address as the four big-endian words the tables use. */
export const words = (x: bigint): Uint32Array =>
  new Uint32Array([
    Number((x >> 96n) & 0xffffffffn),
    Number((x >> 64n) & 0xffffffffn),
    Number((x >> 32n) & 0xffffffffn),
    Number(x & 0xffffffffn),
  ]);

/** Ascending v6 ranges in a few dense prefixes, the rest of the space a gap. */
export function randomRanges6(random: () => number, count: number, values: number): Array<[bigint, bigint, number]> {
  const out: Array<[bigint, bigint, number]> = [];
  const prefixes = [0x20010db8n, 0x2a000000n, 0x2a000001n, 0x26000000n];
  const per = Math.ceil(count / prefixes.length);
  for (const p of prefixes) {
    let at = p << 96n;
    for (let k = 0; k < per; k++) {
      const bits = BigInt([0, 8, 64, 72, 80][Math.floor(random() * 5)]!);
      const size = (BigInt(Math.floor(random() * 256)) << bits) + BigInt(Math.floor(random() * 3));
      const gap = random() < 0.5 ? 0n : BigInt(Math.floor(random() * 2 ** 20)) << 64n;
      const start = at + gap;
      out.push([start, start + size, Math.floor(random() * values)]);
      at = start + size + 1n;
    }
  }
  return out;
}
