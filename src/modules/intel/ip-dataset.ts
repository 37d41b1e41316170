import { readFileSync } from 'node:fs';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type DatasetInfo, type IpDataset, type LocationRecord, type NetworkRecord, type NetworkType } from '../lookup/intel-source.ts';
import type { ParsedIp } from '../lookup/ip-address.ts';
import { decodeDataset, LOC_WORDS, NET_WORDS, NO_COORD, type Sections } from './dataset-format.ts';
import { find4Indexed, find6Indexed, NONE, topIndex } from './range-table.ts';

/**
 * The loaded dataset: typed-array views over the file's bytes. Records become frozen objects on
 * first use and are shared from then on, so a lookup allocates nothing.
 */
class LoadedDataset implements IpDataset {
  private readonly nets: Array<NetworkRecord | undefined>;
  private readonly locs: Array<LocationRecord | undefined>;
  private readonly v4NetStarts: Uint32Array;
  private readonly v4NetVals: Uint32Array;
  private readonly v4NetTop: Uint32Array;
  private readonly v6NetStarts: Uint32Array;
  private readonly v6NetVals: Uint32Array;
  private readonly v6NetTop: Uint32Array;
  private readonly v4LocStarts: Uint32Array;
  private readonly v4LocVals: Uint32Array;
  private readonly v4LocTop: Uint32Array;
  private readonly v6LocStarts: Uint32Array;
  private readonly v6LocVals: Uint32Array;
  private readonly v6LocTop: Uint32Array;

  constructor(
    readonly info: DatasetInfo,
    private readonly strings: string[],
    private readonly s: Sections,
  ) {
    this.nets = new Array(s.netRecords.length / NET_WORDS);
    this.locs = new Array(s.locRecords.length / LOC_WORDS);
    const u = (x: Uint32Array | Int32Array) => x as Uint32Array;
    [this.v4NetStarts, this.v4NetVals, this.v6NetStarts, this.v6NetVals] = [u(s.v4NetStarts), u(s.v4NetVals), u(s.v6NetStarts), u(s.v6NetVals)];
    [this.v4LocStarts, this.v4LocVals, this.v6LocStarts, this.v6LocVals] = [u(s.v4LocStarts), u(s.v4LocVals), u(s.v6LocStarts), u(s.v6LocVals)];
    this.v4NetTop = topIndex(this.v4NetStarts, 1);
    this.v6NetTop = topIndex(this.v6NetStarts, 4);
    this.v4LocTop = topIndex(this.v4LocStarts, 1);
    this.v6LocTop = topIndex(this.v6LocStarts, 4);
  }

  network(ip: ParsedIp): NetworkRecord {
    const i = ip.version === 4 ? find4Indexed(this.v4NetStarts, this.v4NetVals, this.v4NetTop, ip.v4) : find6Indexed(this.v6NetStarts, this.v6NetVals, this.v6NetTop, ip.v6);
    if (i === NONE) return UNKNOWN_NETWORK;
    return this.nets[i] ?? this.makeNetwork(i);
  }

  location(ip: ParsedIp): LocationRecord {
    const i = ip.version === 4 ? find4Indexed(this.v4LocStarts, this.v4LocVals, this.v4LocTop, ip.v4) : find6Indexed(this.v6LocStarts, this.v6LocVals, this.v6LocTop, ip.v6);
    if (i === NONE) return EMPTY_LOCATION;
    return this.locs[i] ?? this.makeLocation(i);
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
export function loadDataset(file: string): IpDataset {
  const { header, sections } = decodeDataset(readFileSync(file), file);
  return new LoadedDataset(header.info, header.strings, sections);
}
