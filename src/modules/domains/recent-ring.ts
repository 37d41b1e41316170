/** One honeypot event as a domain's recent sample keeps it; shared by every suffix the event counts for. */
export interface RecentEvent {
  /** ms since the epoch */
  ts: number;
  ip: string;
  target: string;
  port: number;
  /** Only on records of the demo simulator. */
  simulated?: true;
}

/**
 * The newest `capacity` events, oldest first, in a fixed circular buffer. A late event moves only the
 * entries newer than itself, so feeds a few seconds out of order cost a few moves, not a re-sort.
 */
export class RecentRing {
  private readonly buf: RecentEvent[] = [];
  /** physical index of the oldest entry once the buffer is full; 0 until then */
  private start = 0;

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.buf.length;
  }

  /** i-th oldest entry, 0 ≤ i < length */
  at(i: number): RecentEvent {
    return this.buf[(this.start + i) % this.buf.length]!;
  }

  add(e: RecentEvent): void {
    const buf = this.buf;
    let i: number;
    if (buf.length < this.capacity) {
      buf.push(e);
      i = buf.length - 1;
    } else {
      if (e.ts < this.at(0).ts) return; // older than all we keep
      this.start = (this.start + 1) % buf.length; // the oldest's slot becomes the newest
      i = buf.length - 1;
    }
    const n = buf.length;
    while (i > 0 && this.buf[(this.start + i - 1) % n]!.ts > e.ts) {
      buf[(this.start + i) % n] = buf[(this.start + i - 1) % n]!;
      i--;
    }
    buf[(this.start + i) % n] = e;
  }

  /** Forgets entries older than tsMs; O(length), for the daily prune only. */
  dropBefore(tsMs: number): void {
    let k = 0;
    while (k < this.buf.length && this.at(k).ts < tsMs) k++;
    if (k === 0) return;
    const kept = Array.from({ length: this.buf.length - k }, (_, i) => this.at(k + i));
    this.buf.length = 0;
    this.buf.push(...kept);
    this.start = 0;
  }
}
