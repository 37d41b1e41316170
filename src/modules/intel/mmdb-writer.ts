import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reader, Response } from 'mmdb-lib';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type LocationRecord, type NetworkRecord, type NetworkType } from '../lookup/intel-source.ts';
import type { DatasetRanges } from './ip-dataset.ts';
import { MMDB_TYPE, MmdbDataWriter } from './mmdb-data.ts';

/**
 * What the MMDB holds for an address: umbra's two records under their response names, each stored once
 * and pointed to from every range that has it. A part is absent where umbra answers UNKNOWN_NETWORK or
 * EMPTY_LOCATION, and an address with neither has no record at all; MMDB has no null, so unknown
 * coordinates and the always-null network fields are left out.
 */
export interface MmdbRecord {
  network?: { asn: number; isp: string; type: string };
  location?: { country: string; state: string; city: string; timezone: string; latitude?: number; longitude?: number; geo_hash: string };
}

/** umbra's answer from an MMDB record (what a reader's get() returned), for comparing the two. */
export function fromMmdbRecord(r: MmdbRecord | null): { network: NetworkRecord; location: LocationRecord } {
  const n = r?.network;
  const l = r?.location;
  return {
    network: n ? { asn: n.asn, isp: n.isp, type: n.type as NetworkType, org: null, domain: null, abuse_email: null, abuse_phone: null } : UNKNOWN_NETWORK,
    location: l ? { country: l.country, state: l.state, city: l.city, timezone: l.timezone, latitude: l.latitude ?? null, longitude: l.longitude ?? null, geo_hash: l.geo_hash } : EMPTY_LOCATION,
  };
}

/** A MaxMind reader's answer for `text` in umbra's shape (the reader is typed for MaxMind's own record shapes). */
export function mmdbAnswer(reader: Reader<Response>, text: string): { network: NetworkRecord; location: LocationRecord } {
  return fromMmdbRecord(reader.get(text) as unknown as MmdbRecord | null);
}

export interface MmdbOptions {
  databaseType: string;
  description: string;
  /** Unix seconds. */
  buildEpoch: number;
  /** The smallest record size to use (default 24); a larger one is taken when the tree needs it. */
  recordSize?: 24 | 28 | 32;
}

export interface MmdbImage {
  /** Search tree, data-section separator, data section, metadata: the file is their concatenation. */
  parts: Buffer[];
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  bytes: number;
}

const NO_DATA = 0xffffffff;
const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'); // \xAB\xCD\xEF + "MaxMind.com"

/** Each pair's record written once, its network and location parts shared; offsets per pair, NO_DATA for none. */
function encodeData(ranges: DatasetRanges): { data: Buffer; offsets: Uint32Array } {
  const w = new MmdbDataWriter(true);
  const offsets = new Uint32Array(ranges.pairCount).fill(NO_DATA);
  // Keyed by record identity: the loaded dataset hands out one shared object per record.
  const nets = new Map<NetworkRecord, number>();
  const locs = new Map<LocationRecord, number>();
  for (let p = 0; p < ranges.pairCount; p++) {
    const net = ranges.network(p);
    const loc = ranges.location(p);
    if (!net && !loc) continue;
    let netAt = net ? nets.get(net) : undefined;
    if (net && netAt === undefined) {
      nets.set(net, (netAt = w.length));
      w.map(3);
      w.string('asn');
      w.uint(MMDB_TYPE.uint32, net.asn);
      w.string('isp');
      w.string(net.isp);
      w.string('type');
      w.string(net.type);
    }
    let locAt = loc ? locs.get(loc) : undefined;
    if (loc && locAt === undefined) {
      locs.set(loc, (locAt = w.length));
      w.map(5 + (loc.latitude === null ? 0 : 1) + (loc.longitude === null ? 0 : 1));
      for (const k of ['country', 'state', 'city', 'timezone', 'geo_hash'] as const) {
        w.string(k);
        w.string(loc[k]);
      }
      for (const k of ['latitude', 'longitude'] as const) {
        const v = loc[k];
        if (v === null) continue;
        w.string(k);
        w.double(v);
      }
    }
    offsets[p] = w.length;
    w.map((netAt === undefined ? 0 : 1) + (locAt === undefined ? 0 : 1));
    if (netAt !== undefined) {
      w.string('network');
      w.pointer(netAt);
    }
    if (locAt !== undefined) {
      w.string('location');
      w.pointer(locAt);
    }
  }
  return { data: w.bytes(), offsets };
}

