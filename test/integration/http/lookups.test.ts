import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';

const PROBLEM = 'application/problem+json';

describe('GET /api/v4/lookup/ip/{ip}', () => {
  it('should return network, location and intelligence for an IPv4 address and charge 1 credit', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 10 });
    const res = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-credits-remaining'], '9');
    // 8.8.8.8 is anycast (Google Public DNS): the geo source's Mountain View is where one of its sites is, so only the country is said.
    assert.deepEqual(res.json(), {
      ip: '8.8.8.8',
      network: {
        asn: 15169,
        isp: 'Google LLC',
        type: 'DATACENTER',
        org: null,
        domain: null,
        abuse_email: null,
        abuse_phone: null,
        bogon: false,
        anycast: true,
      },
      location: {
        country: 'US',
        state: '',
        city: '',
        timezone: '',
        latitude: null,
        longitude: null,
        geo_hash: '',
        precision: 'country',
        accuracy_radius_km: null,
      },
      // Nothing observed: the risk score is the prior of a datacenter network (docs/intelligence.md, "Risk score").
      intelligence: { risk_score: 15, behavior: [], categories: [], devices: [], providers: [] },
    });
  });

  it('should answer 6to4 and Teredo addresses with the network and location of the IPv4 address they carry, and name it', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const v4 = (await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key } })).json();
    for (const [ip, via] of [
      ['2002:808:808::1', '6to4'],
      ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'teredo'],
    ]) {
      const res = await app.http.inject({ url: `/api/v4/lookup/ip/${ip}`, headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 200, ip);
      const body = res.json();
      assert.equal(body.ip, ip, ip);
      assert.deepEqual(body.embedded_ipv4, { ip: '8.8.8.8', via }, ip);
      assert.deepEqual([body.network, body.location], [v4.network, v4.location], ip);
      assert.deepEqual(Object.keys(body), ['ip', 'network', 'location', 'intelligence', 'embedded_ipv4'], ip);
    }
    const plain = await app.http.inject({ url: '/api/v4/lookup/ip/2001:4860:4860::8888', headers: { 'x-api-key': key } });
    assert.equal(plain.json().embedded_ipv4, undefined);
  });

  it('should accept raw IPv6 colons, canonicalise, and look up IPv4-mapped IPv6 as IPv4', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const v6 = await app.http.inject({ url: '/api/v4/lookup/ip/2001:4860:4860:0:0:0:0:8888', headers: { 'x-api-key': key } });
    assert.equal(v6.statusCode, 200);
    assert.equal(v6.json().ip, '2001:4860:4860::8888');
    assert.equal(v6.json().network.asn, 15169);
    const mapped = await app.http.inject({ url: '/api/v4/lookup/ip/::ffff:8.8.8.8', headers: { 'x-api-key': key } });
    assert.equal(mapped.json().ip, '8.8.8.8');
    assert.equal(mapped.json().embedded_ipv4, undefined);
    assert.deepEqual([mapped.json().network.anycast, mapped.json().location.country], [true, 'US']);
  });

  it("should answer the router's own refusals (bad percent-encoding, overlong segment) as problem+json with a request id, charging nothing", async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 5 });
    const bad = await app.http.inject({ url: '/api/v4/lookup/ip/%E0%A4%A', headers: { 'x-api-key': key, 'x-request-id': 'req-bad-url' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers['content-type'], PROBLEM);
    assert.equal(bad.headers['x-request-id'], 'req-bad-url');
    assert.equal(bad.json().title, 'Validation error');
    assert.deepEqual(Object.keys(bad.json().errors), ['path']);
    const long = await app.http.inject({ url: `/api/v4/lookup/ip/${'a'.repeat(1200)}`, headers: { 'x-api-key': key } });
    assert.equal(long.statusCode, 414);
    assert.equal(long.headers['content-type'], PROBLEM);
    assert.match(String(long.headers['x-request-id']), /\S/);
    assert.equal(long.json().status, 414);
    assert.equal(long.json().error, long.json().detail);
    const me = await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key } });
    assert.equal(me.json().lookup_quota.credits, 5);
  });

  it('should serialise ASNs above int32 exactly', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const res = await app.http.inject({ url: '/api/v4/lookup/ip/100.1.2.3', headers: { 'x-api-key': key } });
    assert.match(res.body, /"asn":4294967294/);
  });

  it('should answer 200 with asn 0, the bogon flag and no place for private addresses', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const res = await app.http.inject({ url: '/api/v4/lookup/ip/10.0.0.1', headers: { 'x-api-key': key } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().network.asn, 0);
    assert.deepEqual([res.json().network.bogon, res.json().network.anycast], [true, false]);
    assert.deepEqual(res.json().location, {
      country: '',
      state: '',
      city: '',
      timezone: '',
      latitude: null,
      longitude: null,
      geo_hash: '',
      precision: 'none',
      accuracy_radius_km: null,
    });
  });

  it('should give a 400 validation problem for a bad address and charge nothing', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 5 });
    for (const bad of ['1.2.3', 'fe80::1%25eth0', '1.2.3.4%2F24', 'hello']) {
      const res = await app.http.inject({ url: `/api/v4/lookup/ip/${bad}`, headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.headers['content-type'], PROBLEM);
      const body = res.json();
      assert.equal(body.title, 'Validation error');
      assert.equal(body.status, 400);
      assert.ok(body.errors.ip_address[0].length > 0);
      assert.equal(body.error, body.detail);
      assert.equal(res.headers['x-credits-remaining'], undefined);
    }
    const me = await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key } });
    assert.equal(me.json().lookup_quota.credits, 5);
  });
});

