import type { ParsedIp } from '../../../lib/ip-address.ts';
import { parseIp } from '../../../lib/ip-address.ts';
import type { RangeRef } from './intel-compose.ts';
import { RangeSets, v6Value, type RangeEntry } from './range-sets.ts';

/**
 * What one range costs on the heap with its key, RangeEntry, RangeRef and table segments (measured: about 600 bytes for IPv4 ranges, 720
 * for IPv6).
 */
export const RANGE_BYTES = 720;
/** New anonymizer ranges reach the range table within this time (lookups see them at once anyway). */
const REBUILD_DELAY_MS = 1_000;
const MAX_PENDING = 256;

type FeedOrigin = Extract<RangeRef['origin'], { source: 'feed' }>;

/**
 * The anonymizers feed's ranges in an immutable overlap-keeping table, at most `maxRanges` of them
 * (their share of the index's budget). A new range is kept in a short pending list that lookups scan
 * until a rebuild folds it into the table; a range announced again only moves its times.
 */
export class AnonymizerRanges {
  private table = RangeSets.empty<RangeRef>();
  private readonly refs = new Map<string, RangeEntry<RangeRef>>();
  /** New ranges not yet in the table: lookups scan them, so they are visible at once. */
  private pending: RangeEntry<RangeRef>[] = [];
  private rebuildTimer: ReturnType<typeof setTimeout> | undefined;
  /** Ranges dropped to stay within maxRanges. */
  evictions = 0;

  constructor(
    private readonly maxRanges: number,
    private readonly onFull: () => void,
  ) {}

  get size(): number {
    return this.refs.size;
  }

  /** `feed`: anonymizers, or its twin for simulated records (address-facts.ts). */
  observe(r: Record<string, unknown>, ts: number, feed = 'anonymizers'): void {
    const key = `${r.range_start}-${r.range_end}|${r.provider}|${r.type}|${feed}`;
    const known = this.refs.get(key);
    if (known) {
      // A re-announced range only moves its times: no table rebuild.
      const o = known.value.origin as FeedOrigin;
      if (ts > o.last) o.last = ts;
      if (ts < o.first) o.first = ts;
      o.count++;
      return;
    }
    const a = parseIp(r.range_start as string);
    const b = parseIp(r.range_end as string);
    if (!a || !b || a.version !== b.version) return;
    if (this.refs.size >= this.maxRanges) this.evict();
    const value: RangeRef = {
      provider: r.provider as string,
      type: r.type as string,
      behavior: false,
      origin: { source: 'feed', feed, first: ts, last: ts, count: 1 },
    };
    const entry: RangeEntry<RangeRef> =
      a.version === 4
        ? { version: 4, start: a.v4, end: (b as typeof a).v4, value }
        : { version: 6, start: v6Value(a.v6), end: v6Value((b as typeof a).v6), value };
    this.refs.set(key, entry);
    this.pending.push(entry);
    // Folded into the table off the lookup path: soon by a timer, or at once (here, on the ingest
    // path) when the pending list outgrows a quarter of the table, which keeps a replay's rebuilds
    // geometric (amortised O(n log n)) and a lookup's scan short.
    if (this.pending.length > Math.max(MAX_PENDING, this.refs.size / 4)) this.rebuild();
    else this.rebuildTimer ??= setTimeout(() => this.rebuild(), REBUILD_DELAY_MS).unref();
  }

  /** Ranges holding the address: the table's set, plus any pending new range. */
  matches(ip: ParsedIp): readonly RangeRef[] | undefined {
    const inTable = this.table.find(ip);
    if (this.pending.length === 0) return inTable;
    let out: RangeRef[] | undefined;
    const v6 = ip.version === 6 ? v6Value(ip.v6) : 0n;
    for (const e of this.pending) {
      const hit =
        e.version === 4 ? ip.version === 4 && e.start <= ip.v4 && ip.v4 <= e.end : ip.version === 6 && e.start <= v6 && v6 <= e.end;
      if (hit) (out ??= [...(inTable ?? [])]).push(e.value);
    }
    return out ?? inTable;
  }

  /** Drops ranges last announced before horizon (already ignored at lookup; the rebuild only frees them). */
  prune(horizon: number): void {
    let dropped = 0;
    for (const [key, e] of this.refs) {
      if ((e.value.origin as FeedOrigin).last < horizon) {
        this.refs.delete(key);
        dropped++;
      }
    }
    if (dropped > 0) this.rebuild();
  }

  /** Folds the pending ranges into the table (the timer does it; tests and benches may at once). */
  rebuild(): void {
    clearTimeout(this.rebuildTimer);
    this.rebuildTimer = undefined;
    this.table = RangeSets.build([...this.refs.values()]);
    this.pending = [];
  }

  close(): void {
    clearTimeout(this.rebuildTimer);
    this.rebuildTimer = undefined;
  }

  /**
   * At maxRanges: the least recently announced sixteenth goes (a range announced again comes back),
   * and the table is rebuilt without them at once, so the cost of a rebuild is spread over the
   * ranges that made room for it.
   */
  private evict(): void {
    this.onFull();
    const byLast = [...this.refs].sort(([, a], [, b]) => (a.value.origin as FeedOrigin).last - (b.value.origin as FeedOrigin).last);
    const n = Math.max(1, Math.ceil(byLast.length / 16));
    for (let i = 0; i < n; i++) this.refs.delete(byLast[i]![0]);
    this.evictions += n;
    this.rebuild();
  }
}
