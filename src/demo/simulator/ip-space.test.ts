import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIp } from '../../lib/ip-address.ts';
import { PREFIXES } from './address-space.ts';
import { addressIn, contains, ipToBigInt, parseCidr, rangeIn } from './ip-space.ts';
import { mulberry32 } from './random.ts';

describe('addressIn', () => {
  it('should draw canonical addresses inside every built-in prefix', () => {
    const rng = mulberry32(1);
    for (const p of PREFIXES) {
      for (let i = 0; i < 20; i++) {
        const ip = addressIn(rng, p.cidr);
        assert.equal(parseIp(ip)?.text, ip, `${ip} is canonical`);
        assert.ok(contains(p.cidr, ip), `${ip} in ${p.cidr}`);
      }
    }
  });

  it('should reject malformed CIDRs', () => {
    assert.throws(() => parseCidr('10.0.0.0/33'));
    assert.throws(() => parseCidr('nope/8'));
  });
});

describe('rangeIn', () => {
  it('should return an aligned block of the asked size inside the parent', () => {
    const rng = mulberry32(2);
    for (const [cidr, len] of [
      ['146.70.0.0/16', 29],
      ['146.70.0.0/16', 32],
      ['2a01:4f8::/32', 56],
      ['2a01:4f8::/32', 64],
    ] as const) {
      for (let i = 0; i < 50; i++) {
        const { start, end } = rangeIn(rng, cidr, len);
        const width = cidr.includes(':') ? 128 : 32;
        const size = 1n << BigInt(width - len);
        assert.equal(ipToBigInt(end) - ipToBigInt(start) + 1n, size);
        assert.equal(ipToBigInt(start) % size, 0n);
        assert.ok(contains(cidr, start) && contains(cidr, end));
      }
    }
  });
});