function encodeMetadata(options: MmdbOptions, nodeCount: number, recordSize: number): Buffer {
  const w = new MmdbDataWriter(false);
  w.map(9);
  const u16 = (k: string, v: number) => {
    w.string(k);
    w.uint(MMDB_TYPE.uint16, v);
  };
  u16('binary_format_major_version', 2);
  u16('binary_format_minor_version', 0);
  w.string('build_epoch');
  w.uint(MMDB_TYPE.uint64, options.buildEpoch);
  w.string('database_type');
  w.string(options.databaseType);
  w.string('description');
  w.map(1);
  w.string('en');
  w.string(options.description);
  u16('ip_version', 6);
  w.string('languages');
  w.array(1);
  w.string('en');
  w.string('node_count');
  w.uint(MMDB_TYPE.uint32, nodeCount);
  u16('record_size', recordSize);
  return Buffer.concat([METADATA_MARKER, w.bytes()]);
}

/**
 * Turns the dataset's segments into an MMDB (MaxMind DB format 2.0, IPv6 tree) that answers every
 * address as the dataset does: IPv4 under ::/96, where MaxMind readers look IPv4 up, and aliased at
 * ::ffff:0:0/96, which umbra parses as IPv4 too. Those two /96s answer IPv4 data, as in MaxMind's own
 * databases, whatever the dataset's IPv6 table says there. Memory: the finished file plus a few
 * typed arrays, whatever the number of ranges.
 */
export function buildMmdb(ranges: DatasetRanges, options: MmdbOptions): MmdbImage {
  const { data, offsets } = encodeData(ranges);
  const tree = new TreeWriter(ranges, offsets);
  const nodeCount = tree.count();
  // A record holds a node number, nodeCount (no data) or nodeCount + 16 + a data offset.
  const largest = nodeCount + 16 + data.length;
  const least = options.recordSize ?? 24;
  const recordSize = ([24, 28, 32] as const).find((bits) => bits >= least && largest < 2 ** bits);
  if (recordSize === undefined) throw new RangeError(`MMDB too large: ${nodeCount} nodes and ${data.length} data bytes do not fit 32-bit records`);
  const treeBytes = tree.write(nodeCount, recordSize);
  const parts = [treeBytes, Buffer.alloc(16), data, encodeMetadata(options, nodeCount, recordSize)];
  return { parts, nodeCount, recordSize, bytes: parts.reduce((n, b) => n + b.length, 0) };
}

/** buildMmdb into `file`, written beside it and renamed, so a file that exists is whole (also when two processes write it). */
export function writeMmdbFile(file: string, ranges: DatasetRanges, options: MmdbOptions): Omit<MmdbImage, 'parts'> {
  const { parts, ...info } = buildMmdb(ranges, options);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const part of parts) for (let at = 0; at < part.length; ) at += writeSync(fd, part, at);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  return info;
}

/**
 * The binary search tree, built top-down from the sorted segments: a block of the address space that
 * lies inside one segment is a record pointing at that segment's data, any other block a node whose two
 * halves are built the same way. Neighbouring segments never share a pair, so no two sibling leaves
 * have the same value and the tree is the smallest one. Walked twice, to count the nodes (which fix the
 * record size and the data pointers) and then to write them; node numbers are given in pre-order, so the
 * root is node 0 and both walks number alike.
 */
class TreeWriter {
  private nodes = 0;
  private nodeCount = 0;
  private out: Buffer | undefined;
  private recordBytes = 0;
  private setNode: (id: number, left: number, right: number) => void = () => {};
  /** The IPv4 subtree's record, made at ::/96 and reused at ::ffff:0:0/96; -1 until made. */
  private v4Root = -1;
  /** Block start (four words) per IPv6 depth 0..128, and the start of its upper half per depth. */
  private readonly prefix = new Uint32Array(4 * 129);
  private readonly mid = new Uint32Array(4 * 128);

  constructor(
    private readonly ranges: DatasetRanges,
    private readonly offsets: Uint32Array,
  ) {
    if (ranges.v4.starts[0] !== 0 || ranges.v6.starts.subarray(0, 4).some((w) => w !== 0)) throw new RangeError('dataset segments must start at address 0');
  }

  count(): number {
    this.nodes = 0;
    this.v4Root = -1;
    this.setNode = () => {};
    this.node6(0, 0, this.ranges.v6.pairs.length - 1);
    return this.nodes;
  }

