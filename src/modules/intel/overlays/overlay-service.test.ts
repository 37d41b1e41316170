import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalCidr, normaliseTag } from './overlay-service.ts';

describe('canonicalCidr', () => {
  it('should clear host bits, write IPv6 per RFC 5952 and make bare addresses host routes', () => {
    assert.equal(canonicalCidr('192.0.2.77/24'), '192.0.2.0/24');
    assert.equal(canonicalCidr('192.0.2.77'), '192.0.2.77/32');
    assert.equal(canonicalCidr('2001:DB8:0:0::1/32'), '2001:db8::/32');
    assert.equal(canonicalCidr('2001:db8::1'), '2001:db8::1/128');
    assert.equal(canonicalCidr('::ffff:192.0.2.1'), '192.0.2.1/32');
  });

  it('should refuse what is not an address or CIDR', () => {
    for (const bad of ['', 'nope', '192.0.2.0/33', '192.0.2/24', '2001:db8::/129', '../etc/passwd'])
      assert.equal(canonicalCidr(bad), undefined, bad);
  });
});

describe('normaliseTag', () => {
  it('should read categories the way import-list reads kinds', () => {
    assert.equal(normaliseTag('tor-node'), 'TOR_NODE');
    assert.equal(normaliseTag(' Search_Engine '), 'SEARCH_ENGINE');
  });
});
