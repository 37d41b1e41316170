import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp } from '../../lib/ip-address.ts';
import { ANYCAST_PREFIXES, isAnycast } from './anycast.ts';

const anycast = (text: string, asn = 64500) => isAnycast(parseIp(text)!, asn);

describe('isAnycast', () => {
  it('should flag the public resolvers and the root servers by prefix, whatever network holds them', () => {
    for (const ip of [
      '8.8.8.8',
      '8.8.4.4',
      '1.1.1.1',
      '1.0.0.1',
      '9.9.9.9',
      '149.112.112.112',
      '208.67.222.222',
      '208.67.220.220',
      '198.41.0.4',
      '202.12.27.33',
      '2001:4860:4860::8888',
      '2606:4700:4700::1111',
      '2620:fe::fe',
      '2001:503:ba3e::2:30',
      '2001:7fe::53',
      '2001:dc3::35',
    ]) {
      assert.equal(anycast(ip), true, ip);
    }
  });

  it('should not flag the neighbours of a listed prefix', () => {
    for (const ip of [
      '8.8.9.8',
      '8.8.7.255',
      '1.1.2.1',
      '9.9.10.9',
      '2001:4860:4861::8888',
      '2001:4860::1',
      '2620:fe:1::1',
      '2001:7fe:1::53',
      '198.41.1.4',
    ]) {
      assert.equal(anycast(ip), false, ip);
    }
  });

  it('should flag every address of a network served entirely by anycast, and no other network', () => {
    assert.equal(anycast('104.16.132.229', 13335), true);
    assert.equal(anycast('151.101.1.69', 54113), true);
    assert.equal(anycast('2a04:4e42::81', 54113), true);
    assert.equal(anycast('104.16.132.229', 15169), false);
    assert.equal(anycast('91.64.0.1', 3209), false);
  });

  it('should list every prefix as a valid network address', () => {
    for (const { cidr } of ANYCAST_PREFIXES) {
      const [text, len] = cidr.split('/') as [string, string];
      assert.ok(parseIp(text), cidr);
      assert.ok(Number(len) >= (text.includes(':') ? 29 : 8) && Number(len) <= (text.includes(':') ? 48 : 24), cidr);
      assert.equal(anycast(text), true, cidr);
    }
  });
});
