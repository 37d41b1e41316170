import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import {
  EMPTY_LOCATION,
  UNKNOWN_NETWORK,
  type DatasetInfo,
  type IndexedIpDataset,
  type LocationRecord,
  type NetworkRecord,
  type NetworkType,
  type NetworkTypeEvidence,
  NOT_ANNOUNCED,
} from '../lookup/ip-dataset.ts';
import { ANYCAST_ASNS } from '../lookup/anycast.ts';
import { answeredLocation, networkRecord } from '../lookup/honest-location.ts';
import type { ParsedIp } from '../../lib/ip-address.ts';
import { ByteArena } from '../../lib/byte-arena.ts';
import { recordJson } from '../../lib/record-json.ts';
import {
  DatasetFormatError,
  decodeDataset,
  decodeHeader,
  LOC_WORDS,
  NET_WORDS,
  NO_COORD,
  PREFIX_BYTES,
  type DatasetHeader,
  type Sections,
} from './dataset-format.ts';
import { blockIndex4, find6Index, findSegment4, index6, NONE, SPLIT, type Index6 } from './range-table.ts';

/**
 * The dataset's merged segment tables as stored, for exporting it to another format (mmdb-writer.ts)
 * without rebuilding it. Views over the loaded file: callers must not mutate them.
 */
export interface DatasetRanges {
  /**
   * Per IP version: ascending segment starts that cover the whole address space from 0 (IPv4 one word
   * each, IPv6 four big-endian words each), segment i running to the next start - 1 (the last to the
   * top of the space), and each segment's pair index. Neighbouring segments never share a pair.
   */
  v4: { starts: Uint32Array; pairs: Uint32Array };
  v6: { starts: Uint32Array; pairs: Uint32Array };
  /** Pair indices run from 0 to pairCount - 1. */
  pairCount: number;
  /** Pair p's network record; null where its addresses are in no network range (lookups answer UNKNOWN_NETWORK). */
  network(p: number): NetworkRecord | null;
  /** Pair p's location record; null where its addresses are in no location range (lookups answer EMPTY_LOCATION). */
  location(p: number): LocationRecord | null;
}

export interface LoadedIpDataset extends IndexedIpDataset {
  /** Every built dataset records where its types came from. */
  networkTypeEvidence(ip: ParsedIp): NetworkTypeEvidence;
  /** The segment tables behind network() and location(); no copy is made. */
  ranges(): DatasetRanges;
}

/**
 * Slots filled on first use, in pages of 1,024: a dataset swapped in while serving allocates no
 * half-million-slot arrays on the event loop (several ms each), only the pages lookups reach.
 */
export class LazySlots<T> {
  /** Sized and filled up front (a few hundred entries), so it stays a fast packed array, never a sparse one. */
  readonly pages: Array<Array<T | undefined> | undefined>;

  constructor(size: number) {
    this.pages = new Array<Array<T | undefined> | undefined>(Math.ceil(size / 1024)).fill(undefined);
  }

  get(i: number): T | undefined {
    const page = this.pages[i >>> 10];
    return page === undefined ? undefined : page[i & 1023];
  }

  set(i: number, value: T): void {
    (this.pages[i >>> 10] ??= new Array<T | undefined>(1024).fill(undefined))[i & 1023] = value;
  }

  /**
   * Takes over the pages of `from` that `same` marks (1: that page's entries are the same in both
   * datasets), objects and all: they are shared, not copied. Returns how many pages were taken.
   */
  adopt(from: LazySlots<T>, same: Uint8Array): number {
    let taken = 0;
    const n = Math.min(this.pages.length, from.pages.length, same.length);
    for (let p = 0; p < n; p++) {
      const page = from.pages[p];
      if (same[p] === 1 && page !== undefined) {
        this.pages[p] = page;
        taken++;
      }
    }
    return taken;
  }
}

/** Entries per LazySlots page. */
const PAGE = 1024;

