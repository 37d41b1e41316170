import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomRanges4, randomRanges6, rng, words } from '../../../test/helpers/random-ranges.ts';
import {
  BLOCK_INDEX4_WORDS,
  blockIndex4,
  compare6,
  find4,
  find6,
  find6Index,
  findSegment4,
  index6,
  index6Words,
  mergeTables4,
  mergeTables6,
  NONE,
  PairInterner,
  SPLIT,
  V4TableBuilder,
  V6TableBuilder,
} from './range-table.ts';

describe(V4TableBuilder.name, () => {
  it('should answer exact edges, gaps, merged neighbours and clipped overlaps', () => {
    const b = new V4TableBuilder();
    b.add(10, 19, 1);
    b.add(20, 29, 1); // merges with the previous
    b.add(40, 49, 2);
    b.add(45, 60, 3); // overlap clipped to 50..60
    b.add(0xfffffff0, 0xffffffff, 4);
    const { starts, vals } = b.finish();
    const at = (ip: number) => find4(starts, vals, ip);
    assert.deepEqual(
      [at(0), at(9), at(10), at(29), at(30), at(39), at(40), at(49), at(50), at(60), at(61)],
      [NONE, NONE, 1, 1, NONE, NONE, 2, 2, 3, 3, NONE],
    );
    assert.equal(at(0xffffffff), 4);
    assert.equal(at(0xffffffef), NONE);
    assert.equal(starts.length, 7);
  });
});

describe(V6TableBuilder.name, () => {
  it('should answer edges across word boundaries and the top of the space', () => {
    const w = (a: number, b: number, c: number, d: number) => new Uint32Array([a, b, c, d]);
    const b = new V6TableBuilder();
    b.add(w(0x20010db8, 0, 0, 0), w(0x20010db8, 0, 0xffffffff, 0xffffffff), 7);
    b.add(w(0x20010db8, 1, 0, 0), w(0x20010db8, 1, 0, 0), 8);
    b.add(w(0xffffffff, 0xffffffff, 0xffffffff, 0), w(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), 9);
    const { starts, vals } = b.finish();
    const at = (ip: Uint32Array) => find6(starts, vals, ip);
    assert.equal(at(w(0x20010db7, 0xffffffff, 0xffffffff, 0xffffffff)), NONE);
    assert.equal(at(w(0x20010db8, 0, 0, 0)), 7);
    assert.equal(at(w(0x20010db8, 0, 0xffffffff, 0xffffffff)), 7);
    assert.equal(at(w(0x20010db8, 1, 0, 0)), 8);
    assert.equal(at(w(0x20010db8, 1, 0, 1)), NONE);
    assert.equal(at(w(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff)), 9);
    assert.equal(at(w(0, 0, 0, 1)), NONE);
  });
});

const table4 = (ranges: Array<[number, number, number]>) => {
  const b = new V4TableBuilder();
  for (const [s, e, v] of ranges) b.add(s, e, v);
  return b.finish();
};
const table6 = (ranges: Array<[bigint, bigint, number]>) => {
  const b = new V6TableBuilder();
  for (const [s, e, v] of ranges) b.add(words(s), words(e), v);
  return b.finish();
};

/** Every start of either table and its neighbours, as the addresses most likely to expose an off-by-one. */
function edges4(...tables: Array<{ starts: Uint32Array }>): number[] {
  const out: number[] = [0, 0xffffffff];
  for (const t of tables) for (const s of t.starts) for (const d of [-1, 0, 1]) if (s + d >= 0 && s + d <= 0xffffffff) out.push(s + d);
  return out;
}

let stale: Int32Array | undefined;

