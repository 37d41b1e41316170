/**
 * Distinct source IPs of one domain over the day ring. While a domain has seen at most EXACT_MAX
 * addresses in the ring it keeps each one's 32-bit hash with the last UTC day it was seen: exact up to
 * hash collisions (about 1 in 10^6 at this size), and an address ages out with its last day. Past that
 * it keeps one HyperLogLog of 2^9 one-byte registers per day (512 bytes, standard error about 4.6%),
 * allocated as days see events, and days merge by union. Hashes rather than strings, so the sketch never
 * keeps IP texts alive.
 *
 * One approximation against per-day sets: in exact mode an address counts only on its last day, so a
 * summary for a `now` before that day (a sensor clock running ahead) misses it; the hashes moved into
 * the day sketches when a domain turns busy carry the same limit.
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
  /** distinct hashes in [0, n) while exact, with the last day each was seen at the same index */
  private hashes: Uint32Array | undefined = new Uint32Array(4);
  private lastDays: Int32Array | undefined = new Int32Array(4);
  private n = 0;
  /** busy: registers of day d in slot d % slots.length, stamped in regDays */
  private regs: Array<Uint8Array | undefined> | undefined;
  private regDays: Int32Array | undefined;

  /** slots: days the ring holds; hash must be hashIp(ip), computed once for every suffix of an event. */
  constructor(private readonly slots: number) {}

  /** oldest: first day the ring holds, so a full exact list can first make room by forgetting aged addresses. */
  add(hash: number, day: number, oldest: number): void {
    if (this.regs) return this.addBusy(hash, day);
    const hashes = this.hashes!;
    for (let i = 0; i < this.n; i++) {
      if (hashes[i] === hash) {
        if (day > this.lastDays![i]!) this.lastDays![i] = day;
        return;
      }
    }
    if (this.n === hashes.length) {
      this.trim(oldest);
      if (this.n === EXACT_MAX) {
        this.turnBusy();
        return this.addBusy(hash, day);
      }
      if (this.n === hashes.length) this.grow();
    }
    this.hashes![this.n] = hash;
    this.lastDays![this.n++] = day;
  }

  /** Forgets what was seen before oldest; true when nothing is left. */
  trim(oldest: number): boolean {
    if (this.regs) {
      let live = 0;
      for (let i = 0; i < this.slots; i++) {
        if (this.regs[i] && this.regDays![i]! < oldest) this.regs[i] = undefined;
        if (this.regs[i]) live++;
      }
      return live === 0;
    }
    let k = 0;
    for (let i = 0; i < this.n; i++) {
      if (this.lastDays![i]! < oldest) continue;
      this.hashes![k] = this.hashes![i]!;
      this.lastDays![k++] = this.lastDays![i]!;
    }
    this.n = k;
    return k === 0;
  }

  /** Distinct addresses seen on the days from ≤ day < to: exact while few, else the merged estimate. */
  count(from: number, to: number): number {
    if (!this.regs) {
      let c = 0;
      for (let i = 0; i < this.n; i++) if (this.lastDays![i]! >= from && this.lastDays![i]! < to) c++;
      return c;
    }
    const merged = new Uint8Array(M);
    for (let s = 0; s < this.slots; s++) {
      const regs = this.regs[s];
      if (!regs || this.regDays![s]! < from || this.regDays![s]! >= to) continue;
      for (let i = 0; i < M; i++) if (regs[i]! > merged[i]!) merged[i] = regs[i]!;
    }
    return estimate(merged);
  }

  get bytes(): number {
    if (!this.regs) return 64 + 8 * this.hashes!.length;
    let b = 64 + 8 * this.slots;
    for (const r of this.regs) if (r) b += M + 64;
    return b;
  }

  private grow(): void {
    const size = this.hashes!.length * 2;
    const hashes = new Uint32Array(size);
    const days = new Int32Array(size);
    hashes.set(this.hashes!);
    days.set(this.lastDays!);
    this.hashes = hashes;
    this.lastDays = days;
  }

  private turnBusy(): void {
    this.regs = new Array<Uint8Array | undefined>(this.slots).fill(undefined);
    this.regDays = new Int32Array(this.slots);
    for (let i = 0; i < this.n; i++) this.addBusy(this.hashes![i]!, this.lastDays![i]!);
    this.hashes = this.lastDays = undefined;
    this.n = 0;
  }

  private addBusy(hash: number, day: number): void {
    const slot = day % this.slots;
    let regs = this.regs![slot];
    if (regs && this.regDays![slot]! > day) return; // a newer day took the slot: older than the ring
    if (!regs) regs = this.regs![slot] = new Uint8Array(M);
    else if (this.regDays![slot]! < day) regs.fill(0);
    this.regDays![slot] = day;
    setRegister(regs, hash);
  }
}

function estimate(regs: Uint8Array): number {
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
