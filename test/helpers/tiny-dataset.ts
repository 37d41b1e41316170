import {
  EMPTY_LOCATION,
  UNKNOWN_NETWORK,
  type IpDataset,
  type LocationRecord,
  type NetworkRecord,
} from '../../src/modules/lookup/ip-dataset.ts';
import type { ParsedIp } from '../../src/lib/ip-address.ts';

/**
 * A three-range dataset for transport tests, where the IP data itself is not under test.
 * Lookups against the real built dataset are tested in the intel module and the black-box test.
 */
// Frozen, as the real dataset's records are (the fast path reuses the JSON of frozen records).
const GOOGLE: NetworkRecord = Object.freeze({
  asn: 15169,
  isp: 'Google LLC',
  type: 'DATACENTER',
  org: null,
  domain: null,
  abuse_email: null,
  abuse_phone: null,
});
const BIG_ASN: NetworkRecord = Object.freeze({
  asn: 4294967294,
  isp: 'Private Use AS',
  type: 'CORPORATE',
  org: null,
  domain: null,
  abuse_email: null,
  abuse_phone: null,
});
const MTV: LocationRecord = Object.freeze({
  country: 'US',
  state: 'California',
  city: 'Mountain View',
  timezone: 'America/Los_Angeles',
  latitude: 37.4056,
  longitude: -122.0775,
  geo_hash: '9q9hrh5',
});

export const tinyDataset: IpDataset = {
  info: {
    built_at: 0,
    sources: { fixture: '1' },
    counts: { v4_network_ranges: 2, v6_network_ranges: 1, v4_location_ranges: 1, v6_location_ranges: 0 },
  },
  network(ip: ParsedIp) {
    if (ip.version === 4 && ip.v4 >>> 8 === 0x080808) return GOOGLE; // 8.8.8.0/24
    if (ip.version === 4 && ip.v4 >>> 24 === 100) return BIG_ASN; // 100.0.0.0/8
    if (ip.version === 6 && ip.v6[0] === 0x20014860) return GOOGLE; // 2001:4860::/32
    return UNKNOWN_NETWORK;
  },
  location(ip: ParsedIp) {
    return ip.version === 4 && ip.v4 >>> 8 === 0x080808 ? MTV : EMPTY_LOCATION;
  },
};