function checkMerged4(
  net: { starts: Uint32Array; vals: Uint32Array },
  loc: { starts: Uint32Array; vals: Uint32Array },
  ips: Iterable<number>,
): void {
  const pairs = new PairInterner();
  const merged = mergeTables4(net, loc, pairs);
  const pw = pairs.view();
  const direct = blockIndex4(merged, pw);
  // The loader writes it over the previous load's index, pausing every step: every entry is written.
  stale ??= new Int32Array(BLOCK_INDEX4_WORDS);
  stale.fill(0x5a5a5a5a);
  let pauses = 0;
  blockIndex4(merged, pw, stale, { blocks: 1 << 18, pause: () => pauses++ });
  assert.ok(Buffer.from(stale.buffer).equals(Buffer.from(direct.buffer)), 'the same index over stale memory');
  assert.ok(pauses >= 63, `paused every 2 MiB (${pauses} pauses)`);
  for (const ip of ips) {
    const want = [find4(net.starts, net.vals, ip) | 0, find4(loc.starts, loc.vals, ip) | 0];
    const p = find4(merged.starts, merged.segs, ip);
    // deepEqual only on a mismatch, for its message: a million calls of it would dominate the run.
    if ((pw[2 * p]! | 0) !== want[0] || (pw[2 * p + 1]! | 0) !== want[1])
      assert.deepEqual([pw[2 * p]! | 0, pw[2 * p + 1]! | 0], want, `merged table at ${ip}`);
    // The block index as the loader reads it.
    const h = ip >>> 8;
    let got = [direct[2 * h]! - 1, direct[2 * h + 1]! - 1];
    if (got[0] === SPLIT) {
      const q = merged.segs[findSegment4(merged.starts, got[1]!, ip)]!;
      got = [pw[2 * q]! | 0, pw[2 * q + 1]! | 0];
    }
    if (got[0] !== want[0] || got[1] !== want[1]) assert.deepEqual(got, want, `block index at ${ip}`);
  }
  for (let k = 1; k < merged.segs.length; k++) {
    assert.notEqual(merged.segs[k], merged.segs[k - 1], 'equal neighbours merged');
    assert.ok(merged.starts[k]! > merged.starts[k - 1]!, 'starts strictly ascending: no empty segments');
  }
}

function checkMerged6(
  net: { starts: Uint32Array; vals: Uint32Array },
  loc: { starts: Uint32Array; vals: Uint32Array },
  ips: Iterable<Uint32Array>,
): void {
  const pairs = new PairInterner();
  const merged = mergeTables6(net, loc, pairs);
  const pw = pairs.view();
  // With the default threshold (small tables: the top index alone), and a low one, so the small
  // random tables get second-level indexes too.
  const top = index6(merged.starts);
  const idx = index6(merged.starts, 16);
  if (merged.segs.length > 1000) assert.ok(idx.sub.length > 0, 'some blocks have a second-level index');
  // Written into memory set aside for it (as the dataset loader's arenas do), over stale contents: the same index.
  const memory = new Uint32Array(index6Words(merged.starts.length / 4, 16) + 3).fill(0xdeadbeef);
  const inMemory = index6(merged.starts, 16, memory);
  assert.deepEqual([inMemory.top, inMemory.subOf, inMemory.sub], [idx.top, idx.subOf, idx.sub]);
  assert.ok(
    inMemory.top.buffer === memory.buffer && inMemory.subOf.buffer === memory.buffer && inMemory.sub.buffer === memory.buffer,
    'no new buffers',
  );
  if (idx.sub.length > 0)
    assert.throws(
      () => index6(merged.starts, 16, memory.subarray(0, 2 * 65_536 + 1 + idx.sub.length - 1)),
      /the IPv6 index needs \d+ words/,
    );
  for (const ip of ips) {
    const want = [find6(net.starts, net.vals, ip), find6(loc.starts, loc.vals, ip)];
    const p = find6(merged.starts, merged.segs, ip);
    if (pw[2 * p] !== want[0] || pw[2 * p + 1] !== want[1])
      assert.deepEqual([pw[2 * p], pw[2 * p + 1]], want, `merged table at ${ip.join(':')}`);
    if (find6Index(merged.starts, merged.segs, top, ip) !== p) assert.equal(find6Index(merged.starts, merged.segs, top, ip), p);
    if (find6Index(merged.starts, merged.segs, idx, ip) !== p)
      assert.equal(find6Index(merged.starts, merged.segs, idx, ip), p, `two-level index at ${ip.join(':')}`);
  }
  for (let k = 1; k < merged.segs.length; k++) {
    assert.notEqual(merged.segs[k], merged.segs[k - 1], 'equal neighbours merged');
    assert.equal(compare6(merged.starts, 4 * k, merged.starts, 4 * (k - 1)), 1, 'starts strictly ascending: no empty segments');
  }
}

