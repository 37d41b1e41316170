/**
 * Address-space segmentation: sorted segment starts, each with a value index (NONE for gaps), so a
 * lookup is one upper-bound binary search with no end check. IPv6 starts are 4 big-endian u32 words.
 * The builders make one table per kind (network, location); mergeTables4/6 then cut both into one
 * table of (network, location) pairs, so that serving an address takes one search, not two.
 */
export const NONE = 0xffffffff;

export class Growable {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 1 << 16) {
    this.data = new Uint32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }
}

/** Collects IPv4 ranges in ascending order; overlaps are clipped, equal neighbours merged. */
export class V4TableBuilder {
  private readonly starts = new Growable();
  private readonly vals = new Growable();
  private next = 0; // first address not yet covered (may be 2^32)

  private push(start: number, val: number): void {
    const n = this.vals.length;
    if (n > 0 && this.vals.data[n - 1] === val) return;
    if (n > 0 && this.starts.data[n - 1] === start) {
      this.vals.data[n - 1] = val;
      return;
    }
    this.starts.push(start);
    this.vals.push(val);
  }

  add(start: number, end: number, val: number): void {
    if (start < this.next) start = this.next;
    if (start > end) return;
    if (start > this.next || this.vals.length === 0) this.push(this.next, NONE);
    this.push(start, val);
    this.next = end + 1;
  }

  finish(): { starts: Uint32Array; vals: Uint32Array } {
    if (this.next <= 0xffffffff) this.push(this.next, NONE);
    return { starts: this.starts.view(), vals: this.vals.view() };
  }
}

