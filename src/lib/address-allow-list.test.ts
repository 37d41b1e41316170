import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AddressAllowList, LOOPBACK_ONLY, parseAllowList } from './address-allow-list.ts';

const list = (text: string) => parseAllowList(text) as AddressAllowList;

describe('parseAllowList', () => {
  it('should allow the machine itself by default, as a dual-stack socket reports it too', () => {
    const l = list(LOOPBACK_ONLY);
    for (const a of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) assert.equal(l.allows(a), true, a);
    for (const a of ['10.0.0.1', '::2', '::ffff:10.0.0.1', '', undefined, 'localhost']) assert.equal(l.allows(a), false, String(a));
  });

  it('should match CIDRs of both families at their edges, and any', () => {
    const l = list(' 10.0.0.0/8 , 2001:db8::/32,192.0.2.7 ');
    assert.deepEqual(
      ['9.255.255.255', '10.0.0.0', '10.255.255.255', '11.0.0.0', '192.0.2.7', '192.0.2.8', '2001:db8:ffff::1', '2001:db9::'].map((a) =>
        l.allows(a),
      ),
      [false, true, true, false, true, false, true, false],
    );
    assert.equal(list('ANY').allows('203.0.113.9'), true);
  });

  it('should refuse what is not an address or CIDR, naming it', () => {
    for (const bad of ['', 'localhost', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8x', '::/129', '10.0.0.0/8,,::1'])
      assert.match(parseAllowList(bad) as string, /is not an address or CIDR; give 'any' or a comma list/, bad);
  });
});
