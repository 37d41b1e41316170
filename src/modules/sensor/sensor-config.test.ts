import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { backoffDelayMs } from './backoff.ts';
import { DecoyDomains } from './decoy-domains.ts';
import { listenerName, parseSensorConfig, SensorConfigError } from './sensor-config.ts';

const SAMPLE = join(import.meta.dirname, '../../../deploy/sensor.sample.yaml');

describe('sensor config', () => {
  it('should read the sample config as exactly the defaults (the sample lists every option with its default)', () => {
    const sample = parseSensorConfig(parse(readFileSync(SAMPLE, 'utf8')));
    const minimal = parseSensorConfig({
      identity: { proxy_ip: '203.0.113.10' },
      domains: ['example.com'],
      listeners: [{ protocol: 'http', port: 8080, public_port: 80 }],
    });
    assert.deepEqual(sample, minimal);
  });

  it('should name each problem by its path: unknown members, bad addresses, unknown listener kinds, DNS ports, duplicate names', () => {
    const problems = (v: unknown) => {
      try {
        parseSensorConfig(v);
      } catch (e) {
        assert.ok(e instanceof SensorConfigError);
        return e.problems;
      }
      assert.fail('accepted');
    };
    const base = { identity: { proxy_ip: '203.0.113.10' }, domains: ['example.com'], listeners: [{ protocol: 'http', port: 80 }] };
    assert.deepEqual(problems({ ...base, spool: { max_byte: 5 } }), ['spool: Unrecognized key: "max_byte"']);
    assert.match(problems({ ...base, identity: { proxy_ip: 'not-an-ip' } }).join(), /^identity\.proxy_ip: must be an IPv4 or IPv6 address/);
    assert.match(problems({ ...base, domains: ['../etc'] }).join(), /^domains\.0: /);
    assert.match(
      problems({ ...base, listeners: [{ protocol: 'smtp', port: 25 }] }).join(),
      /listeners\.0\.protocol: .*'http' \| 'tls' \| 'dns' \| 'adb'/,
    );
    assert.match(
      problems({ ...base, listeners: [{ protocol: 'dns', port: 5300 }] }).join(),
      /listeners\.0\.public_port: a DNS listener needs public_port 53, 853 or 5353/,
    );
    assert.match(
      problems({
        ...base,
        listeners: [
          { protocol: 'http', port: 80 },
          { protocol: 'http', port: 8080, public_port: 80 },
        ],
      }).join(),
      /listeners\.1\.name: 'http-80' is used by another listener/,
    );
    assert.match(problems({ ...base, listeners: [{ protocol: 'http', port: 80, max_head_bytes: 10_000_000 }] }).join(), /max_head_bytes/);
    // DNS over TLS is named apart from plain DNS, so both can serve 853 (behind different bound ports).
    const both = parseSensorConfig({
      ...base,
      listeners: [
        { protocol: 'dns', port: 8530, public_port: 853 },
        { protocol: 'dns', tls: true, port: 8531, public_port: 853 },
      ],
    }).listeners;
    assert.deepEqual(
      both.map((l) => [listenerName(l), l.protocol === 'dns' && l.tls]),
      [
        ['dns-853', false],
        ['dot-853', true],
      ],
    );
  });

  it('should split limits.max_buffered_bytes into fixed listener shares, and refuse shares that do not fit', () => {
    const MiB = 1_048_576;
    const base = { identity: { proxy_ip: '203.0.113.10' }, domains: ['example.com'] };
    const shares = (v: Record<string, unknown>) => parseSensorConfig({ ...base, ...v }).listeners.map((l) => l.max_buffered_bytes);
    const four = [
      { protocol: 'http', port: 80 },
      { protocol: 'tls', port: 443 },
      { protocol: 'dns', port: 53 },
      { protocol: 'adb', port: 5555 },
    ];
    assert.deepEqual(shares({ listeners: four }), [16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB], 'the 64 MiB default, in 4');
    assert.deepEqual(
      shares({ listeners: [{ ...four[0], max_buffered_bytes: 40 * MiB }, ...four.slice(1)], limits: { max_buffered_bytes: 64 * MiB } }),
      [40 * MiB, 8 * MiB, 8 * MiB, 8 * MiB],
      'what a set share leaves, in equal parts',
    );
    assert.throws(
      () => shares({ listeners: [{ ...four[0], max_buffered_bytes: 80 * MiB }] }),
      /limits\.max_buffered_bytes: 67108864 is less than the listeners' max_buffered_bytes together/,
    );
    assert.throws(
      () => shares({ listeners: four, limits: { max_buffered_bytes: 8 * MiB } }),
      /leaves 2097152 bytes to each listener without max_buffered_bytes; each needs at least 4194304/,
    );
    assert.throws(() => shares({ listeners: [{ ...four[0], max_buffered_bytes: 1000 }] }), /max_buffered_bytes/);
  });
});

describe('the backoff recipe', () => {
  it('should start at 1 s, double per failure, stop at 60 s, and scatter each delay by 25 % either way', () => {
    const low = () => 0;
    const high = () => 0.999_999;
    const mid = () => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 30].map((f) => backoffDelayMs(f, mid)),
      [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000],
    );
    assert.equal(backoffDelayMs(1, low), 750);
    assert.equal(backoffDelayMs(1, high), 1250);
    assert.equal(backoffDelayMs(7, low), 45_000);
    assert.equal(backoffDelayMs(7, high), 75_000);
  });
});

describe('decoy domains', () => {
  it('should file a name under the decoy domain it falls under, and anything else under the first', () => {
    const d = new DecoyDomains(['first.example', 'shop.example.net']);
    assert.equal(d.domainOf('SHOP.example.net'), 'shop.example.net');
    assert.equal(d.domainOf('admin.shop.example.net:8443'), 'shop.example.net');
    assert.equal(d.domainOf('www.first.example.'), 'first.example');
    assert.equal(d.domainOf('attacker-made.example.org'), 'first.example');
    assert.equal(d.domainOf('203.0.113.7:80'), 'first.example');
    assert.equal(d.domainOf('[2001:db8::1]:80'), 'first.example');
    assert.equal(d.domainOf('example.net'), 'first.example', 'a parent of a decoy is not the decoy');
    assert.equal(d.domainOf(undefined), 'first.example');
    assert.equal(d.domainOf('../../etc/passwd'), 'first.example');
  });
});