/**
 * Which pages of 1,024 entries are the same in two datasets (1) or not (0), per table: strings whose
 * bytes are equal, and records whose words are equal and whose strings are all in same string pages,
 * so the objects the previous dataset made for them answer exactly as the next one's would. A rebuild
 * with unchanged data swaps in with the previous dataset's objects (no new ones, no garbage for the
 * collector at the swap); a changed entry costs its page.
 */
export interface SamePages {
  strings: Uint8Array;
  nets: Uint8Array;
  locs: Uint8Array;
}

export function samePages(prev: Sections, next: Sections): SamePages {
  const bytes = (v: ArrayBufferView, from = 0, to = v.byteLength) => Buffer.from(v.buffer, v.byteOffset + from, to - from);
  const po = prev.strOffsets as Uint32Array;
  const no = next.strOffsets as Uint32Array;
  const strCount = no.length - 1;
  const strings = new Uint8Array(Math.ceil(strCount / PAGE));
  for (let p = 0; p < strings.length; p++) {
    const lo = p * PAGE;
    const hi = Math.min(lo + PAGE, strCount);
    if (hi > po.length - 1) break;
    let same = 1;
    for (let i = lo + 1; i <= hi && same; i++) if (no[i]! - no[lo]! !== po[i]! - po[lo]!) same = 0;
    if (same && bytes(next.strBytes, no[lo]!, no[hi]!).equals(bytes(prev.strBytes, po[lo]!, po[hi]!))) strings[p] = 1;
  }
  const records = (
    prevWords: ArrayBufferView & ArrayLike<number>,
    nextWords: ArrayBufferView & ArrayLike<number>,
    width: number,
    stringWords: readonly number[],
  ): Uint8Array => {
    const count = nextWords.length / width;
    const prevCount = prevWords.length / width;
    const pages = new Uint8Array(Math.ceil(count / PAGE));
    for (let p = 0; p < pages.length; p++) {
      const lo = p * PAGE;
      const hi = Math.min(lo + PAGE, count);
      if (hi > prevCount || !bytes(nextWords, lo * width * 4, hi * width * 4).equals(bytes(prevWords, lo * width * 4, hi * width * 4)))
        continue;
      let same = 1;
      for (let i = lo * width; i < hi * width && same; i += width) {
        for (const k of stringWords) if (strings[nextWords[i + k]! >>> 10] !== 1) same = 0;
      }
      pages[p] = same;
    }
    return pages;
  };
  // Network records: asn, then six strings; locations: five strings, then the coordinates.
  return {
    strings,
    nets: records(prev.netRecords, next.netRecords, NET_WORDS, [1, 2, 3, 4, 5, 6]),
    locs: records(prev.locRecords, next.locRecords, LOC_WORDS, [0, 1, 2, 3, 4]),
  };
}

/**
 * The loaded dataset: typed-array views over the file's bytes. Records become frozen objects on
 * first use and are shared from then on, so a lookup allocates nothing.
 *
 * Callers ask network(ip) then location(ip) for the same address: the records found by the first
 * call are remembered (keyed by the address value, not the object, so a reused or mutated ParsedIp
 * cannot get a stale answer) and the second call costs no search.
 */
export class LoadedDataset implements LoadedIpDataset {
  private readonly nets: LazySlots<NetworkRecord>;
  private readonly locs: LazySlots<LocationRecord>;
  private readonly pairs: Uint32Array;
  private readonly v4Starts: Uint32Array;
  private readonly v4Segs: Uint32Array;
  private readonly v4Direct: Int32Array;
  private readonly v6Starts: Uint32Array;
  private readonly v6Segs: Uint32Array;
  private readonly v6Index: Index6;
  /** The last IPv4 address asked for (as int32) and its network and location record (-1 for none). */
  private readonly last4 = new Int32Array(3);
  /** The last IPv6 address asked for (4 words as int32) and its records. */
  private readonly last6 = new Int32Array(6);

  private readonly strings: PackedStrings;
  /** The records' JSON as UTF-8, made on first use by a batch answer (recordIndexes and after). */
  readonly json = new ByteArena();
  private readonly netJson: Int32Array;
  private readonly locJson: Int32Array;