  write(nodeCount: number, recordSize: 24 | 28 | 32): Buffer {
    this.nodeCount = nodeCount;
    this.recordBytes = recordSize / 4;
    const out = (this.out = Buffer.alloc(nodeCount * this.recordBytes));
    this.setNode =
      recordSize === 24
        ? (id, l, r) => {
            out.writeUIntBE(l, id * 6, 3);
            out.writeUIntBE(r, id * 6 + 3, 3);
          }
        : recordSize === 28
          ? (id, l, r) => {
              // The middle byte holds the top four bits of each record, the left one's first.
              const o = id * 7;
              out.writeUIntBE(l & 0xffffff, o, 3);
              out[o + 3] = ((l >>> 20) & 0xf0) | ((r >>> 24) & 0x0f);
              out.writeUIntBE(r & 0xffffff, o + 4, 3);
            }
          : (id, l, r) => {
              out.writeUInt32BE(l, id * 8);
              out.writeUInt32BE(r, id * 8 + 4);
            };
    this.nodes = 0;
    this.v4Root = -1;
    this.node6(0, 0, this.ranges.v6.pairs.length - 1);
    if (this.nodes !== nodeCount) throw new Error(`tree walk numbered ${this.nodes} nodes, counted ${nodeCount}`);
    return out;
  }

  private leaf(pair: number): number {
    const at = this.offsets[pair]!;
    return at === NO_DATA ? this.nodeCount : this.nodeCount + 16 + at;
  }

  /** The record for IPv4 block [prefix, prefix + 2^(32-d)), which segments lo..hi overlap (lo's start ≤ prefix). */
  private node4(d: number, lo: number, hi: number, prefix: number): number {
    if (lo === hi) return this.leaf(this.ranges.v4.pairs[lo]!);
    const starts = this.ranges.v4.starts;
    const mid = prefix + 2 ** (31 - d);
    // k: the last segment starting at or below mid, which is the first of the upper half.
    let k = lo;
    let h = hi;
    while (k < h) {
      const m = (k + h + 1) >>> 1;
      if (starts[m]! <= mid) k = m;
      else h = m - 1;
    }
    const id = this.nodes++;
    const left = this.node4(d + 1, lo, starts[k] === mid ? k - 1 : k, prefix);
    const right = this.node4(d + 1, k, hi, mid);
    this.setNode(id, left, right);
    return id;
  }

  /** node4 for IPv6 depth d; the block's start is this.prefix at d. */
  private node6(d: number, lo: number, hi: number): number {
    const p = this.prefix;
    const b = d * 4;
    // Blocks holding ::/96 or ::ffff:0:0/96 are split down to those /96s, which take the IPv4 subtree.
    const mapped = d <= 96 && p[b] === 0 && p[b + 1] === 0 && (p[b + 2] === 0 || p[b + 2] === (0xffff & highBits(d - 64)));
    if (mapped && d === 96) {
      if (this.v4Root < 0) this.v4Root = this.node4(0, 0, this.ranges.v4.pairs.length - 1, 0);
      return this.v4Root;
    }
    if (lo === hi && !mapped) return this.leaf(this.ranges.v6.pairs[lo]!);
    const starts = this.ranges.v6.starts;
    const m = this.mid;
    for (let w = 0; w < 4; w++) m[b + w] = p[b + w]!;
    m[b + (d >>> 5)] = m[b + (d >>> 5)]! | (0x80000000 >>> (d & 31));
    let k = lo;
    let h = hi;
    while (k < h) {
      const x = (k + h + 1) >>> 1;
      if (compareStart(starts, x, m, b) <= 0) k = x;
      else h = x - 1;
    }
    const id = this.nodes++;
    const c = b + 4;
    for (let w = 0; w < 4; w++) p[c + w] = p[b + w]!;
    const left = this.node6(d + 1, lo, compareStart(starts, k, m, b) === 0 ? k - 1 : k);
    for (let w = 0; w < 4; w++) p[c + w] = m[b + w]!;
    const right = this.node6(d + 1, k, hi);
    this.setNode(id, left, right);
    return id;
  }
}

/** A 32-bit word's top n bits set (n clamped to 0..32). */
function highBits(n: number): number {
  return n <= 0 ? 0 : n >= 32 ? 0xffffffff : (0xffffffff << (32 - n)) >>> 0;
}

/** Segment x's start against the four words of `m` at `at`. */
function compareStart(starts: Uint32Array, x: number, m: Uint32Array, at: number): number {
  for (let w = 0; w < 4; w++) {
    const s = starts[x * 4 + w]!;
    const v = m[at + w]!;
    if (s !== v) return s < v ? -1 : 1;
  }
  return 0;
}
