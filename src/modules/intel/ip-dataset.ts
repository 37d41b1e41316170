import { readFileSync } from 'node:fs';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type DatasetInfo, type IpDataset, type LocationRecord, type NetworkRecord, type NetworkType } from '../lookup/intel-source.ts';
import type { ParsedIp } from '../lookup/ip-address.ts';
import { decodeDataset, LOC_WORDS, NET_WORDS, NO_COORD, type Sections } from './dataset-format.ts';
import { blockIndex4, find6Indexed, findSegment4, NONE, SPLIT, topIndex } from './range-table.ts';

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

export interface LoadedIpDataset extends IpDataset {
  /** The segment tables behind network() and location(); no copy is made. */
  ranges(): DatasetRanges;
}

/**
 * The loaded dataset: typed-array views over the file's bytes. Records become frozen objects on
 * first use and are shared from then on, so a lookup allocates nothing.
 *
 * Callers ask network(ip) then location(ip) for the same address: the records found by the first
 * call are remembered (keyed by the address value, not the object, so a reused or mutated ParsedIp
 * cannot get a stale answer) and the second call costs no search.
 */
class LoadedDataset implements LoadedIpDataset {
  private readonly nets: Array<NetworkRecord | undefined>;
  private readonly locs: Array<LocationRecord | undefined>;
  private readonly pairs: Uint32Array;
  private readonly v4Starts: Uint32Array;
  private readonly v4Segs: Uint32Array;
  private readonly v4Direct: Int32Array;
  private readonly v6Starts: Uint32Array;
  private readonly v6Segs: Uint32Array;
  private readonly v6Top: Uint32Array;
  /** The last IPv4 address asked for (as int32) and its network and location record (-1 for none). */
  private readonly last4 = new Int32Array(3);
  /** The last IPv6 address asked for (4 words as int32) and its records. */
  private readonly last6 = new Int32Array(6);

  constructor(
    readonly info: DatasetInfo,
    private readonly strings: string[],
    private readonly s: Sections,
  ) {
    this.nets = new Array(s.netRecords.length / NET_WORDS);
    this.locs = new Array(s.locRecords.length / LOC_WORDS);
    this.pairs = s.pairs as Uint32Array;
    this.v4Starts = s.v4Starts as Uint32Array;
    this.v4Segs = s.v4Segs as Uint32Array;
    this.v4Direct = blockIndex4({ starts: this.v4Starts, segs: this.v4Segs }, this.pairs);
    this.v6Starts = s.v6Starts as Uint32Array;
    this.v6Segs = s.v6Segs as Uint32Array;
    this.v6Top = topIndex(this.v6Starts, 4);
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
    let net = d[h]!;
    let loc = d[h + 1]!;
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
    const p = find6Indexed(this.v6Starts, this.v6Segs, this.v6Top, w) * 2;
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
    return this.nets[i] ?? this.makeNetwork(i);
  }

  location(ip: ParsedIp): LocationRecord {
    const i = ip.version === 4 ? this.seek4(ip.v4)[2]! : this.seek6(ip.v6)[5]!;
    if (i < 0) return EMPTY_LOCATION;
    return this.locs[i] ?? this.makeLocation(i);
  }

  ranges(): DatasetRanges {
    const pairs = this.pairs;
    return {
      v4: { starts: this.v4Starts, pairs: this.v4Segs },
      v6: { starts: this.v6Starts, pairs: this.v6Segs },
      pairCount: pairs.length / 2,
      network: (p) => (pairs[2 * p] === NONE ? null : (this.nets[pairs[2 * p]!] ?? this.makeNetwork(pairs[2 * p]!))),
      location: (p) => (pairs[2 * p + 1] === NONE ? null : (this.locs[pairs[2 * p + 1]!] ?? this.makeLocation(pairs[2 * p + 1]!))),
    };
  }

  private makeNetwork(i: number): NetworkRecord {
    const r = this.s.netRecords;
    const b = i * NET_WORDS;
    const rec: NetworkRecord = Object.freeze({
      asn: r[b]!,
      isp: this.strings[r[b + 1]!]!,
      type: this.strings[r[b + 2]!] as NetworkType,
      org: null,
      domain: null,
      abuse_email: null,
      abuse_phone: null,
    });
    this.nets[i] = rec;
    return rec;
  }

  private makeLocation(i: number): LocationRecord {
    const r = this.s.locRecords;
    const b = i * LOC_WORDS;
    const str = (k: number) => this.strings[r[b + k]!]!;
    const coord = (k: number) => (r[b + k] === NO_COORD ? null : r[b + k]! / 1e4);
    const rec: LocationRecord = Object.freeze({ country: str(0), state: str(1), city: str(2), timezone: str(3), latitude: coord(5), longitude: coord(6), geo_hash: str(4) });
    this.locs[i] = rec;
    return rec;
  }
}

/** Loads ip-dataset.bin; refuses a file that is not one, is of another format version, or is truncated. */
export function loadDataset(file: string): LoadedIpDataset {
  const { header, sections } = decodeDataset(readFileSync(file), file);
  return new LoadedDataset(header.info, header.strings, sections);
}
