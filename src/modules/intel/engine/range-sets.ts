import { find4Indexed, find6, NONE, topIndex } from '../../dataset/range-table.ts';
import type { ParsedIp } from '../../../lib/ip-address.ts';

/** One range with the value it carries; bounds are inclusive. IPv6 bounds as 128-bit bigints. */
export type RangeEntry<T> = { version: 4; start: number; end: number; value: T } | { version: 6; start: bigint; end: bigint; value: T };

const MAX6 = (1n << 128n) - 1n;

/**
 * An immutable address-space table in which ranges may overlap (an address can be in a Tor list and
 * a VPN range at once). The ranges are cut into elementary segments at every start and end, and each
 * segment points to the set of all values covering it, so a lookup is one binary search (find4/find6
 * of range-table.ts, no allocation) and returns every match. Sets are interned: segments covered by
 * the same ranges share one array.
 */
export class RangeSets<T> {
  /** Top-16-bit index over starts4 (range-table.ts): a v4 lookup searches only its /16's few starts. */
  private readonly top4: Uint32Array;

  private constructor(
    private readonly starts4: Uint32Array,
    private readonly vals4: Uint32Array,
    private readonly starts6: Uint32Array,
    private readonly vals6: Uint32Array,
    private readonly sets: readonly (readonly T[])[],
  ) {
    this.top4 = topIndex(starts4, 1);
  }

  static empty<T>(): RangeSets<T> {
    return RangeSets.build<T>([]);
  }

  static build<T>(entries: readonly RangeEntry<T>[]): RangeSets<T> {
    const sets: T[][] = [];
    const interned = new Map<string, number>();
    const ids = new Map<T, number>();
    const idOf = (v: T) => {
      let i = ids.get(v);
      if (i === undefined) ids.set(v, (i = ids.size));
      return i;
    };
    const setId = (active: Map<T, number>): number => {
      if (active.size === 0) return NONE;
      const members = [...active.keys()].sort((a, b) => idOf(a) - idOf(b));
      const key = members.map(idOf).join(',');
      let s = interned.get(key);
      if (s === undefined) {
        s = sets.length;
        sets.push(members);
        interned.set(key, s);
      }
      return s;
    };
    const v4 = entries
      .filter((e): e is Extract<RangeEntry<T>, { version: 4 }> => e.version === 4)
      .map((e) => ({ start: BigInt(e.start), end: BigInt(e.end), value: e.value }));
    const v6 = entries.filter((e): e is Extract<RangeEntry<T>, { version: 6 }> => e.version === 6);
    const t4 = sweep(v4, 0xffffffffn, setId);
    const t6 = sweep(v6, MAX6, setId);
    const starts4 = Uint32Array.from(t4.starts, (b) => Number(b));
    const starts6 = new Uint32Array(t6.starts.length * 4);
    t6.starts.forEach((b, i) => {
      for (let k = 0; k < 4; k++) starts6[i * 4 + k] = Number((b >> BigInt(96 - 32 * k)) & 0xffffffffn);
    });
    return new RangeSets(starts4, Uint32Array.from(t4.vals), starts6, Uint32Array.from(t6.vals), sets);
  }

  /** Every value whose range holds the address, or undefined (the common case, allocation-free). */
  find(ip: ParsedIp): readonly T[] | undefined {
    const s = ip.version === 4 ? find4Indexed(this.starts4, this.vals4, this.top4, ip.v4) : find6(this.starts6, this.vals6, ip.v6);
    return s === NONE ? undefined : this.sets[s];
  }

  get segments(): number {
    return this.vals4.length + this.vals6.length;
  }
}

/** Boundary sweep: +1 at each start, -1 after each end; one segment per distinct boundary. */
function sweep<T>(ranges: readonly { start: bigint; end: bigint; value: T }[], max: bigint, setId: (active: Map<T, number>) => number) {
  const events: Array<{ at: bigint; value: T; delta: 1 | -1 }> = [];
  for (const r of ranges) {
    if (r.end < r.start) continue;
    events.push({ at: r.start, value: r.value, delta: 1 });
    if (r.end < max) events.push({ at: r.end + 1n, value: r.value, delta: -1 });
  }
  events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const starts: bigint[] = [0n];
  const vals: number[] = [NONE];
  const active = new Map<T, number>();
  for (let i = 0; i < events.length; ) {
    const at = events[i]!.at;
    for (; i < events.length && events[i]!.at === at; i++) {
      const e = events[i]!;
      const n = (active.get(e.value) ?? 0) + e.delta;
      if (n <= 0) active.delete(e.value);
      else active.set(e.value, n);
    }
    const id = setId(active);
    if (id === vals[vals.length - 1]) continue;
    if (starts[starts.length - 1] === at) vals[vals.length - 1] = id;
    else {
      starts.push(at);
      vals.push(id);
    }
  }
  return { starts, vals };
}

/** Parses a canonical CIDR (`1.2.3.0/24`, `2001:db8::/32`) into inclusive bounds; undefined when malformed. */
export function cidrBounds(
  cidr: string,
  parse: (s: string) => ParsedIp | undefined,
): { version: 4; start: number; end: number } | { version: 6; start: bigint; end: bigint } | undefined {
  const slash = cidr.indexOf('/');
  const ip = parse(slash < 0 ? cidr : cidr.slice(0, slash));
  if (!ip) return undefined;
  const bits = ip.version === 4 ? 32 : 128;
  const len = slash < 0 ? bits : Number(cidr.slice(slash + 1));
  if (!Number.isInteger(len) || len < 0 || len > bits) return undefined;
  if (ip.version === 4) {
    const size = 2 ** (32 - len);
    const start = ip.v4 - (ip.v4 % size);
    return { version: 4, start, end: start + size - 1 };
  }
  let v = 0n;
  for (let k = 0; k < 4; k++) v = (v << 32n) | BigInt(ip.v6[k]!);
  const host = (1n << BigInt(128 - len)) - 1n;
  const start = v & ~host & MAX6;
  return { version: 6, start, end: start | host };
}

/** A v6 address as a bigint (range bounds of anonymizer records). */
export function v6Value(words: Uint32Array): bigint {
  let v = 0n;
  for (let k = 0; k < 4; k++) v = (v << 32n) | BigInt(words[k]!);
  return v;
}
