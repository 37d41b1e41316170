/** Minutes kept: the 1,440 of a day plus an hour, so summary(now) stays exact from an hour before the horizon. */
export const MINUTE_SPAN = 1500;
/** A quiet domain keeps (minute, count) pairs; past this many minutes a fixed ring is smaller. */
const PAIRS_MAX = 64;

/**
 * Events per minute over the last MINUTE_SPAN minutes, for events_24h. Few events: a flat
 * [minute, count, …] list, minutes ascending. Busy: a Uint32Array ring indexed by minute % MINUTE_SPAN,
 * valid for the minutes (top - MINUTE_SPAN, top]; moving `top` forward clears the slots it passes, so no
 * slot needs a stamp of its own.
 */
export class MinuteCounts {
  private pairs: number[] | undefined = [];
  private ring: Uint32Array | undefined;
  private top = -Infinity;

  /** oldest: the first minute still worth keeping (horizon minute - MINUTE_SPAN + 1) */
  add(minute: number, oldest: number): void {
    if (this.ring) return this.addRing(minute);
    const p = this.pairs!;
    let i = p.length - 2;
    if (i >= 0 && p[i] === minute) {
      p[i + 1]!++;
      return;
    }
    if (i < 0 || p[i]! < minute) {
      this.trim(oldest);
      if (p.length >= 2 * PAIRS_MAX) return this.promote(minute);
      p.push(minute, 1);
      return;
    }
    if (minute < oldest) return;
    while (i >= 0 && p[i]! > minute) i -= 2;
    if (i >= 0 && p[i] === minute) p[i + 1]!++;
    else p.splice(i + 2, 0, minute, 1);
  }

  /** Events in the minutes (low, high]. */
  sum(low: number, high: number): number {
    let n = 0;
    if (this.ring) {
      const from = Math.max(low + 1, this.top - MINUTE_SPAN + 1);
      for (let m = from, to = Math.min(high, this.top); m <= to; m++) n += this.ring[m % MINUTE_SPAN]!;
      return n;
    }
    const p = this.pairs!;
    for (let i = 0; i < p.length; i += 2) if (p[i]! > low && p[i]! <= high) n += p[i + 1]!;
    return n;
  }

  /** Drops minutes before oldest; true when nothing is left. */
  trim(oldest: number): boolean {
    if (this.ring) return this.top < oldest;
    const p = this.pairs!;
    let k = 0;
    while (k < p.length && p[k]! < oldest) k += 2;
    if (k > 0) p.splice(0, k);
    return p.length === 0;
  }

  /** Distinct clock hours holding counts, for estimateMemory. */
  get hours(): number {
    if (this.ring) return Math.ceil(MINUTE_SPAN / 60);
    let n = 0;
    for (let i = 0, last = NaN; i < this.pairs!.length; i += 2) {
      const h = Math.floor(this.pairs![i]! / 60);
      if (h !== last) n++;
      last = h;
    }
    return n;
  }

  get bytes(): number {
    return 64 + (this.ring ? this.ring.byteLength : 8 * this.pairs!.length);
  }

  private promote(minute: number): void {
    const p = this.pairs!;
    this.ring = new Uint32Array(MINUTE_SPAN);
    this.top = p[p.length - 2]!;
    for (let i = 0; i < p.length; i += 2) if (p[i]! > this.top - MINUTE_SPAN) this.ring[p[i]! % MINUTE_SPAN] = p[i + 1]!;
    this.pairs = undefined;
    this.addRing(minute);
  }

  private addRing(minute: number): void {
    const ring = this.ring!;
    if (minute > this.top) {
      if (minute - this.top >= MINUTE_SPAN) ring.fill(0);
      else for (let m = this.top + 1; m <= minute; m++) ring[m % MINUTE_SPAN] = 0;
      this.top = minute;
    } else if (minute <= this.top - MINUTE_SPAN) return;
    ring[minute % MINUTE_SPAN]!++;
  }
}
