import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp } from '../../../lib/ip-address.ts';
import { cidrBounds, RangeSets, type RangeEntry } from './range-sets.ts';

const ip = (s: string) => parseIp(s)!;
const v4 = (cidr: string, value: string): RangeEntry<string> => ({
  ...(cidrBounds(cidr, parseIp) as { version: 4; start: number; end: number }),
  value,
});
const v6 = (cidr: string, value: string): RangeEntry<string> => ({
  ...(cidrBounds(cidr, parseIp) as { version: 6; start: bigint; end: bigint }),
  value,
});

describe(RangeSets.name, () => {
  it('should keep every match where ranges overlap, and nothing outside them', () => {
    const t = RangeSets.build([v4('10.0.0.0/8', 'vpn'), v4('10.1.2.0/24', 'tor'), v4('10.1.2.128/25', 'relay'), v4('11.0.0.0/8', 'other')]);
    assert.deepEqual(t.find(ip('10.0.0.1')), ['vpn']);
    assert.deepEqual(t.find(ip('10.1.2.1')), ['vpn', 'tor']);
    assert.deepEqual(t.find(ip('10.1.2.200')), ['vpn', 'tor', 'relay']);
    assert.deepEqual(t.find(ip('10.1.3.0')), ['vpn']);
    assert.deepEqual(t.find(ip('11.255.255.255')), ['other']);
    assert.equal(t.find(ip('9.255.255.255')), undefined);
    assert.equal(t.find(ip('12.0.0.0')), undefined);
  });

  it('should share one array between segments covered by the same ranges', () => {
    const t = RangeSets.build([v4('10.0.0.0/8', 'a'), v4('10.1.0.0/16', 'b')]);
    assert.equal(t.find(ip('10.0.0.1')), t.find(ip('10.200.0.1')));
  });

  it('should handle the ends of the address space and single addresses', () => {
    const t = RangeSets.build([
      v4('0.0.0.0/32', 'first'),
      v4('255.255.255.255/32', 'last'),
      v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', 'last6'),
      v6('::/128', 'zero6'),
    ]);
    assert.deepEqual(t.find(ip('0.0.0.0')), ['first']);
    assert.equal(t.find(ip('0.0.0.1')), undefined);
    assert.deepEqual(t.find(ip('255.255.255.255')), ['last']);
    assert.deepEqual(t.find(ip('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')), ['last6']);
    assert.deepEqual(t.find(ip('::')), ['zero6']);
    assert.equal(t.find(ip('::1')), undefined);
  });

  it('should look up IPv6 ranges by all four words', () => {
    const t = RangeSets.build([v6('2001:db8::/32', 'doc'), v6('2001:db8:0:1::/64', 'net')]);
    assert.deepEqual(t.find(ip('2001:db8::1')), ['doc']);
    assert.deepEqual(t.find(ip('2001:db8:0:1:ffff::1')), ['doc', 'net']);
    assert.deepEqual(t.find(ip('2001:db8:0:2::')), ['doc']);
    assert.equal(t.find(ip('2001:db9::')), undefined);
    assert.equal(t.find(ip('10.0.0.1')), undefined);
  });

  it('should find nothing in an empty table', () => {
    assert.equal(RangeSets.empty<string>().find(ip('1.2.3.4')), undefined);
    assert.equal(RangeSets.empty<string>().find(ip('::1')), undefined);
  });
});

describe('cidrBounds', () => {
  it('should give inclusive bounds, masking host bits, and refuse malformed input', () => {
    assert.deepEqual(cidrBounds('66.249.66.0/27', parseIp), {
      version: 4,
      start: 66 * 2 ** 24 + (249 << 16) + (66 << 8),
      end: 66 * 2 ** 24 + (249 << 16) + (66 << 8) + 31,
    });
    assert.deepEqual(cidrBounds('10.0.0.7/24', parseIp), { version: 4, start: 0x0a000000, end: 0x0a0000ff });
    assert.deepEqual(cidrBounds('1.2.3.4', parseIp), { version: 4, start: 0x01020304, end: 0x01020304 });
    assert.deepEqual(cidrBounds('::/0', parseIp), { version: 6, start: 0n, end: (1n << 128n) - 1n });
    assert.equal(cidrBounds('1.2.3.4/33', parseIp), undefined);
    assert.equal(cidrBounds('nope/8', parseIp), undefined);
  });
});
