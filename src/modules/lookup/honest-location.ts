import { carriedIpv4, formatV4, type Ipv4Carrier, type ParsedIp } from '../../lib/ip-address.ts';
import { isAnycast } from './anycast.ts';
import { UNKNOWN_NETWORK, type LocationPrecision, type LocationRecord, type NetworkRecord } from './ip-dataset.ts';
import { reservedBlock } from './reserved-space.ts';
import { freezeWithJson, RECORD_JSON } from '../../lib/record-json.ts';

export type { LocationPrecision };

/** A location as a lookup answers it: the geo source's place, cut to what the data supports. */
export interface AnsweredLocation extends LocationRecord {
  precision: LocationPrecision;
  /**
   * Nominal radius, in km, around latitude/longitude that the answer stands for: CITY_RADIUS_KM for
   * a city; null when the answer is no point (region, country, none), where the precision says how
   * coarse it is. The geo source gives no per-range radius, so this is not a per-address measurement.
   */
  accuracy_radius_km: number | null;
}

/** A network as a lookup answers it, with what its address space is known to be. */
export interface AnsweredNetwork extends NetworkRecord {
  /** Reserved (IANA special-purpose, multicast, outside IPv6 global unicast) or in no announced or delegated range. */
  bogon: boolean;
  /** In a known anycast network (anycast.ts): its location is at most a country. */
  anycast: boolean;
}

/**
 * A city answer stands for the metropolitan area around the city's point, and the geo source (DB-IP
 * Lite) publishes no radius of its own: 50 km is the nominal radius of such an area.
 */
export const CITY_RADIUS_KM = 50;

/**
 * The geo source's placeholder entries: one point that it gives to huge blocks it knows only the
 * registry of (a regional registry's office, or a default point for unassigned space), as
 * country|city|latitude,longitude. Measured on the 2026-06 DB-IP Lite data (docs/intelligence.md,
 * Locations): each covers far more unrouted space than routed, and its routed ranges belong to
 * networks all over the registry's region. Addresses on them are answered with the country only.
 */
export const PLACEHOLDER_ENTRIES: ReadonlySet<string> = new Set([
  // 42.6 % of unrouted 2000::/3 (2000::/16 and much of 2001::/16), and LACNIC /32s of Latin American networks.
  'CH|Murten/Morat|46.9219,7.1659',
  // AFRINIC's office, Ebene CyberCity, Mauritius: networks all over Africa.
  'MU|Quatre Bornes (Ebene CyberCity)|-20.2433,57.4962',
  'MU|Ebene CyberCity|-20.2419,57.4896',
  // ARIN's office, Chantilly, Virginia: networks all over North America.
  'US|Chantilly|38.9097,-77.4524',
  // RIPE NCC's office, Amsterdam: unassigned RIPE space.
  'NL|Amsterdam (Amsterdam-Centrum)|52.3783,4.9007',
]);

export const placeholderKey = (l: LocationRecord): string => `${l.country}|${l.city}|${l.latitude},${l.longitude}`;

/** The answer for addresses at no place: reserved, unrouted, or not in the geo source. */
export const NO_LOCATION: AnsweredLocation = located('', '', '', '', null, null, '', 'none', null);

/** Which IPv4 address an IPv6 address was answered for (6to4, Teredo, NAT64). */
export interface EmbeddedIpv4 {
  ip: string;
  via: Ipv4Carrier;
}

/** Whether an address of a network with ASN `asn` (0: none) is answered bogon: no ASN, or reserved space. */
export const isBogon = (at: ParsedIp, asn: number): boolean => asn === 0 || reservedBlock(at) !== undefined;

/**
 * Turns the dataset's records into answers that claim no more than the data supports:
 *
 * - 6to4, Teredo and NAT64 addresses are answered for the IPv4 address they carry;
 * - reserved space and space in no network range (neither announced nor delegated, per the ASN
 *   source) is a bogon, at no place, whatever the geo source says about it;
 * - known anycast networks and the geo source's placeholder entries are answered with the country only;
 * - every location says its precision and radius.
 *
 * Answers are frozen and shared like the records they come from, so a lookup allocates none; every
 * network and location answer carries its JSON (made once with it, lib/record-json.ts), which the
 * HTTP answers copy. The loaded dataset's records already are answers (answeredLocation,
 * networkRecord, made once per record), so most lookups return them as they are; a variant is made,
 * once per record and kept as long as it lives, only where the address says more than its record
 * (a reserved block inside an AS's range, an anycast prefix) or for a dataset of plain records.
 */
export class HonestLocations {
  /** Per network record: its variants by flags (bogon * 2 + anycast). */
  private readonly networks = new WeakMap<NetworkRecord, Array<AnsweredNetwork | undefined>>();
  /** Per location record: its answer when the address has no reason to claim less. */
  private readonly locations = new WeakMap<LocationRecord, AnsweredLocation>();
  /** Country-only answers, one per country. */
  private readonly countries = new Map<string, AnsweredLocation>();

  /**
   * The address whose records answer for `ip`: the IPv4 address a 6to4, Teredo or NAT64 address
   * carries (a new ParsedIp, made only for those), else `ip` itself.
   */
  target(ip: ParsedIp): ParsedIp {
    const carried = carriedIpv4(ip);
    return carried ? { version: 4, v4: carried.v4, text: formatV4(carried.v4) } : ip;
  }

