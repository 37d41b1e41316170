import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseIp } from '../../../lib/ip-address.ts';
import type { IntelList } from './intel-list.ts';
import { parseList } from './list-formats.ts';
import { networkTypeOverride } from './network-type-override.ts';

const FIXTURES = join(import.meta.dirname, '../../../../test/fixtures/lists');
const list = (kind: string, provider: string, cidrs: string[]): IntelList => ({
  kind,
  provider,
  cidrs,
  version: '0',
  imported_at: 0,
  published_at: 0,
  published_from: 'import',
  format: 'cidr-lines',
});
const fromFixture = (kind: string, provider: string, file: string) =>
  list(
    kind,
    provider,
    parseList(readFileSync(join(FIXTURES, file))).cidrs.map((c) => c.text),
  );

// A cloud's own range file is of its own network: the publisher's ASN comes with the type.
const AWS = {
  type: 'DATACENTER',
  provider: 'AWS',
  published_at: 0,
  stale: false,
  owner: { asn: 16509, org: 'Amazon.com, Inc.', domain: 'amazon.com' },
};
const GOOGLE_CLOUD = {
  type: 'DATACENTER',
  provider: 'GOOGLE_CLOUD',
  published_at: 0,
  stale: false,
  owner: { asn: 396982, org: 'Google LLC', domain: 'google.com' },
};

const MOBILE = { type: 'MOBILE', provider: 'TEST_CARRIER', published_at: 0, stale: false };

describe(networkTypeOverride.name, () => {
  const table = networkTypeOverride(
    [
      fromFixture('DATACENTER', 'AWS', 'aws-ip-ranges.json'),
      fromFixture('DATACENTER', 'GOOGLE_CLOUD', 'gcp-cloud.json'),
      // Category lists flag addresses; they never change network.type.
      fromFixture('SEARCH_ENGINE', 'GOOGLEBOT', 'googlebot.json'),
      list('MOBILE', 'TEST_CARRIER', ['34.35.16.0/20', '34.35.16.128/25', '2406:daba:f000:10::/64']),
      list('SATELLITE', 'TEST_SAT', ['34.35.16.128/25', 'garbage']),
    ],
    0,
  );
  const at = (a: string) => table.find(parseIp(a)!);

  it('should give the type and provider of the list that holds the address', () => {
    assert.deepEqual(at('3.5.140.1'), AWS);
    assert.deepEqual(at('3.5.143.255'), AWS, 'last address of 3.5.140.0/22');
    assert.equal(at('3.5.144.0'), undefined, 'first address after it');
    assert.equal(at('3.5.139.255'), undefined);
    assert.deepEqual(at('3.4.12.4'), AWS, 'a /32');
    assert.equal(at('3.4.12.5'), undefined);
    assert.deepEqual(at('8.34.213.7'), GOOGLE_CLOUD);
    assert.deepEqual(at('2406:daba:f000::1'), AWS);
    assert.deepEqual(at('2600:1900:800f:ffff::1'), GOOGLE_CLOUD);
    assert.equal(at('66.249.79.70'), undefined, 'Googlebot is a category list');
    assert.equal(at('2001:db8::1'), undefined);
    assert.equal(table.ranges, 6 + 5 + 3 + 1);
  });

  it('should let the most specific range win, on both sides of a nested one', () => {
    assert.deepEqual(at('34.35.0.1'), GOOGLE_CLOUD);
    assert.deepEqual(at('34.35.16.0'), MOBILE);
    assert.deepEqual(at('34.35.16.127'), MOBILE);
    // The same /25 in two lists: the later of kind/provider order (SATELLITE/TEST_SAT) wins.
    assert.deepEqual(at('34.35.16.200'), { type: 'SATELLITE', provider: 'TEST_SAT', published_at: 0, stale: false });
    assert.deepEqual(at('34.35.31.255'), MOBILE);
    assert.deepEqual(at('34.35.32.0'), GOOGLE_CLOUD);
    assert.deepEqual(at('34.35.255.255'), GOOGLE_CLOUD);
    assert.equal(at('34.36.0.0'), undefined);
    assert.deepEqual(at('2406:daba:f000:10::9'), MOBILE);
    assert.deepEqual(at('2406:daba:f000:11::'), AWS);
  });

  it('should cover the ends of the address space and answer nothing without lists', () => {
    const edge = networkTypeOverride([list('DATACENTER', 'X', ['255.255.255.0/24', '0.0.0.0/8', 'ffff::/16'])], 0);
    assert.equal(edge.find(parseIp('255.255.255.255')!)?.provider, 'X');
    assert.equal(edge.find(parseIp('0.0.0.0')!)?.provider, 'X');
    assert.equal(edge.find(parseIp('1.0.0.0')!), undefined);
    assert.equal(edge.find(parseIp('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')!)?.provider, 'X');
    assert.equal(networkTypeOverride([], 0).find(parseIp('8.8.8.8')!), undefined);
  });

  it('should age a network list by its publisher time: full until 90 days, stale after, nothing from 730 days', () => {
    const DAY = 86_400;
    const published = 1_700_000_000;
    const cloud = { ...list('DATACENTER', 'AWS', ['3.5.140.0/22']), published_at: published };
    const carrier = { ...list('MOBILE', 'TEST_CARRIER', ['34.35.16.0/20']), published_at: published - 700 * DAY };
    const at = (nowS: number, a: string) => networkTypeOverride([cloud, carrier], nowS).find(parseIp(a)!);
    assert.equal(at(published + 90 * DAY, '3.5.140.1')?.stale, false, 'day 90: current');
    assert.equal(at(published + 91 * DAY, '3.5.140.1')?.stale, true, 'day 91: stale, the type still counts');
    assert.equal(at(published + 91 * DAY, '3.5.140.1')?.published_at, published, 'the evidence reports the publisher time');
    assert.equal(at(published + 729 * DAY, '3.5.140.1')?.type, 'DATACENTER');
    assert.equal(at(published + 730 * DAY, '3.5.140.1'), undefined, 'day 730: expired, it asserts nothing');
    // The carrier's list is 700 days old at the cloud's publication: it expires 30 days later.
    assert.equal(at(published + 29 * DAY, '34.35.16.1')?.type, 'MOBILE');
    const later = networkTypeOverride([cloud, carrier], published + 30 * DAY);
    assert.equal(later.find(parseIp('34.35.16.1')!), undefined);
    assert.deepEqual(later.expired, ['MOBILE/TEST_CARRIER'], 'the expired list is named for the log');
    assert.equal(later.ranges, 1, 'its ranges are not counted');
  });
});
