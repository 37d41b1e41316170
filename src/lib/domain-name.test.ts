import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeDomain } from './domain-name.ts';

describe('normalizeDomain', () => {
  it('should normalise to lower-case Punycode', () => {
    const ok = (s: string) => {
      const r = normalizeDomain(s);
      assert.ok(r.ok, `${s}: ${!r.ok && r.message}`);
      return r.domain;
    };
    assert.equal(ok('Example.COM'), 'example.com');
    assert.equal(ok('example.com.'), 'example.com');
    assert.equal(ok('bücher.example'), 'xn--bcher-kva.example');
    assert.equal(ok('XN--BCHER-KVA.example'), 'xn--bcher-kva.example');
    assert.equal(ok('a-b.c-d.example.org'), 'a-b.c-d.example.org');
  });

  it('should refuse path tricks, IP literals and malformed names', () => {
    for (const bad of [
      '../etc/passwd',
      'a/b.com',
      'a\\b.com',
      '..',
      'a..b.com',
      'example',
      '-a.com',
      'a-.com',
      '1.2.3.4',
      'a b.com',
      'a%2fb.com',
      `${'x'.repeat(64)}.com`,
      `${'a.'.repeat(130)}com`,
      '',
      'example.123',
      'user@example.com',
      'example.com:80',
    ]) {
      assert.equal(normalizeDomain(bad).ok, false, bad);
    }
  });
});