  constructor(
    readonly info: DatasetInfo,
    private readonly s: Sections,
    /** The lookup indexes when a worker already derived them (loadDatasetAsync). */
    prepared?: PreparedIndexes,
    /** The dataset this one replaces and the pages both have the same (samePages): their objects are shared. */
    carry?: { from: LoadedDataset; same: SamePages },
  ) {
    this.strings = new PackedStrings(s.strBytes, s.strOffsets as Uint32Array);
    this.nets = new LazySlots(s.netRecords.length / NET_WORDS);
    this.locs = new LazySlots(s.locRecords.length / LOC_WORDS);
    this.netJson = new Int32Array(s.netRecords.length / NET_WORDS);
    this.locJson = new Int32Array(s.locRecords.length / LOC_WORDS);
    if (carry) {
      this.strings.decoded.adopt(carry.from.strings.decoded, carry.same.strings);
      this.nets.adopt(carry.from.nets, carry.same.nets);
      this.locs.adopt(carry.from.locs, carry.same.locs);
    }
    this.pairs = s.pairs as Uint32Array;
    this.v4Starts = s.v4Starts as Uint32Array;
    this.v4Segs = s.v4Segs as Uint32Array;
    this.v4Direct = prepared?.direct ?? blockIndex4({ starts: this.v4Starts, segs: this.v4Segs }, this.pairs);
    this.v6Starts = s.v6Starts as Uint32Array;
    this.v6Segs = s.v6Segs as Uint32Array;
    this.v6Index = prepared?.v6 ?? index6(this.v6Starts);
    // Seed the memos with the real answers for 0.0.0.0 and ::, so they need no validity flag.
    this.last4[0] = 1;
    this.seek4(0);
    this.last6[0] = 1;
    this.seek6(new Uint32Array(4));
  }

  /** this.last4 filled for ip: one read of the /24 block index, a short scan for the few split blocks. */
  private seek4(ip: number): Int32Array {
    const last = this.last4;
    const key = ip | 0;
    if (last[0] === key) return last;
    const d = this.v4Direct;
    const h = (ip >>> 8) * 2;
    // Stored plus one (blockIndex4), so that blocks in no range can stay untouched zero pages.
    let net = d[h]! - 1;
    let loc = d[h + 1]! - 1;
    if (net === SPLIT) {
      const p = this.v4Segs[findSegment4(this.v4Starts, loc, ip)]! * 2;
      net = this.pairs[p]! | 0;
      loc = this.pairs[p + 1]! | 0;
    }
    last[0] = key;
    last[1] = net;
    last[2] = loc;
    return last;
  }

  private seek6(w: Uint32Array): Int32Array {
    const last = this.last6;
    const w0 = w[0]! | 0;
    const w1 = w[1]! | 0;
    const w2 = w[2]! | 0;
    const w3 = w[3]! | 0;
    if (last[0] === w0 && last[1] === w1 && last[2] === w2 && last[3] === w3) return last;
    const p = find6Index(this.v6Starts, this.v6Segs, this.v6Index, w) * 2;
    last[0] = w0;
    last[1] = w1;
    last[2] = w2;
    last[3] = w3;
    last[4] = this.pairs[p]! | 0;
    last[5] = this.pairs[p + 1]! | 0;
    return last;
  }

  network(ip: ParsedIp): NetworkRecord {
    const i = ip.version === 4 ? this.seek4(ip.v4)[1]! : this.seek6(ip.v6)[4]!;
    if (i < 0) return UNKNOWN_NETWORK;
    return this.nets.get(i) ?? this.makeNetwork(i);
  }

  networkTypeEvidence(ip: ParsedIp): NetworkTypeEvidence {
    const i = ip.version === 4 ? this.seek4(ip.v4)[1]! : this.seek6(ip.v6)[4]!;
    if (i < 0) return NOT_ANNOUNCED;
    const r = this.s.netRecords;
    const b = i * NET_WORDS;
    return { source: this.strings.at(r[b + 3]!) as NetworkTypeEvidence['source'], reason: this.strings.at(r[b + 4]!) };
  }

