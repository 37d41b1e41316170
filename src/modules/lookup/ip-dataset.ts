import type { ByteArena } from '../../lib/byte-arena.ts';
import type { ParsedIp } from '../../lib/ip-address.ts';

/** The contract's network.type values (an open list). */
export type NetworkType =
  | 'MOBILE'
  | 'SATELLITE'
  | 'IN_FLIGHT_WIFI'
  | 'RESIDENTIAL'
  | 'CORPORATE'
  | 'ACADEMIC'
  | 'DATACENTER'
  | 'GOVERNMENT'
  /** Not in any announced range (private, reserved, unrouted): not one of the contract's values, which are an open list. */
  | 'UNKNOWN';

/** Where a network.type came from: a curated ASN group, the registered name, an imported list, or nothing. */
export type NetworkTypeSource = 'asn' | 'name' | 'list' | 'none';

/** The provenance of one answer's network.type (`?explain=true`). */
export interface NetworkTypeEvidence {
  source: NetworkTypeSource;
  /** In words: the curated group and its source, the keyword matched, the list, or why nothing is known. */
  reason: string;
}

export const NOT_ANNOUNCED: NetworkTypeEvidence = Object.freeze({
  source: 'none',
  reason: 'the address is in no announced range of the ASN data',
}) as NetworkTypeEvidence;

export interface NetworkRecord {
  /** AS number; 0 when the address is in no announced range. May exceed int32. */
  asn: number;
  isp: string;
  type: NetworkType;
  org: string | null;
  domain: string | null;
  abuse_email: string | null;
  abuse_phone: string | null;
  /**
   * Set on the loaded dataset's records (made once per record): bogon when asn is 0, anycast when the
   * AS is a known anycast network. A lookup adds what depends on the address (honest-location.ts).
   */
  bogon?: boolean;
  anycast?: boolean;
}

/** How much of a location the data supports: a city, a region (state), only a country, or nothing. */
export type LocationPrecision = 'city' | 'region' | 'country' | 'none';

export interface LocationRecord {
  /** ISO 3166-1 alpha-2; '' when unknown. */
  country: string;
  state: string;
  city: string;
  /** IANA zone; '' when unknown. */
  timezone: string;
  /** null when unknown (0,0 is a real place). */
  latitude: number | null;
  longitude: number | null;
  geo_hash: string;
  /** Set on the loaded dataset's records (answeredLocation, made once per record). */
  precision?: LocationPrecision;
  accuracy_radius_km?: number | null;
}

export interface DatasetInfo {
  /** Unix seconds of the build. */
  built_at: number;
  /** Source package name → version, for attribution and X-Data-Version. */
  sources: Record<string, string>;
  counts: { v4_network_ranges: number; v6_network_ranges: number; v4_location_ranges: number; v6_location_ranges: number };
}

/**
 * The loaded IP dataset. Returned records are shared and frozen: lookups allocate nothing,
 * and callers must not mutate them.
 */
export interface IpDataset {
  readonly info: DatasetInfo;
  /** Never undefined: addresses in no range get UNKNOWN_NETWORK. */
  network(ip: ParsedIp): NetworkRecord;
  /** Where network(ip).type came from; datasets that do not record it leave it out. */
  networkTypeEvidence?(ip: ParsedIp): NetworkTypeEvidence;
  /** Never undefined: addresses in no range get EMPTY_LOCATION. */
  location(ip: ParsedIp): LocationRecord;
}

/**
 * A dataset that can also answer a whole batch from record numbers and the records' JSON as UTF-8
 * bytes made once (the loaded dataset). A batch answer then copies bytes per address instead of
 * reading record objects and their JSON text spread over the heap: the reads of one stage for every
 * address of the batch come before the next stage's, so the memory waits of different addresses
 * overlap (docs/architecture.md, "The batch answer").
 */
export interface IndexedIpDataset extends IpDataset {
  /**
   * The number of each address's network record and location record (-1 where it is in no range), as
   * network() and location() would answer them: `net[k]` and `loc[k]` for `ips[k]`.
   */
  recordIndexes(ips: readonly ParsedIp[], net: Int32Array, loc: Int32Array): void;
  /** Network record i's ASN and type, read from the dataset's tables (no record object is made). */
  networkAsn(i: number): number;
  networkType(i: number): NetworkType;
  /** The handle in `json` of network record i's JSON (the text network(ip) carries), made on first use; 0 if none. */
  networkJson(i: number): number;
  /** The same for location record i (the answered record location(ip) returns). */
  locationJson(i: number): number;
  readonly json: ByteArena;
}

export const isIndexed = (d: IpDataset): d is IndexedIpDataset => typeof (d as Partial<IndexedIpDataset>).recordIndexes === 'function';

export const UNKNOWN_NETWORK: NetworkRecord = Object.freeze({
  asn: 0,
  isp: '',
  type: 'UNKNOWN',
  org: null,
  domain: null,
  abuse_email: null,
  abuse_phone: null,
}) as NetworkRecord;

export const EMPTY_LOCATION: LocationRecord = Object.freeze({
  country: '',
  state: '',
  city: '',
  timezone: '',
  latitude: null,
  longitude: null,
  geo_hash: '',
}) as LocationRecord;
