import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reader, Response } from 'mmdb-lib';
import {
  EMPTY_LOCATION,
  UNKNOWN_NETWORK,
  type LocationRecord,
  type NetworkRecord,
  type NetworkType,
} from '../../../src/modules/lookup/ip-dataset.ts';
import type { DatasetRanges } from '../../../src/modules/dataset/dataset-reader.ts';
import { ANYCAST_ASNS } from '../../../src/modules/lookup/anycast.ts';
import { answeredLocation } from '../../../src/modules/lookup/honest-location.ts';
import { MMDB_TYPE, MmdbDataWriter } from './mmdb-data.ts';
import { NO_DATA, TreeWriter } from './mmdb-tree.ts';

/**
 * What the MMDB holds for an address: umbra's two records under their response names, each stored once
 * and pointed to from every range that has it. A part is absent where umbra answers UNKNOWN_NETWORK or
 * EMPTY_LOCATION, and an address with neither has no record at all; MMDB has no null, so unknown
 * coordinates, a null org or domain and the always-null abuse contacts are left out.
 */
export interface MmdbRecord {
  network?: { asn: number; isp: string; type: string; org?: string; domain?: string };
  location?: { country: string; state: string; city: string; timezone: string; latitude?: number; longitude?: number; geo_hash: string };
}

/** umbra's answer from an MMDB record (what a reader's get() returned), for comparing the two. */
export function fromMmdbRecord(r: MmdbRecord | null): { network: NetworkRecord; location: LocationRecord } {
  const n = r?.network;
  const l = r?.location;
  return {
    // The loaded dataset's records also carry members derived from these (flags, precision): derived the same way.
    network: n
      ? {
          asn: n.asn,
          isp: n.isp,
          type: n.type as NetworkType,
          org: n.org ?? null,
          domain: n.domain ?? null,
          abuse_email: null,
          abuse_phone: null,
          bogon: n.asn === 0,
          anycast: ANYCAST_ASNS.has(n.asn),
        }
      : UNKNOWN_NETWORK,
    location: l
      ? answeredLocation({
          country: l.country,
          state: l.state,
          city: l.city,
          timezone: l.timezone,
          latitude: l.latitude ?? null,
          longitude: l.longitude ?? null,
          geo_hash: l.geo_hash,
        })
      : EMPTY_LOCATION,
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
      w.map(3 + (net.org === null ? 0 : 1) + (net.domain === null ? 0 : 1));
      w.string('asn');
      w.uint(MMDB_TYPE.uint32, net.asn);
      w.string('isp');
      w.string(net.isp);
      w.string('type');
      w.string(net.type);
      for (const k of ['org', 'domain'] as const) {
        const v = net[k];
        if (v === null) continue;
        w.string(k);
        w.string(v);
      }
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
  if (recordSize === undefined)
    throw new RangeError(`MMDB too large: ${nodeCount} nodes and ${data.length} data bytes do not fit 32-bit records`);
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
