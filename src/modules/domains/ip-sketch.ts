/**
 * Distinct source IPs of one domain and one day: exact (as 32-bit hashes, so up to hash collisions,
 * about 1 in 10^6 at this size) up to EXACT_MAX addresses, then a HyperLogLog of 2^9 one-byte registers
 * (512 bytes, standard error about 4.6%). Days merge by union, so the 30-day figure ages out exactly
 * with its days. Hashes rather than strings, so a day never keeps IP texts alive. A day's hash list
 * grows from 4 entries, so a domain with a handful of events pays a few dozen bytes a day, not 512.
 */
const EXACT_MAX = 128;
const P = 9;
const M = 1 << P;

/** FNV-1a over UTF-16 units, then murmur3's finaliser so every bit is mixed for the register index. */
export function hashIp(ip: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < ip.length; i++) h = Math.imul(h ^ ip.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function setRegister(regs: Uint8Array, hash: number): void {
  const idx = hash >>> (32 - P);
  const rank = Math.min(Math.clz32((hash << P) >>> 0) + 1, 32 - P + 1);
  if (rank > regs[idx]!) regs[idx] = rank;
}

export class IpSketch {
  /** UTC day counted */
  constructor(readonly day: number) {}

  /** distinct hashes in [0, n) while exact */
  private hashes: Uint32Array | undefined = new Uint32Array(4);
  private n = 0;
  private regs: Uint8Array | undefined;

  /** hash must be hashIp(ip); the caller computes it once for every domain suffix of an event. */
  add(hash: number): void {
    if (this.regs) return setRegister(this.regs, hash);
    let hashes = this.hashes!;
    for (let i = 0; i < this.n; i++) if (hashes[i] === hash) return;
    if (this.n === hashes.length) {
      if (this.n === EXACT_MAX) {
        this.regs = new Uint8Array(M);
        for (const h of hashes) setRegister(this.regs, h);
        setRegister(this.regs, hash);
        this.hashes = undefined;
        return;
      }
      const grown = new Uint32Array(hashes.length * 2);
      grown.set(hashes);
      hashes = this.hashes = grown;
    }
    hashes[this.n++] = hash;
  }

  get bytes(): number {
    return 64 + (this.regs ? M : this.hashes!.byteLength);
  }

  /** Distinct IPs over several days: exact while every day is exact, else the merged estimate. */
  static union(sketches: IpSketch[]): number {
    if (sketches.every((s) => s.hashes)) {
      const all = new Set<number>();
      for (const s of sketches) for (let i = 0; i < s.n; i++) all.add(s.hashes![i]!);
      return all.size;
    }
    const regs = new Uint8Array(M);
    for (const s of sketches) {
      if (s.regs) for (let i = 0; i < M; i++) regs[i] = Math.max(regs[i]!, s.regs[i]!);
      else for (let i = 0; i < s.n; i++) setRegister(regs, s.hashes![i]!);
    }
    let sum = 0;
    let zeros = 0;
    for (let i = 0; i < M; i++) {
      sum += 2 ** -regs[i]!;
      if (regs[i] === 0) zeros++;
    }
    const raw = ((0.7213 / (1 + 1.079 / M)) * M * M) / sum;
    // Linear counting is the better estimator while many registers are still empty.
    return Math.round(raw <= 2.5 * M && zeros > 0 ? M * Math.log(M / zeros) : raw);
  }
}

/**
 * The IpSketch of each day in a ring of `slots` days (slot = day % slots), the ring itself allocated
 * on the first event; a slot holding another day is stale and is replaced.
 */
export class IpDays {
  private readonly days: Array<IpSketch | undefined>;

  constructor(slots: number) {
    this.days = new Array<IpSketch | undefined>(slots).fill(undefined);
  }

  add(hash: number, day: number): void {
    const slot = day % this.days.length;
    let s = this.days[slot];
    if (s && s.day > day) return; // older than the day that took its slot: outside any window served
    if (!s || s.day < day) s = this.days[slot] = new IpSketch(day);
    s.add(hash);
  }

  /** Distinct addresses seen on the days from ≤ day < to. */
  count(from: number, to: number): number {
    return IpSketch.union(this.days.filter((s): s is IpSketch => s !== undefined && s.day >= from && s.day < to));
  }

  /** Forgets days before oldest. */
  trim(oldest: number): void {
    for (let i = 0; i < this.days.length; i++) if (this.days[i] && this.days[i]!.day < oldest) this.days[i] = undefined;
  }

  get bytes(): number {
    let b = 32 + 8 * this.days.length;
    for (const s of this.days) if (s) b += s.bytes;
    return b;
  }
}