  location(ip: ParsedIp): LocationRecord {
    const i = ip.version === 4 ? this.seek4(ip.v4)[2]! : this.seek6(ip.v6)[5]!;
    if (i < 0) return EMPTY_LOCATION;
    return this.locs.get(i) ?? this.makeLocation(i);
  }

  recordIndexes(ips: readonly ParsedIp[], net: Int32Array, loc: Int32Array): void {
    const n = ips.length;
    const d = this.v4Direct;
    // Stage 1: every IPv4 address's block-index entry, a tight loop whose misses overlap.
    for (let k = 0; k < n; k++) {
      const ip = ips[k]!;
      if (ip.version === 4) {
        const h = (ip.v4 >>> 8) * 2;
        net[k] = d[h]! - 1;
        loc[k] = d[h + 1]! - 1;
      } else net[k] = IPV6;
    }
    // Stage 2: the split blocks' short scans and the IPv6 searches. (Taking the IPv6 searches' steps
    // for all addresses in turn, so their misses overlap, was slower: most of a search is a few
    // steps within a sub-index block already in cache.)
    const pairs = this.pairs;
    for (let k = 0; k < n; k++) {
      const m = net[k]!;
      if (m !== SPLIT && m !== IPV6) continue;
      const ip = ips[k]!;
      const p =
        (ip.version === 4
          ? this.v4Segs[findSegment4(this.v4Starts, loc[k]!, ip.v4)]!
          : find6Index(this.v6Starts, this.v6Segs, this.v6Index, ip.v6)) * 2;
      net[k] = pairs[p]! | 0;
      loc[k] = pairs[p + 1]! | 0;
    }
  }

  networkAsn(i: number): number {
    return this.s.netRecords[i * NET_WORDS]!;
  }

  networkType(i: number): NetworkType {
    return this.strings.at(this.s.netRecords[i * NET_WORDS + 2]!) as NetworkType;
  }

  networkJson(i: number): number {
    const h = this.netJson[i]!;
    return h !== 0 ? h : (this.netJson[i] = this.prepared(this.nets.get(i) ?? this.makeNetwork(i)));
  }

  locationJson(i: number): number {
    const h = this.locJson[i]!;
    return h !== 0 ? h : (this.locJson[i] = this.prepared(this.locs.get(i) ?? this.makeLocation(i)));
  }

  /** The handle of a record's JSON in the arena; 0 when the record has none or it does not fit. */
  private prepared(record: object): number {
    const text = recordJson(record);
    return text === undefined ? 0 : this.json.add(text);
  }

  ranges(): DatasetRanges {
    const pairs = this.pairs;
    return {
      v4: { starts: this.v4Starts, pairs: this.v4Segs },
      v6: { starts: this.v6Starts, pairs: this.v6Segs },
      pairCount: pairs.length / 2,
      network: (p) => (pairs[2 * p] === NONE ? null : (this.nets.get(pairs[2 * p]!) ?? this.makeNetwork(pairs[2 * p]!))),
      location: (p) => (pairs[2 * p + 1] === NONE ? null : (this.locs.get(pairs[2 * p + 1]!) ?? this.makeLocation(pairs[2 * p + 1]!))),
    };
  }

  private makeNetwork(i: number): NetworkRecord {
    const r = this.s.netRecords;
    const b = i * NET_WORDS;
    const asn = r[b]!;
    // Flags made here once per record, so a lookup reads them off the record (honest-location.ts).
    const rec: NetworkRecord = networkRecord(
      {
        asn,
        isp: this.strings.at(r[b + 1]!),
        type: this.strings.at(r[b + 2]!) as NetworkType,
        org: this.strings.at(r[b + 5]!) || null,
        domain: this.strings.at(r[b + 6]!) || null,
        abuse_email: null,
        abuse_phone: null,
      },
      asn === 0,
      ANYCAST_ASNS.has(asn),
    );
    this.nets.set(i, rec);
    return rec;
  }

