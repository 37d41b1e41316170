/**
 * Random routed addresses: what the C-client lookup bench sends and what the byte-identity tests (fast
 * path vs fastify, HTTP vs gRPC) compare, from one deterministic generator, so the tests cover the very
 * sample the bench measures. An address is drawn by picking an announced range of the packaged ASN data
 * uniformly (then an address uniformly inside it), not by address space: the big legacy blocks would
 * otherwise take most draws and the sample would touch few distinct records, which hides first-touch
 * costs that real traffic (many networks) pays.
 *
 * Every kind draws from its own generator seeded by (seed, kind), so the first k addresses of a list of
 * n are the list of k: a test's sample is a prefix of the bench's.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packagedSources } from '../../src/modules/dataset/dataset-builder.ts';
import { mulberry32 } from '../../src/lib/prng.ts';

export type AddressKind = 'v4' | 'v6' | 'mixed';

/** The seed the bench uses unless told otherwise (UMBRA_BENCH_SEED). */
export const BENCH_SEED = 21;

interface Routed {
  /** Announced IPv4 ranges as [start, end] pairs. */
  v4: Float64Array;
  v6Start: bigint[];
  v6Size: bigint[];
}

let routed: Routed | undefined;

/** The announced ranges of the packaged ASN data (its numeric CSVs: start,end,asn,name). */
function load(): Routed {
  if (routed) return routed;
  const dir = dirname(packagedSources().asnV4);
  const rows = (file: string) => readFileSync(join(dir, file), 'utf8').split('\n');
  const v4: number[] = [];
  for (const line of rows('asn-ipv4-num.csv')) {
    const a = line.indexOf(',');
    if (a <= 0) continue;
    const b = line.indexOf(',', a + 1);
    v4.push(Number(line.slice(0, a)), Number(line.slice(a + 1, b)));
  }
  const v6Start: bigint[] = [];
  const v6Size: bigint[] = [];
  for (const line of rows('asn-ipv6-num.csv')) {
    const a = line.indexOf(',');
    if (a <= 0) continue;
    const b = line.indexOf(',', a + 1);
    const start = BigInt(line.slice(0, a));
    v6Start.push(start);
    v6Size.push(BigInt(line.slice(a + 1, b)) - start + 1n);
  }
  if (v4.length < 2000 || v6Start.length < 1000) throw new Error(`too few announced ranges in ${dir}`);
  routed = { v4: Float64Array.from(v4), v6Start, v6Size };
  return routed;
}

const v4Text = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
export function v6Text(x: bigint): string {
  const g: number[] = [];
  // Four 32-bit words first: eight BigInt shifts per address made the bench's list slow to build.
  for (let i = 3; i >= 0; i--) {
    const w = Number(BigInt.asUintN(32, x >> BigInt(i * 32)));
    g.push(w >>> 16, w & 0xffff);
  }
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((n) => n.toString(16))
      .join(':');
  return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLen, 8)}`;
}

function drawV4(r: Routed, random: () => number): string {
  const i = Math.floor(random() * (r.v4.length / 2));
  const start = r.v4[2 * i]!;
  const end = r.v4[2 * i + 1]!;
  return v4Text(start + Math.floor(random() * (end - start + 1)));
}

function drawV6(r: Routed, random: () => number): string {
  const i = Math.floor(random() * r.v6Start.length);
  const size = r.v6Size[i]!;
  // 128 random bits reduced modulo the range's size (a bias below 2^-64 for any announced range).
  const offset =
    (BigInt(Math.floor(random() * 2 ** 32)) << 96n) |
    (BigInt(Math.floor(random() * 2 ** 32)) << 64n) |
    (BigInt(Math.floor(random() * 2 ** 32)) << 32n) |
    BigInt(Math.floor(random() * 2 ** 32));
  return v6Text(r.v6Start[i]! + (offset % size));
}

/** A seed per (seed, kind), so the kinds' sequences are independent of each other's lengths. */
const seeded = (seed: number, kind: AddressKind) => mulberry32(Math.imul(seed, 0x9e3779b1) ^ { v4: 4, v6: 6, mixed: 46 }[kind]);

/** Size of the mixed list's recurring set: addresses that come back all through the list. */
const HOT = 4096;

/**
 * `count` addresses of one kind: `v4` and `v6` fresh draws from the announced ranges; `mixed` as a
 * lookup log might read, per 10 addresses 5 from a recurring set of 4,096 (3 in 4 IPv4), 4 fresh IPv4
 * and 1 fresh IPv6.
 */
export function routedAddresses(kind: AddressKind, count: number, seed = BENCH_SEED): string[] {
  const r = load();
  const random = seeded(seed, kind);
  const out: string[] = new Array(count);
  if (kind === 'v4') for (let i = 0; i < count; i++) out[i] = drawV4(r, random);
  else if (kind === 'v6') for (let i = 0; i < count; i++) out[i] = drawV6(r, random);
  else {
    const hot = Array.from({ length: HOT }, (_, i) => (i % 4 === 3 ? drawV6(r, random) : drawV4(r, random)));
    for (let i = 0; i < count; i++) {
      const slot = i % 10;
      out[i] = slot < 5 ? hot[Math.floor(random() * HOT)]! : slot < 9 ? drawV4(r, random) : drawV6(r, random);
    }
  }
  return out;
}

/** The bench's batches of 1,000 for POST /lookup/ips: 800 IPv4 and 200 IPv6, 4 to 1, in list order. */
export function routedBatches(count: number, seed = BENCH_SEED): string[][] {
  const v4 = routedAddresses('v4', count * 800, seed);
  const v6 = routedAddresses('v6', count * 200, seed);
  return Array.from({ length: count }, (_, b) => {
    const ips: string[] = [];
    for (let i = 0; i < 200; i++) ips.push(...v4.slice(b * 800 + i * 4, b * 800 + i * 4 + 4), v6[b * 200 + i]!);
    return ips;
  });
}
