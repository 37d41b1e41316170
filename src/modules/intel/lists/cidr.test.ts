import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalCidrs, parseCidr, type Cidr } from './cidr.ts';

const ok = (s: string): Cidr => {
  const r = parseCidr(s);
  assert.ok(r.ok, `${s}: ${r.ok ? '' : r.reason}`);
  return r.cidr;
};

describe('parseCidr', () => {
  it('should give canonical text and first and last address', () => {
    const c = ok('66.249.79.64/27');
    assert.equal(c.text, '66.249.79.64/27');
    assert.deepEqual([...c.start], [0, 0, 0, 0x42f94f40]);
    assert.deepEqual([...c.end], [0, 0, 0, 0x42f94f5f]);
    assert.equal(ok('8.8.8.8').text, '8.8.8.8/32');
    assert.equal(ok('0.0.0.0/0').text, '0.0.0.0/0');
    assert.deepEqual([...ok('0.0.0.0/0').end], [0, 0, 0, 0xffffffff]);
    assert.equal(ok('2001:4860:4801:0010:0000::/64').text, '2001:4860:4801:10::/64');
    assert.equal(ok('2001:DB8::1').text, '2001:db8::1/128');
    const v6 = ok('2a03:2880:1000::/36');
    assert.deepEqual([...v6.end], [0x2a032880, 0x1fffffff, 0xffffffff, 0xffffffff]);
  });

  it('should clear host bits and say so', () => {
    const r = parseCidr('192.0.2.77/24');
    assert.ok(r.ok && r.normalised);
    assert.equal(r.cidr.text, '192.0.2.0/24');
    const r6 = parseCidr('2001:db8::100/120');
    assert.ok(r6.ok && !r6.normalised);
    const r6b = parseCidr('2001:db8::1ff/120');
    assert.ok(r6b.ok && r6b.normalised);
    assert.equal(r6b.cidr.text, '2001:db8::100/120');
  });

  it('should read IPv4-mapped IPv6 networks as IPv4', () => {
    assert.equal(ok('::ffff:192.0.2.0/120').text, '192.0.2.0/24');
    assert.equal(parseCidr('::ffff:192.0.2.0/90').ok, false);
  });

  it('should reject what is not one network', () => {
    for (const bad of [
      '',
      '1.2.3',
      '1.2.3.4/33',
      '1.2.3.4/',
      '1.2.3.4/-1',
      '1.2.3.4/2 4',
      '01.2.3.4/8',
      'fe80::1%eth0',
      '2001:db8::/129',
      'example.com',
      '1.2.3.4/8/8',
      '1.2.3.4-1.2.3.9',
    ]) {
      assert.equal(parseCidr(bad).ok, false, bad);
    }
  });
});

describe('canonicalCidrs', () => {
  it('should sort IPv4 before IPv6 by address then prefix length, and drop exact duplicates', () => {
    const out = canonicalCidrs(['2001:db8::/32', '10.0.0.0/16', '9.0.0.0/8', '10.0.0.0/8', '10.0.0.0/16', '10.0.0.1'].map(ok)).map(
      (c) => c.text,
    );
    assert.deepEqual(out, ['9.0.0.0/8', '10.0.0.0/8', '10.0.0.0/16', '10.0.0.1/32', '2001:db8::/32']);
  });
});
