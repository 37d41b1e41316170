import type { DatasetRanges } from '../../../src/modules/dataset/dataset-reader.ts';

/** A pair without data: its addresses get the record value nodeCount ("not found"). */
export const NO_DATA = 0xffffffff;

/**
 * The binary search tree, built top-down from the sorted segments: a block of the address space that
 * lies inside one segment is a record pointing at that segment's data, any other block a node whose two
 * halves are built the same way. Neighbouring segments never share a pair, so no two sibling leaves
 * have the same value and the tree is the smallest one. Walked twice, to count the nodes (which fix the
 * record size and the data pointers) and then to write them; node numbers are given in pre-order, so the
 * root is node 0 and both walks number alike. `offsets`: each pair's record in the data section, or
 * NO_DATA.
 */
export class TreeWriter {
  private nodes = 0;
  private nodeCount = 0;
  private setNode: (id: number, left: number, right: number) => void = () => {};
  /** The IPv4 subtree's record, made at ::/96 and reused at ::ffff:0:0/96; -1 until made. */
  private v4Root = -1;
  /** Block start (four words) per IPv6 depth 0..128, and the start of its upper half per depth. */
  private readonly prefix = new Uint32Array(4 * 129);
  private readonly mid = new Uint32Array(4 * 128);

  constructor(
    private readonly ranges: DatasetRanges,
    private readonly offsets: Uint32Array,
  ) {
    if (ranges.v4.starts[0] !== 0 || ranges.v6.starts.subarray(0, 4).some((w) => w !== 0))
      throw new RangeError('dataset segments must start at address 0');
  }

  count(): number {
    this.nodes = 0;
    this.v4Root = -1;
    this.setNode = () => {};
    this.node6(0, 0, this.ranges.v6.pairs.length - 1);
    return this.nodes;
  }

  write(nodeCount: number, recordSize: 24 | 28 | 32): Buffer {
    this.nodeCount = nodeCount;
    // Two records per node: 6, 7 or 8 bytes.
    const out = Buffer.alloc((nodeCount * recordSize) / 4);
    this.setNode =
      recordSize === 24
        ? (id, l, r) => {
            out.writeUIntBE(l, id * 6, 3);
            out.writeUIntBE(r, id * 6 + 3, 3);
          }
        : recordSize === 28
          ? (id, l, r) => {
              // The middle byte holds the top four bits of each record, the left one's first.
              const o = id * 7;
              out.writeUIntBE(l & 0xffffff, o, 3);
              out[o + 3] = ((l >>> 20) & 0xf0) | ((r >>> 24) & 0x0f);
              out.writeUIntBE(r & 0xffffff, o + 4, 3);
            }
          : (id, l, r) => {
              out.writeUInt32BE(l, id * 8);
              out.writeUInt32BE(r, id * 8 + 4);
            };
    this.nodes = 0;
    this.v4Root = -1;
    this.node6(0, 0, this.ranges.v6.pairs.length - 1);
    if (this.nodes !== nodeCount) throw new Error(`tree walk numbered ${this.nodes} nodes, counted ${nodeCount}`);
    return out;
  }

  private leaf(pair: number): number {
    const at = this.offsets[pair]!;
    return at === NO_DATA ? this.nodeCount : this.nodeCount + 16 + at;
  }

  /** The record for IPv4 block [prefix, prefix + 2^(32-d)), which segments lo..hi overlap (lo's start ≤ prefix). */
  private node4(d: number, lo: number, hi: number, prefix: number): number {
    if (lo === hi) return this.leaf(this.ranges.v4.pairs[lo]!);
    const starts = this.ranges.v4.starts;
    const mid = prefix + 2 ** (31 - d);
    // k: the last segment starting at or below mid, which is the first of the upper half.
    let k = lo;
    let h = hi;
    while (k < h) {
      const m = (k + h + 1) >>> 1;
      if (starts[m]! <= mid) k = m;
      else h = m - 1;
    }
    const id = this.nodes++;
    const left = this.node4(d + 1, lo, starts[k] === mid ? k - 1 : k, prefix);
    const right = this.node4(d + 1, k, hi, mid);
    this.setNode(id, left, right);
    return id;
  }

  /** node4 for IPv6 depth d; the block's start is this.prefix at d. */
  private node6(d: number, lo: number, hi: number): number {
    const p = this.prefix;
    const b = d * 4;
    // Blocks holding ::/96 or ::ffff:0:0/96 are split down to those /96s, which take the IPv4 subtree.
    const mapped = d <= 96 && p[b] === 0 && p[b + 1] === 0 && (p[b + 2] === 0 || p[b + 2] === (0xffff & highBits(d - 64)));
    if (mapped && d === 96) {
      if (this.v4Root < 0) this.v4Root = this.node4(0, 0, this.ranges.v4.pairs.length - 1, 0);
      return this.v4Root;
    }
    if (lo === hi && !mapped) return this.leaf(this.ranges.v6.pairs[lo]!);
    const starts = this.ranges.v6.starts;
    const m = this.mid;
    for (let w = 0; w < 4; w++) m[b + w] = p[b + w]!;
    m[b + (d >>> 5)] = m[b + (d >>> 5)]! | (0x80000000 >>> (d & 31));
    let k = lo;
    let h = hi;
    while (k < h) {
      const x = (k + h + 1) >>> 1;
      if (compareStart(starts, x, m, b) <= 0) k = x;
      else h = x - 1;
    }
    const id = this.nodes++;
    const c = b + 4;
    for (let w = 0; w < 4; w++) p[c + w] = p[b + w]!;
    const left = this.node6(d + 1, lo, compareStart(starts, k, m, b) === 0 ? k - 1 : k);
    for (let w = 0; w < 4; w++) p[c + w] = m[b + w]!;
    const right = this.node6(d + 1, k, hi);
    this.setNode(id, left, right);
    return id;
  }
}

/** A 32-bit word's top n bits set (n clamped to 0..32). */
function highBits(n: number): number {
  return n <= 0 ? 0 : n >= 32 ? 0xffffffff : (0xffffffff << (32 - n)) >>> 0;
}

/** Segment x's start against the four words of `m` at `at`. */
function compareStart(starts: Uint32Array, x: number, m: Uint32Array, at: number): number {
  for (let w = 0; w < 4; w++) {
    const s = starts[x * 4 + w]!;
    const v = m[at + w]!;
    if (s !== v) return s < v ? -1 : 1;
  }
  return 0;
}
