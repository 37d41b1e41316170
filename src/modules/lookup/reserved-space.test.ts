import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp } from '../../lib/ip-address.ts';
import { RESERVED_V4, RESERVED_V6, reservedBlock } from './reserved-space.ts';

const block = (text: string) => reservedBlock(parseIp(text)!)?.cidr;

describe('reservedBlock', () => {
  it('should find every IANA special-purpose IPv4 block that is not globally reachable, at both ends', () => {
    const cases: Array<[string, string]> = [
      ['0.0.0.0', '0.0.0.0/8'],
      ['0.255.255.255', '0.0.0.0/8'],
      ['10.0.0.0', '10.0.0.0/8'],
      ['10.255.255.255', '10.0.0.0/8'],
      ['100.64.0.0', '100.64.0.0/10'],
      ['100.127.255.255', '100.64.0.0/10'],
      ['127.0.0.1', '127.0.0.0/8'],
      ['169.254.169.254', '169.254.0.0/16'],
      ['172.16.0.0', '172.16.0.0/12'],
      ['172.31.255.255', '172.16.0.0/12'],
      ['192.0.0.8', '192.0.0.0/24'],
      ['192.0.2.1', '192.0.2.0/24'],
      ['192.168.1.1', '192.168.0.0/16'],
      ['198.18.0.1', '198.18.0.0/15'],
      ['198.19.255.255', '198.18.0.0/15'],
      ['198.51.100.7', '198.51.100.0/24'],
      ['203.0.113.200', '203.0.113.0/24'],
      ['224.0.0.251', '224.0.0.0/4'],
      ['239.255.255.250', '224.0.0.0/4'],
      ['240.0.0.1', '240.0.0.0/4'],
      ['255.255.255.254', '240.0.0.0/4'],
      ['255.255.255.255', '255.255.255.255/32'],
    ];
    for (const [ip, cidr] of cases) assert.equal(block(ip), cidr, ip);
  });

  it('should leave public IPv4 space alone, right next to the reserved blocks too', () => {
    for (const ip of [
      '1.1.1.1',
      '8.8.8.8',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.255',
      '192.0.3.0',
      '192.88.99.1', // the deprecated 6to4 relay anycast: globally reachable per the registry
      '192.31.196.1', // AS112: globally reachable
      '192.167.255.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
    ]) {
      assert.equal(block(ip), undefined, ip);
    }
  });

  it('should find the reserved IPv6 blocks and everything outside global unicast 2000::/3', () => {
    const cases: Array<[string, string]> = [
      ['::', '::/128'],
      ['::1', '::1/128'],
      ['::1.2.3.4', '::/96'],
      ['64:ff9b:1::1', '64:ff9b:1::/48'],
      ['100::1', '100::/64'],
      ['2001:2::1', '2001:2::/48'],
      ['2001:1f::1', '2001:10::/28'],
      ['2001:db8::1', '2001:db8::/32'],
      ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db8::/32'],
      ['3fff::1', '3fff::/20'],
      ['3fff:fff::1', '3fff::/20'],
      ['5f00::1', '5f00::/16'],
      ['fc00::1', 'fc00::/7'],
      ['fd12:3456::1', 'fc00::/7'],
      ['fe80::1', 'fe80::/10'],
      ['febf::1', 'fe80::/10'],
      ['ff02::1', 'ff00::/8'],
      ['1::1', '::/0 outside 2000::/3'],
      ['4000::1', '::/0 outside 2000::/3'],
      ['1fff:ffff::1', '::/0 outside 2000::/3'],
      ['e000::1', '::/0 outside 2000::/3'],
    ];
    for (const [ip, cidr] of cases) assert.equal(block(ip), cidr, ip);
  });

  it('should leave global unicast IPv6 alone outside the listed blocks', () => {
    for (const ip of [
      '2000::1',
      '2001:4860:4860::8888',
      '2001:1::1', // port control protocol anycast: globally reachable
      '2001:3::1', // AMT: globally reachable
      '2001:4:112::1', // AS112-v6: globally reachable
      '2001:20::1', // ORCHIDv2: globally reachable
      '2001:db7:ffff::1',
      '2001:db9::1',
      '2a01:4f8::1',
      '3ffe::1',
      '3fff:1000::1',
      '3fff:ffff::1',
    ]) {
      assert.equal(block(ip), undefined, ip);
    }
  });

  it('should cite a reference for every block', () => {
    for (const b of [...RESERVED_V4, ...RESERVED_V6]) assert.match(b.rfc, /^RFC \d+/, b.cidr);
  });
});
