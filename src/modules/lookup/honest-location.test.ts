import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp, type ParsedIp } from '../../lib/ip-address.ts';
import { CITY_RADIUS_KM, HonestLocations, NO_LOCATION } from './honest-location.ts';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type LocationRecord, type NetworkRecord } from './ip-dataset.ts';

const net = (asn: number, isp: string): NetworkRecord =>
  Object.freeze({ asn, isp, type: 'DATACENTER', org: null, domain: null, abuse_email: null, abuse_phone: null });
const place = (country: string, state: string, city: string, latitude: number | null, longitude: number | null): LocationRecord =>
  Object.freeze({ country, state, city, timezone: 'Etc/Test', latitude, longitude, geo_hash: latitude === null ? '' : 'u0000' });

const GOOGLE = net(15169, 'Google LLC');
const CLOUDFLARE = net(13335, 'Cloudflare, Inc.');
const TELEKOM = net(3320, 'Deutsche Telekom AG');
const LACNIC_MEMBER = net(274942, 'EAP23');
const MTV = place('US', 'California', 'Mountain View', 37.4056, -122.0775);
const BERLIN = place('DE', 'State of Berlin', 'Berlin', 52.52, 13.405);
const MURTEN = place('CH', 'Fribourg', 'Murten/Morat', 46.9219, 7.1659);
const BOUVET = place('BV', '', '', -54.4208, 3.3465);
const REGION = place('SG', 'Central', '', 1.29, 103.85);

/** A dataset of a few ranges: what the geo source says even where the ASN source has no range. */
function records(ip: ParsedIp): { network: NetworkRecord; location: LocationRecord } {
  if (ip.version === 6) {
    if (ip.v6[0] === 0x28030930) return { network: LACNIC_MEMBER, location: MURTEN };
    return { network: UNKNOWN_NETWORK, location: ip.v6[0]! >>> 16 === 0x2000 ? MURTEN : EMPTY_LOCATION };
  }
  const a = ip.v4 >>> 24;
  if (ip.v4 >>> 16 === 0x0808) return { network: GOOGLE, location: MTV };
  if (ip.v4 >>> 16 === 0x6810) return { network: CLOUDFLARE, location: MTV };
  if (a === 91) return { network: TELEKOM, location: BERLIN };
  if (a === 92) return { network: TELEKOM, location: BOUVET };
  if (a === 93) return { network: TELEKOM, location: REGION };
  if (ip.v4 >>> 17 === 198 * 128 + 18 / 2) return { network: TELEKOM, location: BERLIN }; // 198.18.0.0/15, announced by mistake
  return { network: UNKNOWN_NETWORK, location: BERLIN }; // unrouted, yet placed by the geo source
}

function lookup(honest: HonestLocations, text: string) {
  const ip = parseIp(text)!;
  const at = honest.target(ip);
  const r = records(at);
  const network = honest.answerNetwork(r.network, at);
  return { network, location: honest.answerLocation(r.location, network), embedded: honest.embedded(ip) };
}