  /** Which IPv4 address `ip` was answered for, when target(ip) is not ip. */
  embedded(ip: ParsedIp): EmbeddedIpv4 | undefined {
    const carried = carriedIpv4(ip);
    return carried && { ip: formatV4(carried.v4), via: carried.via };
  }

  /** `base`, the network record of `at` (a target()), flagged: the record itself when it already says so (loaded datasets). */
  answerNetwork(base: NetworkRecord, at: ParsedIp): AnsweredNetwork {
    if (base === UNKNOWN_NETWORK) return UNROUTED_NETWORK;
    const bogon = isBogon(at, base.asn);
    const anycast = !bogon && isAnycast(at, base.asn);
    if (base.bogon === bogon && base.anycast === anycast) return base as AnsweredNetwork;
    return this.network(base, bogon, anycast);
  }

  /** `rec`, the location record of an address whose network was answered `network`, cut to what the data supports. */
  answerLocation(rec: LocationRecord, network: AnsweredNetwork): AnsweredLocation {
    if (network.bogon) return NO_LOCATION;
    if (network.anycast) return this.countryOnly(rec.country);
    if (rec.precision !== undefined) return rec as AnsweredLocation;
    return rec.country === '' ? NO_LOCATION : this.location(rec);
  }

  network(base: NetworkRecord, bogon: boolean, anycast: boolean): AnsweredNetwork {
    let variants = this.networks.get(base);
    if (!variants) this.networks.set(base, (variants = [undefined, undefined, undefined, undefined]));
    const k = (bogon ? 2 : 0) + (anycast ? 1 : 0);
    return (variants[k] ??= networkRecord(base, bogon, anycast));
  }

  /** The answer for a place of the geo source, at the precision its entry supports. */
  location(rec: LocationRecord): AnsweredLocation {
    let answered = this.locations.get(rec);
    if (answered === undefined) {
      answered = answeredLocation(rec, (country) => this.countryOnly(country));
      this.locations.set(rec, answered);
    }
    return answered;
  }

  /** The country alone (countryLocation), one shared answer per country. */
  countryOnly(country: string): AnsweredLocation {
    if (country === '') return NO_LOCATION;
    let answered = this.countries.get(country);
    if (!answered) {
      answered = countryLocation(country);
      this.countries.set(country, answered);
    }
    return answered;
  }
}

/**
 * The country alone: region, city, coordinates, geohash and time zone would describe a point the
 * data does not have (a country can span several zones).
 */
function countryLocation(country: string): AnsweredLocation {
  return country === '' ? NO_LOCATION : located(country, '', '', '', null, null, '', 'country', null);
}

/**
 * A place of the geo source as answered, at the precision its entry supports: the loaded dataset
 * makes each of its location records through this once, so lookups read the answer off the record.
 * `countryOnly`: where a country-only answer comes from (a shared one per country, or a new one).
 */
export function answeredLocation(
  rec: LocationRecord,
  countryOnly: (country: string) => AnsweredLocation = countryLocation,
): AnsweredLocation {
  if (rec.country === '') return NO_LOCATION;
  if (rec.city === '' || PLACEHOLDER_ENTRIES.has(placeholderKey(rec))) {
    // A country-only entry of the source is its country's centroid: a point the address is not at.
    if (rec.state === '' || rec.city !== '') return countryOnly(rec.country);
    return located(rec.country, rec.state, '', rec.timezone, rec.latitude, rec.longitude, rec.geo_hash, 'region', null);
  }
  return located(rec.country, rec.state, rec.city, rec.timezone, rec.latitude, rec.longitude, rec.geo_hash, 'city', CITY_RADIUS_KM);
}

/**
 * Every answered location is made here, so all have one hidden class: lookups read their members
 * from a few thousand distinct records, and mixed shapes make each read a slower polymorphic one.
 */
function located(
  country: string,
  state: string,
  city: string,
  timezone: string,
  latitude: number | null,
  longitude: number | null,
  geo_hash: string,
  precision: LocationPrecision,
  accuracy_radius_km: number | null,
): AnsweredLocation {
  // The last member is the slot of its JSON (lib/record-json.ts): kept in the record, not beside it.
  const answer = { country, state, city, timezone, latitude, longitude, geo_hash, precision, accuracy_radius_km, [RECORD_JSON]: undefined };
  // Every answer carries its JSON (lib/record-json.ts), which the HTTP answers copy: a bounded cache of
  // it, looked up per answer, misses whenever traffic touches more of the 565,000 places than it holds,
  // and each miss wrote the place anew (docs/architecture.md, "The lookup fast path").
  return freezeWithJson(answer);
}

/** Every flagged network record is made here (the loaded dataset's too), so all have one hidden class (see located). */
export function networkRecord(base: Omit<NetworkRecord, 'bogon' | 'anycast'>, bogon: boolean, anycast: boolean): AnsweredNetwork {
  return freezeWithJson({
    asn: base.asn,
    isp: base.isp,
    type: base.type,
    org: base.org,
    domain: base.domain,
    abuse_email: base.abuse_email,
    abuse_phone: base.abuse_phone,
    bogon,
    anycast,
    [RECORD_JSON]: undefined,
  });
}

/** The network of addresses in no network range: unrouted or reserved, a bogon either way. */
const UNROUTED_NETWORK = networkRecord(UNKNOWN_NETWORK, true, false);