describe('POST /api/v4/lookup/ips', () => {
  const post = (app: TestApp, key: string, payload: unknown, headers: Record<string, string> = {}) =>
    (app.http.inject as (o: object) => Promise<{ statusCode: number; headers: Record<string, string>; json(): any; body: string }>)({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it('should dedupe on the canonical address, keep first-appearance order, list invalid inputs and bill ceil(n × 0.9)', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 100 });
    const res = await post(app, key, {
      ips: ['8.8.8.8', 'bogus', '2001:4860:4860::8888', '::ffff:8.8.8.8', '2001:4860:4860:0::8888', '10.0.0.1', 'bogus', '1.2.3.999'],
    });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(
      body.results.map((r: { ip: string }) => r.ip),
      ['8.8.8.8', '2001:4860:4860::8888', '10.0.0.1'],
    );
    assert.deepEqual(body.invalid, ['bogus', '1.2.3.999']);
    assert.equal(res.headers['x-credits-remaining'], '97'); // ceil(3 × 0.9) = 3
  });

  it('should charge 90 for 100 addresses and 900 for 1,000', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 1000 });
    const ips = (n: number, base: number) => Array.from({ length: n }, (_, i) => `${base}.${(i >> 8) & 255}.${i & 255}.1`);
    const hundred = await post(app, key, { ips: ips(100, 11) });
    assert.equal(hundred.statusCode, 200);
    assert.equal(hundred.json().results.length, 100);
    assert.equal(hundred.headers['x-credits-remaining'], '910');
    await app.services.admin.setCredits((await app.services.admin.listOrgs())[0]!.id, 900);
    const thousand = await post(app, key, { ips: ips(1000, 12) });
    assert.equal(thousand.statusCode, 200);
    assert.equal(thousand.headers['x-credits-remaining'], '0');
  });

  it('should refuse more than 1,000 entries, non-arrays, non-strings and all-invalid batches with 400 and charge nothing', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 10 });
    const cases: unknown[] = [
      { ips: Array.from({ length: 1001 }, (_, i) => `1.1.${i >> 8}.${i & 255}`) },
      { ips: '8.8.8.8' },
      { ips: [8, 8] },
      { ips: ['nope', 'nada'] },
      { ips: [] },
      {},
      ['8.8.8.8'],
    ];
    for (const payload of cases) {
      const res = await post(app, key, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60));
      assert.equal(res.headers['content-type'], PROBLEM);
      assert.equal(res.json().title, 'Validation error');
      assert.ok(Object.keys(res.json().errors).length > 0);
    }
    const me = await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key } });
    assert.equal(me.json().lookup_quota.credits, 10);
  });

  it('should answer malformed JSON with a 400 validation problem, a wrong content type with 415 and an oversized body with 413', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_BODY_LIMIT_BYTES: '2048' });
    const { key } = await app.team();
    const bad = await post(app, key, '{"ips": [');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers['content-type'], PROBLEM);
    assert.deepEqual(Object.keys(bad.json().errors), ['body']);
    const text = await post(app, key, 'ips=1', { 'content-type': 'text/plain' });
    assert.equal(text.statusCode, 415);
    assert.equal(text.headers['content-type'], PROBLEM);
    const big = await post(app, key, { ips: Array.from({ length: 300 }, () => '255.255.255.255') });
    assert.equal(big.statusCode, 413);
    assert.equal(big.headers['content-type'], PROBLEM);
  });
});

describe('GET /api/v4/lookup/domain/{domain}', () => {
  it('should answer the full shape with status unknown and charge 1 credit', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 3 });
    const res = await app.http.inject({ url: '/api/v4/lookup/domain/B%C3%BCcher.Example', headers: { 'x-api-key': key } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-credits-remaining'], '2');
    const body = res.json();
    assert.equal(body.type, 'domain');
    assert.equal(body.data.domain, 'xn--bcher-kva.example');
    assert.equal(body.data.status, 'unknown');
    assert.deepEqual(body.data.stats, { events_24h: 0, total_events_30d: 0 });
    assert.equal(body.data.time_series.length, 30);
    assert.equal(body.data.time_series[29].date, '2026-11-22');
    assert.equal(body.data.time_series[0].date, '2026-10-24');
    assert.deepEqual([body.data.top_subdomains, body.data.top_ports, body.data.recent_events], [[], [], []]);
  });

  it('should refuse escaped slashes, dot-dot and bad limits with 400 and charge nothing', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 3 });
    for (const [path, field] of [
      ['..%2F..%2Fetc%2Fpasswd', 'domain'],
      ['a%2Fb.com', 'domain'],
      ['a..b.com', 'domain'],
      ['8.8.8.8', 'domain'],
      ['example.com?limit=0', 'limit'],
      ['example.com?limit=abc', 'limit'],
    ] as const) {
      const res = await app.http.inject({ url: `/api/v4/lookup/domain/${path}`, headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.ok(res.json().errors[field], `${path}: ${res.body}`);
      if (field === 'limit') assert.deepEqual(res.json().errors, { limit: ['must be an integer of at least 1'] });
    }
    const ok = await app.http.inject({ url: '/api/v4/lookup/domain/example.com?limit=5000', headers: { 'x-api-key': key } });
    assert.equal(ok.statusCode, 200, 'larger limits are clamped, not refused');
    assert.equal(ok.headers['x-credits-remaining'], '2');
  });
});