describe('HonestLocations', () => {
  it('should answer a routed city with precision city, its radius, and the source members unchanged', () => {
    const honest = new HonestLocations();
    const a = lookup(honest, '91.64.0.1');
    assert.deepEqual(a.location, { ...BERLIN, precision: 'city', accuracy_radius_km: CITY_RADIUS_KM });
    assert.deepEqual(a.network, { ...TELEKOM, bogon: false, anycast: false });
    assert.equal(a.embedded, undefined);
  });

  it('should share one frozen answer per record, so lookups allocate none and the HTTP fast path keeps its JSON', () => {
    const honest = new HonestLocations();
    const a = lookup(honest, '91.64.0.1');
    const b = lookup(honest, '91.200.3.4');
    assert.equal(a.location, b.location);
    assert.equal(a.network, b.network);
    assert.ok(Object.isFrozen(a.location) && Object.isFrozen(a.network));
    const c = lookup(honest, '8.8.8.8');
    const d = lookup(honest, '8.8.4.4');
    assert.equal(c.location, d.location);
    assert.ok(Object.isFrozen(c.location));
  });

  it('should place unrouted space nowhere and flag it bogon, whatever city the geo source gives it', () => {
    const a = lookup(new HonestLocations(), '45.0.0.1');
    assert.equal(a.location, NO_LOCATION);
    assert.deepEqual(a.location, { ...EMPTY_LOCATION, precision: 'none', accuracy_radius_km: null });
    assert.deepEqual([a.network.asn, a.network.bogon, a.network.anycast], [0, true, false]);
    // 44 % of random unrouted IPv6 got the geo source's Murten/Morat.
    const b = lookup(new HonestLocations(), '2000:1234::1');
    assert.deepEqual([b.location.city, b.location.precision, b.network.bogon], ['', 'none', true]);
  });

  it('should flag reserved space bogon and place it nowhere even where some network announces it', () => {
    const a = lookup(new HonestLocations(), '198.18.0.1');
    assert.equal(a.network.asn, 3320);
    assert.equal(a.network.bogon, true);
    assert.equal(a.location, NO_LOCATION);
    for (const ip of ['10.1.2.3', '192.168.0.1', 'fd00::1', 'fe80::1', '::1']) {
      const r = lookup(new HonestLocations(), ip);
      assert.deepEqual([r.network.bogon, r.location.precision], [true, 'none'], ip);
    }
  });

  it('should answer a known anycast network with its country only', () => {
    const honest = new HonestLocations();
    for (const ip of ['8.8.8.8', '104.16.132.229']) {
      const a = lookup(honest, ip);
      assert.equal(a.network.anycast, true, ip);
      assert.equal(a.network.bogon, false, ip);
      assert.deepEqual(
        a.location,
        {
          country: 'US',
          state: '',
          city: '',
          timezone: '',
          latitude: null,
          longitude: null,
          geo_hash: '',
          precision: 'country',
          accuracy_radius_km: null,
        },
        ip,
      );
    }
    // Same network outside the listed prefix: unicast, its city kept.
    const b = lookup(honest, '8.8.200.1');
    assert.deepEqual([b.network.anycast, b.location.city, b.location.precision], [false, 'Mountain View', 'city']);
    assert.notEqual(b.network, lookup(honest, '8.8.8.8').network);
  });

  it("should answer the geo source's placeholder entries with the country only", () => {
    const a = lookup(new HonestLocations(), '2803:930::1');
    assert.equal(a.network.bogon, false);
    assert.deepEqual([a.location.country, a.location.city, a.location.latitude, a.location.precision], ['CH', '', null, 'country']);
  });

  it('should say region or country when the source entry has no city', () => {
    const honest = new HonestLocations();
    const bv = lookup(honest, '92.0.0.1').location;
    assert.deepEqual([bv.country, bv.latitude, bv.precision, bv.accuracy_radius_km], ['BV', null, 'country', null]);
    const sg = lookup(honest, '93.0.0.1').location;
    assert.deepEqual(
      [sg.country, sg.state, sg.city, sg.latitude, sg.precision, sg.accuracy_radius_km],
      ['SG', 'Central', '', 1.29, 'region', null],
    );
  });

  it('should answer 6to4, Teredo and NAT64 addresses for the IPv4 address they carry, and say which', () => {
    const honest = new HonestLocations();
    const v4 = lookup(honest, '91.64.0.1');
    for (const [ip, via] of [
      ['2002:5b40:1::1', '6to4'],
      ['2001:0:4136:e378:8000:63bf:a4bf:fffe', 'teredo'],
      ['64:ff9b::91.64.0.1', 'nat64'],
    ] as const) {
      const a = lookup(honest, ip);
      assert.deepEqual(a.embedded, { ip: '91.64.0.1', via }, ip);
      assert.equal(a.network, v4.network, ip);
      assert.equal(a.location, v4.location, ip);
    }
    // 6to4 of a private address: a bogon, as the address it carries is.
    const p = lookup(honest, '2002:c0a8:101::1');
    assert.deepEqual([p.embedded?.ip, p.network.bogon, p.location.precision], ['192.168.1.1', true, 'none']);
  });
});