  private makeLocation(i: number): LocationRecord {
    const r = this.s.locRecords;
    const b = i * LOC_WORDS;
    const str = (k: number) => this.strings.at(r[b + k]!);
    const coord = (k: number) => (r[b + k] === NO_COORD ? null : r[b + k]! / 1e4);
    // As lookups answer it (precision, radius, placeholders cut to the country), made here once per record.
    const rec: LocationRecord = answeredLocation({
      country: str(0),
      state: str(1),
      city: str(2),
      timezone: str(3),
      latitude: coord(5),
      longitude: coord(6),
      geo_hash: str(4),
    });
    this.locs.set(i, rec);
    return rec;
  }
}

/** recordIndexes' mark for an IPv6 address between its stages (record numbers are -1 or more, SPLIT is -2). */
const IPV6 = -3;

/** The derived lookup indexes, the costly part of a load (a 128 MiB table for IPv4). */
export interface PreparedIndexes {
  direct: Int32Array;
  v6: Index6;
}

/**
 * `memory`: where to write the indexes (the IPv4 block index: BLOCK_INDEX4_WORDS words), when the
 * caller set it aside; `zeroed` when no load has written there yet (blocks in no range are then left
 * untouched, see blockIndex4).
 */
export function prepareIndexes(
  s: Sections,
  memory?: { direct: Int32Array; zeroed: boolean; v6: Uint32Array; pace: { blocks: number; pause: () => void } },
): PreparedIndexes {
  return {
    direct: blockIndex4(
      { starts: s.v4Starts as Uint32Array, segs: s.v4Segs as Uint32Array },
      s.pairs as Uint32Array,
      memory?.direct,
      memory?.pace,
      memory?.zeroed,
    ),
    v6: index6(s.v6Starts as Uint32Array, undefined, memory?.v6, memory?.pace.pause),
  };
}

/** Loads ip-dataset.bin; refuses a file that is not one, is of another format version, or is truncated. */
export function loadDataset(file: string): LoadedIpDataset {
  const { header, sections } = decodeDataset(readFileSync(file), file);
  return new LoadedDataset(header.info, sections);
}

/**
 * The dataset's string table (ISP names, places, zones) over the file's bytes: each string is decoded
 * when a record first needs it, and kept, so a load makes none of its 760,000 strings up front.
 */
export class PackedStrings {
  readonly decoded: LazySlots<string>;
  private readonly bytes: Buffer;

  constructor(
    bytes: Uint8Array,
    private readonly offsets: Uint32Array,
  ) {
    this.bytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.decoded = new LazySlots(offsets.length - 1);
  }

  at(i: number): string {
    let text = this.decoded.get(i);
    if (text === undefined) this.decoded.set(i, (text = this.bytes.toString('utf8', this.offsets[i]!, this.offsets[i + 1]!)));
    return text;
  }
}

/**
 * Why the dataset file cannot be used as it is (missing, not a dataset, another format version,
 * truncated header), or undefined when its header reads: `umbra serve` and `data build --if-missing`
 * build it again in those cases, so an upgrade that changes the format needs no manual step.
 */
export function datasetFileProblem(file: string): string | undefined {
  if (!existsSync(file)) return `no IP dataset at ${file}`;
  try {
    readDatasetHeader(file);
    return undefined;
  } catch (e) {
    if (e instanceof DatasetFormatError) return e.message.replace(/; rebuild it with .*$/, '');
    throw e;
  }
}

/** The header of a dataset file (build time, sources, counts) without reading its tables. */
export function readDatasetHeader(file: string): DatasetHeader {
  const fd = openSync(file, 'r');
  try {
    const prefix = Buffer.alloc(PREFIX_BYTES);
    readSync(fd, prefix, 0, PREFIX_BYTES, 0);
    const len = prefix.length === PREFIX_BYTES ? prefix.readUInt32LE(8) : 0;
    const buf = Buffer.alloc(PREFIX_BYTES + Math.min(len, 256 * 1024 * 1024));
    const got = readSync(fd, buf, 0, buf.length, 0);
    return decodeHeader(buf.subarray(0, got), file);
  } finally {
    closeSync(fd);
  }
}