export function compare6(a: Uint32Array, ai: number, b: Uint32Array, bi: number): number {
  for (let k = 0; k < 4; k++) {
    const x = a[ai + k]!;
    const y = b[bi + k]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** a + 1 into out; returns false on overflow past ffff…ffff. */
export function increment6(a: Uint32Array, out: Uint32Array): boolean {
  let carry = 1;
  for (let k = 3; k >= 0; k--) {
    const v = a[k]! + carry;
    out[k] = v >>> 0;
    carry = v > 0xffffffff ? 1 : 0;
  }
  return carry === 0;
}

/** The IPv6 counterpart of V4TableBuilder. */
export class V6TableBuilder {
  private readonly starts = new Growable(1 << 18);
  private readonly vals = new Growable();
  private readonly next = new Uint32Array(4);
  private exhausted = false;
  private readonly tmp = new Uint32Array(4);

  private push(start: Uint32Array, val: number): void {
    const n = this.vals.length;
    if (n > 0 && this.vals.data[n - 1] === val) return;
    if (n > 0 && compare6(this.starts.data, (n - 1) * 4, start, 0) === 0) {
      this.vals.data[n - 1] = val;
      return;
    }
    for (let k = 0; k < 4; k++) this.starts.push(start[k]!);
    this.vals.push(val);
  }

  add(start: Uint32Array, end: Uint32Array, val: number): void {
    if (this.exhausted) return;
    const s = this.tmp;
    s.set(start);
    if (compare6(s, 0, this.next, 0) < 0) s.set(this.next);
    if (compare6(s, 0, end, 0) > 0) return;
    if (compare6(s, 0, this.next, 0) > 0 || this.vals.length === 0) this.push(this.next, NONE);
    this.push(s, val);
    this.exhausted = !increment6(end, this.next);
  }

  finish(): { starts: Uint32Array; vals: Uint32Array } {
    if (!this.exhausted) this.push(this.next, NONE);
    return { starts: this.starts.view(), vals: this.vals.view() };
  }
}

/** Value index of the segment holding v4, or NONE. */
export function find4(starts: Uint32Array, vals: Uint32Array, ip: number): number {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= ip) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NONE : vals[lo - 1]!;
}

/** Value index of the segment holding a v6 address (4 words), or NONE. */
export function find6(starts: Uint32Array, vals: Uint32Array, ip: Uint32Array): number {
  let lo = 0;
  let hi = vals.length;
  const w0 = ip[0]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const b = mid * 4;
    // Most comparisons are settled by the first word.
    const s0 = starts[b]!;
    const le = s0 < w0 || (s0 === w0 && compare6(starts, b, ip, 0) <= 0);
    if (le) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NONE : vals[lo - 1]!;
}

/**
 * For each top-bits block h, how many segment starts lie below block h. The
 * segment holding an address of block h is then found among starts[top[h] .. top[h+1]], a short,
 * cache-local slice, instead of across millions of entries.
 */
export function topIndex(
  starts: Uint32Array,
  stride: 1 | 4,
  bits = TOP_BITS,
  top: Uint32Array = new Uint32Array(2 ** bits + 1),
): Uint32Array {
  const size = 2 ** bits;
  const n = starts.length / stride;
  const shift = 32 - bits;
  let i = 0;
  for (let h = 0; h <= size; h++) {
    while (i < n && starts[i * stride]! >>> shift < h) i++;
    top[h] = i;
  }
  return top;
}

/** 2^16 blocks (256 KiB per table); 2^20 measured no faster here, its index missing cache as well. */
export const TOP_BITS = 16;
const SHIFT = 32 - TOP_BITS;

export function find4Indexed(starts: Uint32Array, vals: Uint32Array, top: Uint32Array, ip: number): number {
  const h = ip >>> SHIFT;
  let lo = top[h]!;
  let hi = top[h + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= ip) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NONE : vals[lo - 1]!;
}

/**
 * The IPv6 search index: the top-16-bit index, plus, for the few blocks that hold many segments
 * (2603::/16 alone holds some 760,000 in the real data), an index on the next 16 bits, so a lookup
 * there searches only among segments whose first 32 bits are its own (about 11 steps on average
 * instead of 18, each a likely cache miss). `subOf[h]` is the slot of block h in `sub` (-1: none);
 * slot k's index is sub[k*65537 .. k*65537+65536]. Typed arrays only, so a worker can transfer it.
 */
export interface Index6 {
  top: Uint32Array;
  subOf: Int32Array;
  sub: Uint32Array;
}

const SUB = 65_537;
const INDEX6_FIXED_WORDS = 2 ** TOP_BITS + 1 + 2 ** TOP_BITS;

/** The most 32-bit words index6 can need for `ranges` IPv6 ranges (each heavy block holds more than `heavy` of them). */
export function index6Words(ranges: number, heavy = 4096): number {
  return INDEX6_FIXED_WORDS + Math.floor(ranges / (heavy + 1)) * SUB;
}

/**
 * The IPv6 index over `starts` (4 words per range). With `memory` (index6Words long at most), the
 * index is written there, memory that was set aside once (DatasetLoader's arenas), instead of into
 * new buffers. `pause`, when given, is called after every 2 MiB of second-level index written: a
 * loader thread writing into memory never touched before spreads its page faults (dataset-worker-main.ts).
 */
export function index6(starts: Uint32Array, heavy = 4096, memory?: Uint32Array, pause?: () => void): Index6 {
  const top = topIndex(starts, 4, TOP_BITS, memory?.subarray(0, 2 ** TOP_BITS + 1));
  const subOf = memory
    ? new Int32Array(memory.buffer, memory.byteOffset + (2 ** TOP_BITS + 1) * 4, 2 ** TOP_BITS)
    : new Int32Array(2 ** TOP_BITS);
  subOf.fill(-1);
  const blocks: number[] = [];
  for (let h = 0; h < 2 ** TOP_BITS; h++) if (top[h + 1]! - top[h]! > heavy) blocks.push(h);
  if (memory && INDEX6_FIXED_WORDS + blocks.length * SUB > memory.length)
    throw new RangeError(`the IPv6 index needs ${INDEX6_FIXED_WORDS + blocks.length * SUB} words, ${memory.length} were given`);
  const sub = memory ? memory.subarray(INDEX6_FIXED_WORDS, INDEX6_FIXED_WORDS + blocks.length * SUB) : new Uint32Array(blocks.length * SUB);
  blocks.forEach((h, k) => {
    subOf[h] = k;
    const end = top[h + 1]!;
    let i = top[h]!;
    for (let m = 0; m < SUB; m++) {
      while (i < end && (starts[i * 4]! & 0xffff) < m) i++;
      sub[k * SUB + m] = i;
    }
    if (pause && k % 8 === 7) pause();
  });
  return { top, subOf, sub };
}

export function find6Index(starts: Uint32Array, vals: Uint32Array, x: Index6, ip: Uint32Array): number {
  const w0 = ip[0]!;
  const h = w0 >>> SHIFT;
  const slot = x.subOf[h]!;
  let lo: number;
  let hi: number;
  if (slot < 0) {
    lo = x.top[h]!;
    hi = x.top[h + 1]!;
  } else {
    const at = slot * SUB + (w0 & 0xffff);
    lo = x.sub[at]!;
    hi = x.sub[at + 1]!;
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const b = mid * 4;
    const s0 = starts[b]!;
    if (s0 < w0 || (s0 === w0 && compare6(starts, b, ip, 0) <= 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NONE : vals[lo - 1]!;
}

/** Distinct (network, location) value pairs, two words each, so a merged segment stores one index. */
export class PairInterner {
  readonly words = new Growable();
  private readonly index = new Map<number, number>();

  id(net: number, loc: number): number {
    // An exact number key: net + 1 (NONE → 0) must stay below 2^21 for net·2^32 + loc to fit in 2^53.
    const n = net === NONE ? 0 : net + 1;
    if (n >= 2 ** 21) throw new RangeError(`too many network records for a pair key: ${net}`);
    const key = n * 2 ** 32 + loc;
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.words.length / 2;
      this.words.push(net);
      this.words.push(loc);
      this.index.set(key, i);
    }
    return i;
  }

  view(): Uint32Array {
    return this.words.view();
  }
}

/** A merged table: segment starts (1 or 4 words each) and each segment's pair index. */
export interface MergedTable {
  starts: Uint32Array;
  segs: Uint32Array;
}

/**
 * Cuts two IPv4 tables (both starting at 0, as the builders make them) at every boundary of
 * either, so each segment holds one (net, loc) pair; neighbours with the same pair are merged.
 */
export function mergeTables4(
  net: { starts: Uint32Array; vals: Uint32Array },
  loc: { starts: Uint32Array; vals: Uint32Array },
  pairs: PairInterner,
): MergedTable {
  const starts = new Growable(net.starts.length + loc.starts.length + 1);
  const segs = new Growable(net.starts.length + loc.starts.length + 1);
  let i = 0;
  let j = 0;
  let last = -1;
  const n = net.starts.length;
  const m = loc.starts.length;
  while (i < n || j < m) {
    // The next cut is the lower of the two tables' next starts; a start both share advances both.
    const a = i < n ? net.starts[i]! : Infinity;
    const b = j < m ? loc.starts[j]! : Infinity;
    const start = Math.min(a, b);
    if (a === start) i++;
    if (b === start) j++;
    const p = pairs.id(i > 0 ? net.vals[i - 1]! : NONE, j > 0 ? loc.vals[j - 1]! : NONE);
    if (p === last) continue;
    // Starts are strictly increasing: a start both tables share advanced both pointers at once.
    starts.push(start);
    segs.push(p);
    last = p;
  }
  return { starts: starts.view(), segs: segs.view() };
}

/** The IPv6 counterpart of mergeTables4. */
export function mergeTables6(
  net: { starts: Uint32Array; vals: Uint32Array },
  loc: { starts: Uint32Array; vals: Uint32Array },
  pairs: PairInterner,
): MergedTable {
  const starts = new Growable(net.starts.length + loc.starts.length + 4);
  const segs = new Growable(net.vals.length + loc.vals.length + 1);
  let i = 0;
  let j = 0;
  let last = -1;
  const n = net.vals.length;
  const m = loc.vals.length;
  while (i < n || j < m) {
    let c: number;
    if (i === n) c = 1;
    else if (j === m) c = -1;
    else c = compare6(net.starts, i * 4, loc.starts, j * 4);
    const from = c <= 0 ? net.starts : loc.starts;
    const at = (c <= 0 ? i : j) * 4;
    if (c <= 0) i++;
    if (c >= 0) j++;
    const p = pairs.id(i > 0 ? net.vals[i - 1]! : NONE, j > 0 ? loc.vals[j - 1]! : NONE);
    if (p === last) continue;
    for (let w = 0; w < 4; w++) starts.push(from[at + w]!);
    segs.push(p);
    last = p;
  }
  return { starts: starts.view(), segs: segs.view() };
}

/**
 * Two Int32 per /24 block of IPv4 space (2^24 blocks, 128 MiB): the block's network and location
 * record, each stored plus one (0: none), when the whole block lies in one segment, as about 97% of
 * public blocks do, so most lookups read one 8-byte entry and search nothing. A block cut by a
 * segment start holds SPLIT and the index of the segment containing its first address (both plus
 * one too); the lookup then scans forward over the few segments that start inside the block
 * (findSegment4). Plus one so that a block in no range is all zero bits: written into memory known
 * to be zero (`zeroed`: a new table, or an arena no load has used), those blocks are not written at
 * all and their pages never become resident (the reserved and unannounced 14% of the space, about
 * 18 MiB of the table with the packaged data). The pair is stored inline rather than as a pair
 * index, because the extra dependent read of the pair table cost more than the doubled table
 * (measured). A /24 because that is the finest granularity of most routing and geolocation data.
 */
/** Int32 words of the IPv4 block index (2^24 blocks, two words each: 128 MiB). */
const BLOCKS4 = 2 ** 24;
export const BLOCK_INDEX4_WORDS = 2 * BLOCKS4;

export function blockIndex4(
  t: MergedTable,
  pairs: Uint32Array,
  memory?: Int32Array,
  pace?: { blocks: number; pause: () => void },
  zeroed = memory === undefined,
): Int32Array {
  const direct = memory ?? new Int32Array(BLOCK_INDEX4_WORDS);
  const { starts, segs } = t;
  const n = starts.length;
  let written = 0;
  for (let s = 0; s < n; s++) {
    const a = starts[s]!;
    const b = s + 1 < n ? starts[s + 1]! - 1 : 0xffffffff;
    // Blocks h0..h1 are those whose first address lies in segment s.
    const h0 = Math.floor((a + 255) / 256);
    const h1 = b >>> 8;
    if (h0 > h1) continue;
    const p = segs[s]!;
    // NONE (2^32 - 1) plus one wraps to 0.
    const net = (pairs[2 * p]! + 1) | 0;
    const loc = (pairs[2 * p + 1]! + 1) | 0;
    const skip = zeroed && net === 0 && loc === 0;
    for (let h = skip ? h1 : h0; h < h1; ) {
      // A loader thread writes the 128 MiB in steps with pauses, leaving memory bandwidth to the server.
      const from = h;
      const end = pace ? Math.min(h1, h + pace.blocks - written) : h1;
      for (; h < end; h++) {
        direct[2 * h] = net;
        direct[2 * h + 1] = loc;
      }
      if (pace && (written += end - from) >= pace.blocks) {
        written = 0;
        pace.pause();
      }
    }
    const whole = (b & 255) === 255;
    if (whole && skip) continue;
    direct[2 * h1] = whole ? net : SPLIT + 1;
    direct[2 * h1 + 1] = whole ? loc : s + 1;
  }
  return direct;
}

/** Marks a block of blockIndex4 that segment starts cut (record indices are never negative but -1). */
export const SPLIT = -2;

/** Index of the segment holding v4, scanning forward from segment s, which must hold an address ≤ ip. */
export function findSegment4(starts: Uint32Array, s: number, ip: number): number {
  const last = starts.length - 1;
  while (s < last && starts[s + 1]! <= ip) s++;
  return s;
}