function* edges6(...tables: Array<{ starts: Uint32Array }>): Generator<Uint32Array> {
  yield words(0n);
  yield words((1n << 128n) - 1n);
  for (const t of tables) {
    for (let k = 0; k < t.starts.length; k += 4) {
      const x =
        (BigInt(t.starts[k]!) << 96n) | (BigInt(t.starts[k + 1]!) << 64n) | (BigInt(t.starts[k + 2]!) << 32n) | BigInt(t.starts[k + 3]!);
      for (const d of [-1n, 0n, 1n]) if (x + d >= 0n && x + d < 1n << 128n) yield words(x + d);
    }
  }
}

describe(mergeTables4.name, () => {
  it('should give the pair of the two separate tables at every boundary of a small table', () => {
    const net = table4([
      [10, 19, 1],
      [20, 29, 1],
      [40, 49, 2],
      [45, 300, 3],
      [0xffffff00, 0xffffffff, 4],
    ]);
    const loc = table4([
      [0, 14, 7],
      [15, 40, 8],
      [41, 41, 9],
      [256, 511, 8],
      [512, 700, 8],
      [0xfffffffe, 0xffffffff, 7],
    ]);
    checkMerged4(net, loc, edges4(net, loc));
    // Both tables share start 0 and 0xffffffff ends; one with no ranges at all is one gap.
    checkMerged4(table4([]), loc, edges4(loc));
  });

  it('should give the pair of the two separate tables for random addresses and all boundaries of large tables', () => {
    const random = rng(4);
    const net = table4(randomRanges4(random, 20_000, 50));
    const loc = table4(randomRanges4(random, 200_000, 500));
    const ips = Array.from({ length: 1_000_000 }, () => Math.floor(random() * 2 ** 32));
    checkMerged4(net, loc, [...ips, ...edges4(net, loc)]);
  });
});

describe(mergeTables6.name, () => {
  it('should give the pair of the two separate tables at every boundary of a small table', () => {
    const net = table6([
      [0x20010db8n << 96n, (0x20010db8n << 96n) + (1n << 64n) - 1n, 1],
      [0x2a000000n << 96n, (0x2a000000n << 96n) + 255n, 2],
      [(1n << 128n) - 16n, (1n << 128n) - 1n, 3],
    ]);
    const loc = table6([
      [(0x20010db8n << 96n) + 5n, (0x20010db8n << 96n) + (1n << 65n), 4],
      [(0x2a000000n << 96n) + 255n, (0x2a000000n << 96n) + 255n, 5],
      [(1n << 128n) - 1n, (1n << 128n) - 1n, 4],
    ]);
    checkMerged6(net, loc, edges6(net, loc));
  });

  it('should give the pair of the two separate tables for random addresses and all boundaries of large tables', () => {
    const random = rng(6);
    const net = table6(randomRanges6(random, 4_000, 50));
    const loc = table6(randomRanges6(random, 40_000, 500));
    const starts = [0x20010db8, 0x2a000000, 0x2a000001, 0x26000000];
    const ips = Array.from({ length: 200_000 }, () => {
      const w = words(BigInt(Math.floor(random() * 2 ** 32)) << 96n);
      // Mostly in the dense prefixes, where both tables have ranges.
      if (random() < 0.9) w[0] = starts[Math.floor(random() * starts.length)]!;
      w[1] = random() < 0.5 ? Math.floor(random() * 4) : Math.floor(random() * 2 ** 32);
      w[2] = Math.floor(random() * 2 ** 32);
      w[3] = Math.floor(random() * 2 ** 32);
      return w;
    });
    checkMerged6(net, loc, [...ips, ...edges6(net, loc)]);
  });
});
