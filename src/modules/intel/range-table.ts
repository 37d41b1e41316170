/**
 * Address-space segmentation: sorted segment starts, each with a value index (NONE for gaps), so a
 * lookup is one upper-bound binary search with no end check. IPv6 starts are 4 big-endian u32 words.
 */
export const NONE = 0xffffffff;

class Growable {
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
export function topIndex(starts: Uint32Array, stride: 1 | 4, bits = TOP_BITS): Uint32Array {
  const size = 2 ** bits;
  const top = new Uint32Array(size + 1);
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

export function find6Indexed(starts: Uint32Array, vals: Uint32Array, top: Uint32Array, ip: Uint32Array): number {
  const w0 = ip[0]!;
  const h = w0 >>> SHIFT;
  let lo = top[h]!;
  let hi = top[h + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const b = mid * 4;
    const s0 = starts[b]!;
    if (s0 < w0 || (s0 === w0 && compare6(starts, b, ip, 0) <= 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NONE : vals[lo - 1]!;
}
