import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FEED_IDS } from '../../feeds/feed-catalog.ts';
import { parseIp } from '../../../lib/ip-address.ts';
import { BEHAVIOR, CATEGORY, DEVICE, PROVIDER } from './address-facts.ts';
import { AddressStore } from './address-store.ts';

const S0 = Date.UTC(2026, 10, 22, 12) / 1000;
const DAY = 86_400;
const ip = (s: string) => parseIp(s)!;
const v4 = (i: number) => ip(`${10 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.1`);
const v6 = (i: number) => ip(`2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`);

function store(budgetBytes = 64 * 2 ** 20, onBudgetReached?: () => void) {
  return new AddressStore({ budgetBytes, feeds: FEED_IDS, onBudgetReached, seed: 12345 });
}

/** Adds one torrent sighting of the address at t. */
function torrent(s: AddressStore, addr: ReturnType<typeof ip>, t: number, now = S0): number {
  const e = s.entry(addr, now);
  s.bump(e, BEHAVIOR, 'TORRENTING', 'torrents', t);
  return e;
}

describe(AddressStore.name, () => {
  it('should keep IPv4 and IPv6 observations apart, update them in place and list them grouped by key in first-seen order', () => {
    const s = store();
    const a = s.entry(ip('203.0.113.7'), S0);
    const b = s.entry(ip('2001:db8::7'), S0);
    assert.notEqual(a, b);
    assert.equal(s.entry(ip('203.0.113.7'), S0), a, 'the same address is the same entry');
    s.bump(a, PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'proxies', S0 - 50);
    s.bump(a, BEHAVIOR, 'TORRENTING', 'torrents', S0 - 40);
    s.bump(a, PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'ja4t', S0 - 30);
    s.bump(a, PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'proxies', S0 - 90);
    s.bump(a, PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'proxies', S0 - 10);
    s.bump(a, CATEGORY, 'BOTNET', 'honeypot_http', S0, 5);
    s.device(a, 'ANDROID', '13', 'honeypot_http', S0 - 20);
    s.device(a, 'ANDROID', '14', 'honeypot_http', S0 - 5);
    s.device(a, 'ANDROID', '', 'honeypot_http', S0 - 1);
    s.device(a, 'ANDROID', '12', 'honeypot_http', S0 - 100);
    s.bump(b, BEHAVIOR, 'MALICIOUS_TRAFFIC', 'honeypot_adb', S0);
    const obs = (e: number) => s.observations(e).map((o) => [o.kind, o.key, o.feed, o.first, o.last, o.count, o.version]);
    assert.deepEqual(obs(a), [
      [PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'proxies', S0 - 90, S0 - 10, 3, ''],
      [PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'ja4t', S0 - 30, S0 - 30, 1, ''],
      [BEHAVIOR, 'TORRENTING', 'torrents', S0 - 40, S0 - 40, 1, ''],
      [CATEGORY, 'BOTNET', 'honeypot_http', S0, S0, 5, ''],
      [DEVICE, 'ANDROID', 'honeypot_http', S0 - 100, S0 - 1, 4, '14'],
    ]);
    assert.deepEqual(obs(b), [[BEHAVIOR, 'MALICIOUS_TRAFFIC', 'honeypot_adb', S0, S0, 1, '']]);
    assert.equal(s.lastSeen(a), S0);
    assert.equal(s.addresses, 2);
    assert.deepEqual(s.addressTexts().sort(), ['2001:db8::7', '203.0.113.7']);
    assert.equal(s.find(ip('203.0.113.8')), 0);
    assert.equal(s.find(ip('2001:db8::8')), 0);
  });

  it('should count login attempts and distinct crawl paths per window, and open a new window once it has passed', () => {
    const s = store();
    const e = s.entry(ip('198.51.100.20'), S0);
    assert.deepEqual(
      [1, 2, 3].map((i) => s.login(e, S0 + i, DAY)),
      [1, 2, 3],
    );
    assert.equal(s.login(e, S0 + DAY + 1, DAY), 1, 'a day later a new window opens');
    // Distinct paths up to the cap, repeats ignored wherever they are held (inline or in extension slots).
    let n = 0;
    for (let i = 0; i < 30; i++) n = s.crawl(e, S0 + i, 1000 + i, 3600, 20);
    assert.equal(n, 20);
    const fresh = s.entry(ip('198.51.100.21'), S0);
    const counts = [];
    for (let i = 0; i < 14; i++) counts.push(s.crawl(fresh, S0, 7 + (i % 7) * 3, 3600, 20));
    assert.deepEqual(counts, [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7]);
    assert.equal(s.crawl(fresh, S0 + 3600, 7, 3600, 20), 1, 'an hour later the window starts again from this path');
    assert.equal(s.observations(e).length, 0, 'windows are not observations');
  });

  it('should never hold more than its budget while far more distinct addresses arrive, and warn once', () => {
    const budget = 2 * 2 ** 20;
    let warned = 0;
    const s = store(budget, () => warned++);
    for (let i = 0; i < 200_000; i++) {
      torrent(s, i % 3 === 0 ? v6(i) : v4(i), S0 - 200_000 + i);
      if (i % 1000 === 0) assert.ok(s.bytes <= budget, `${s.bytes} bytes after ${i} addresses`);
    }
    assert.ok(s.bytes <= budget);
    assert.equal(warned, 1);
    assert.ok(s.addresses > 30_000 && s.addresses < 200_000, `${s.addresses} addresses held`);
    assert.equal(s.addresses + s.evictions, 200_000);
    // Every address still held is found, and answers with its own observation (the table survived the churn).
    const held = new Set(s.addressTexts());
    assert.equal(held.size, s.addresses);
    for (let i = 0; i < 200_000; i++) {
      const a = i % 3 === 0 ? v6(i) : v4(i);
      const e = s.find(a);
      assert.equal(e !== 0, held.has(a.text), a.text);
      if (e) assert.equal(s.observations(e)[0]!.last, S0 - 200_000 + i);
    }
    // Replay order is old to new: what was kept is the most recent.
    const kept = [...held].map((t) => s.observations(s.find(ip(t)))[0]!.last).sort((x, y) => x - y);
    assert.ok(kept[0]! > S0 - 200_000 + 100_000, 'nothing from the older half survives');
  });

  it('should evict the least informative first: old single sightings before recent ones, and never strong evidence', () => {
    let full = false;
    const s = store(1 * 2 ** 20, () => (full = true));
    const malicious: string[] = [];
    const recent: string[] = [];
    const old: string[] = [];
    // A tenth strong evidence 40 days old, four tenths torrent peers seen 60 days ago, half seen a minute ago.
    for (let i = 0; !full; i++) {
      const a = v4(i);
      if (i % 10 === 0) {
        const e = s.entry(a, S0);
        s.bump(e, BEHAVIOR, 'MALICIOUS_TRAFFIC', 'honeypot_http', S0 - 40 * DAY);
        malicious.push(a.text);
      } else if (i % 10 < 5) {
        torrent(s, a, S0 - 60 * DAY);
        old.push(a.text);
      } else {
        torrent(s, a, S0 - 60);
        recent.push(a.text);
      }
    }
    // New sightings until a fifth of what was held had to go (fewer than the old ones).
    const target = Math.floor((malicious.length + old.length + recent.length) / 5);
    for (let i = 1_000_000; s.evictions < target; i++) torrent(s, v4(i), S0);
    const present = (texts: string[]) => texts.filter((t) => s.find(ip(t)) !== 0).length;
    assert.equal(present(malicious), malicious.length, 'strong evidence stays');
    assert.equal(present(recent), recent.length, 'recent sightings stay while older ones remain');
    assert.equal(old.length - present(old), s.evictions, 'only old single sightings went');
  });

  it('should free the strings of evicted addresses, so feed-chosen provider names cannot pile up', () => {
    const budget = 1 * 2 ** 20;
    const s = store(budget);
    for (let i = 0; i < 50_000; i++) {
      const e = s.entry(v4(i), S0);
      s.bump(e, PROVIDER, `PROVIDER_${i}_${'X'.repeat(40)}|DATACENTER_PROXY`, 'proxies', S0 - 50_000 + i);
      assert.ok(s.bytes <= budget);
    }
    assert.ok(s.pool.size < 20_000, `${s.pool.size} strings held for ${s.addresses} addresses`);
    assert.ok(s.pool.size >= s.addresses);
  });

  it('should take in a new provider name when the arrays are full, and evict only holders of unique text when strings overflow', () => {
    const budget = 2 * 2 ** 20;
    let full = false;
    const s = store(budget, () => (full = true));
    // Arrays filled with addresses that share one provider name.
    let i = 0;
    for (; !full; i++) {
      const e = s.entry(v4(i), S0);
      s.bump(e, PROVIDER, 'BRIGHTDATA|RESIDENTIAL_PROXY', 'proxies', S0 - 60);
    }
    const held = s.addresses;
    const before = s.evictions;
    const e = s.entry(ip('198.51.100.1'), S0);
    s.bump(e, PROVIDER, 'IPROYAL|MOBILE_PROXY', 'proxies', S0);
    s.settle(S0);
    assert.deepEqual(
      s.observations(s.find(ip('198.51.100.1'))).map((o) => o.key),
      ['IPROYAL|MOBILE_PROXY'],
    );
    assert.ok(s.evictions - before <= 256, `${s.evictions - before} evicted for one address`);
    // Strong evidence carrying feed-chosen text (a User-Agent version per address), far more than the
    // strings' share: those addresses make room for each other; the others stay.
    const peers = s.addresses;
    for (let k = 0; k < 2_000; k++) {
      const a = s.entry(v6(k), S0);
      s.bump(a, BEHAVIOR, 'MALICIOUS_TRAFFIC', 'honeypot_http', S0);
      s.device(a, 'ANDROID', `14.${k}.${'0'.repeat(1000)}`, 'honeypot_http', S0);
      s.settle(S0);
      assert.ok(s.bytes <= budget, `${s.bytes} bytes`);
    }
    assert.ok(s.addresses >= peers && s.addresses < peers + 2_000, `${s.addresses} held, ${peers} before the flood`);
    let proxies = 0;
    for (let k = 0; k < i; k++) if (s.find(v4(k)) !== 0) proxies++;
    assert.ok(proxies >= held - 300, `${proxies} of ${held} proxy addresses kept through the flood`);
  });

  it('should drop addresses last seen before the horizon in steps, window starts counting as seen', () => {
    const s = store();
    for (let i = 0; i < 10_000; i++) torrent(s, v4(i), i % 2 === 0 ? S0 - 100 * DAY : S0 - DAY);
    const windowOnly = s.entry(ip('192.0.2.1'), S0);
    s.crawl(windowOnly, S0 - DAY, 42, 3600, 20);
    s.startPrune(S0 - 90 * DAY);
    let steps = 0;
    while (s.pruneStep(1_000)) steps++;
    assert.ok(steps >= 9, `${steps} steps`);
    assert.equal(s.addresses, 5_001);
    assert.equal(s.find(v4(0)), 0);
    assert.notEqual(s.find(v4(1)), 0);
    assert.notEqual(s.find(ip('192.0.2.1')), 0);
    assert.equal(s.pruneStep(1_000), false, 'nothing left to do until the next start');
  });
});
