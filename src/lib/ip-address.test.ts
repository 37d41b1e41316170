import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from './prng.ts';
import { carriedIpv4, formatV4, formatV6, parseIp } from './ip-address.ts';

describe('parseIp', () => {
  it('should parse IPv4 into a 32-bit value and canonical text', () => {
    const ip = parseIp('8.8.8.8');
    assert.equal(ip?.version, 4);
    assert.equal(ip?.version === 4 && ip.v4, 0x08080808);
    assert.equal(ip?.text, '8.8.8.8');
    assert.equal(parseIp('255.255.255.255')?.text, '255.255.255.255');
    assert.equal(parseIp('0.0.0.0')?.text, '0.0.0.0');
  });

  it('should reject malformed IPv4', () => {
    for (const bad of [
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '1.2.3.',
      '.1.2.3',
      '1..2.3',
      'a.b.c.d',
      '1.2.3.4 ',
      ' 1.2.3.4',
      '',
      '1.2.3.-1',
    ]) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('should canonicalise IPv6 per RFC 5952', () => {
    const cases: Array<[string, string]> = [
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
      ['::1', '::1'],
      ['::', '::'],
      ['1::', '1::'],
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
      ['2001:4860:4860::8888', '2001:4860:4860::8888'],
      ['fe80::1:2', 'fe80::1:2'],
      ['::1.2.3.4', '::102:304'],
      ['64:ff9b::1.2.3.4', '64:ff9b::102:304'],
    ];
    for (const [input, text] of cases) assert.equal(parseIp(input)?.text, text, input);
  });

  it('should look up IPv4-mapped IPv6 as the IPv4 address', () => {
    const ip = parseIp('::ffff:1.2.3.4');
    assert.equal(ip?.version, 4);
    assert.equal(ip?.text, '1.2.3.4');
    assert.equal(parseIp('::FFFF:0102:0304')?.text, '1.2.3.4');
  });

  it('should reject malformed IPv6, zone ids and more than one ::', () => {
    for (const bad of [
      'fe80::1%eth0',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      ':1::2',
      '1:2:3:4:5:6:7',
      '12345::',
      'g::1',
      '1:2:3:4:5:6:7:8::',
      '::1.2.3',
      '1:',
      ':::',
      '1:2:3:4:5:6:7:1.2.3.4',
    ]) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('should format every IPv6 address as the plain RFC 5952 rules say (random words, zero runs of every length)', () => {
    // The rules written the obvious way, to check the byte-writing formatter against.
    const reference = (w: Uint32Array): string => {
      const g = Array.from({ length: 8 }, (_, k) => (k & 1 ? w[k >> 1]! & 0xffff : w[k >> 1]! >>> 16));
      let start = -1;
      let len = 0;
      for (let k = 0; k < 8; ) {
        if (g[k] !== 0) {
          k++;
          continue;
        }
        let e = k;
        while (e < 8 && g[e] === 0) e++;
        if (e - k > len) [start, len] = [k, e - k];
        k = e;
      }
      const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
      return len < 2 ? hex(g) : `${hex(g.slice(0, start))}::${hex(g.slice(start + len))}`;
    };
    const random = mulberry32(5952);
    for (let i = 0; i < 200_000; i++) {
      const w = new Uint32Array(4);
      for (let k = 0; k < 8; k++) {
        const x = random() < 0.5 ? 0 : random() < 0.3 ? 1 + Math.floor(random() * 15) : Math.floor(random() * 65536);
        w[k >> 1] = k & 1 ? (w[k >> 1]! | x) >>> 0 : (x << 16) >>> 0;
      }
      const want = reference(w);
      if (formatV6(w) !== want) assert.equal(formatV6(w), want);
      // Canonical text parses back to itself (IPv4-mapped addresses become IPv4 text instead).
      const mapped = w[0] === 0 && w[1] === 0 && w[2] === 0xffff;
      if (mapped) continue;
      if (parseIp(want)?.text !== want) assert.equal(parseIp(want)?.text, want);
      // Every other way of writing the address gives the canonical text too (parseIp keeps the input
      // as the text only when it is written canonically): every group written, with leading zeros,
      // upper-case, '::' at every other zero run, a dotted tail.
      const g = Array.from({ length: 8 }, (_, k) => (k & 1 ? w[k >> 1]! & 0xffff : w[k >> 1]! >>> 16));
      const variants = [
        g.map((x) => x.toString(16)).join(':'),
        g.map((x) => x.toString(16).padStart(4, '0')).join(':'),
        want.toUpperCase(),
        `${g
          .slice(0, 6)
          .map((x) => x.toString(16))
          .join(':')}:${g[6]! >>> 8}.${g[6]! & 255}.${g[7]! >>> 8}.${g[7]! & 255}`,
      ];
      for (let k = 0; k < 8; k++) {
        if (g[k] !== 0) continue;
        for (let e = k + 1; e <= 8 && g[e - 1] === 0; e++) {
          const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
          variants.push(`${hex(g.slice(0, k))}::${hex(g.slice(e))}`);
        }
      }
      for (const v of variants) if (parseIp(v)?.text !== want) assert.equal(parseIp(v)?.text, want, `${v} written otherwise`);
    }
  });
});

describe('carriedIpv4', () => {
  const carried = (text: string) => {
    const c = carriedIpv4(parseIp(text)!);
    return c && `${c.via} ${formatV4(c.v4)}`;
  };

  it('should find the IPv4 address of a 6to4 address in bits 16..47', () => {
    assert.equal(carried('2002:c000:0204::1'), '6to4 192.0.2.4');
    assert.equal(carried('2002:808:808:1234:5678::9'), '6to4 8.8.8.8');
    assert.equal(carried('2002:ffff:ffff::'), '6to4 255.255.255.255');
  });

  it("should find a Teredo client's public IPv4 address in the last 32 bits, inverted", () => {
    // RFC 4380 section 4's example: server 65.54.227.120, client 192.0.2.45 behind a cone NAT, port 40000.
    assert.equal(carried('2001:0000:4136:e378:8000:63bf:3fff:fdd2'), 'teredo 192.0.2.45');
    assert.equal(carried('2001::ffff:ffff'), 'teredo 0.0.0.0');
  });

  it('should find the IPv4 address of the NAT64 well-known prefix 64:ff9b::/96', () => {
    assert.equal(carried('64:ff9b::192.0.2.33'), 'nat64 192.0.2.33');
    assert.equal(carried('64:ff9b::c000:221'), 'nat64 192.0.2.33');
  });

  it('should find none in other addresses', () => {
    for (const text of [
      '8.8.8.8',
      '::ffff:8.8.8.8',
      '2001:db8::1',
      '2001:1::1',
      '2003::1',
      '64:ff9b:1::c000:221',
      '::1.2.3.4',
      '2001:4860:4860::8888',
    ]) {
      assert.equal(carried(text), undefined, text);
    }
  });
});
