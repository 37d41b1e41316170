import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ensureRealDataset } from '../../../test/helpers/test-dataset.ts';
import { systemClock } from '../../lib/clock.ts';
import { parseIp } from '../../lib/ip-address.ts';
import type { CreditLedger } from '../credits/credit-ledger.ts';
import { loadDataset } from '../dataset/dataset-reader.ts';
import { emptyIntelligence } from './intelligence.ts';
import { LookupData } from './lookup-data.ts';
import { LookupService } from './lookup-service.ts';

describe('locations on the real IP dataset', () => {
  it('should claim no more precision than the data has', async () => {
    const ds = loadDataset(await ensureRealDataset());
    const lookup = new LookupService(new LookupData(ds), emptyIntelligence, {} as CreditLedger, systemClock);
    const at = (text: string) => lookup.resolve(parseIp(text)!);

    const hetzner = at('2a01:4f8::1');
    assert.deepEqual([hetzner.network.bogon, hetzner.network.anycast], [false, false]);
    assert.deepEqual([hetzner.location.country, hetzner.location.precision, hetzner.location.accuracy_radius_km], ['DE', 'city', 50]);
    assert.notEqual(hetzner.location.city, '');

    // Anycast: Google Public DNS by prefix, Cloudflare by AS.
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) {
      const r = at(ip);
      assert.equal(r.network.anycast, true, ip);
      assert.deepEqual([r.location.city, r.location.latitude, r.location.precision], ['', null, 'country'], ip);
    }
    assert.equal(at('8.8.8.8').location.country, 'US');

    // The geo source's placeholder: a LACNIC member's /32 that DB-IP puts in Murten/Morat, Switzerland.
    const lacnic = at('2803:930::1');
    assert.ok(lacnic.network.asn > 0);
    assert.deepEqual([lacnic.location.country, lacnic.location.city, lacnic.location.precision], ['CH', '', 'country']);

    // Unrouted space that the geo source places in Murten/Morat, and reserved space.
    for (const ip of ['2000::1', '2001:1234::1', '10.1.2.3', '240.1.2.3', 'fe80::1']) {
      const r = at(ip);
      assert.deepEqual([r.network.asn, r.network.bogon, r.location.city, r.location.precision], [0, true, '', 'none'], ip);
    }

    // 6to4 and Teredo: Hurricane Electric's relay space before, the carried address's network now.
    const sixToFour = at('2002:808:808::1');
    assert.deepEqual(sixToFour.embedded_ipv4, { ip: '8.8.8.8', via: '6to4' });
    assert.equal(sixToFour.network.asn, 15169);
    const teredo = at('2001:0:4136:e378:8000:63bf:a4bf:fffe');
    assert.deepEqual(teredo.embedded_ipv4, { ip: '91.64.0.1', via: 'teredo' });
    assert.ok(teredo.network.asn > 0);
    assert.equal(teredo.network.asn, at('91.64.0.1').network.asn);
    assert.equal(teredo.location, at('91.64.0.1').location);
  });
});
