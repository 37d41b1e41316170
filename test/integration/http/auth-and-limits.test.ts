import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { FEED_STREAM_OPERATIONS } from '../../../src/operations.ts';
import { AppError } from '../../../src/errors.ts';

/** The version a release sets, read here as an operator would, not through the code under test. */
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

const PROBLEM = 'application/problem+json';
const get = (app: TestApp, url: string, key?: string) => app.http.inject({ url, headers: key ? { 'x-api-key': key } : {} });

const AUTHENTICATED = ['/api/v4/account/me', '/api/v4/lookup/ip/8.8.8.8', '/api/v4/lookup/domain/example.com'];

describe('authentication and scopes', () => {
  it('should answer 401 problem+json without a key, with a malformed key and with an unknown key', async (t) => {
    const app = await buildTestApp(t);
    for (const url of AUTHENTICATED) {
      for (const key of [undefined, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        const res = await get(app, url, key);
        assert.equal(res.statusCode, 401, `${url} ${key}`);
        assert.equal(res.headers['content-type'], PROBLEM);
        assert.equal(res.json().status, 401);
        assert.equal(res.json().error, res.json().detail);
        assert.equal(res.headers['ratelimit-limit'], undefined, 'no team, no bucket');
      }
    }
    const batch = await app.http.inject({ method: 'POST', url: '/api/v4/lookup/ips', payload: { ips: ['8.8.8.8'] } });
    assert.equal(batch.statusCode, 401);
  });

  it('should refuse a revoked key with 401 at once when revoked in process', async (t) => {
    const app = await buildTestApp(t);
    const { key, keyId } = await app.team();
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 200);
    await app.services.admin.revokeKey(keyId);
    app.services.accounts.invalidate();
    const res = await get(app, '/api/v4/account/me', key);
    assert.equal(res.statusCode, 401);
    assert.match(res.json().detail, /revoked/);
  });

  it('should honour a revocation made by another process within the key cache time', async (t) => {
    const app = await buildTestApp(t);
    const { key, keyId } = await app.team();
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 200);
    await app.services.admin.revokeKey(keyId); // same database, no invalidate(): as the CLI would
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 200, 'still cached');
    app.clock.advance(1001);
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 401);
  });

  it('should answer 403 when the key lacks BASIC, naming the scope', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ scopes: ['PROXY_FEEDS'] });
    for (const url of AUTHENTICATED) {
      const res = await get(app, url, key);
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.headers['content-type'], PROBLEM);
      assert.match(res.json().detail, /BASIC/);
    }
  });

  it('should accept the key in any letter case but never from a query parameter', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    assert.equal((await get(app, '/api/v4/account/me', key.toUpperCase())).statusCode, 200);
    assert.equal((await get(app, `/api/v4/account/me?x-api-key=${key}`)).statusCode, 401);
  });
});

describe('GET /api/v4/account/me', () => {
  it('should describe the key owner, team, scopes and quota', async (t) => {
    const app = await buildTestApp(t);
    const org = await app.services.admin.createOrg({ name: 'Acme', credits: 500, resetPeriodSeconds: 3600 });
    const made = await app.services.admin.createKey({
      org: 'acme',
      email: 'ada@acme.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
      scopes: ['BASIC', 'TORRENTS_FEED'],
    });
    app.clock.advance(600_000);
    const res = await get(app, '/api/v4/account/me', made.secret);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@acme.test',
      organization: { id: org.id, name: 'Acme', relation: 'OWNER' },
      scopes: ['BASIC', 'TORRENTS_FEED'],
      lookup_quota: { credits: 500, resets_in: 3000 },
    });
    assert.equal(res.headers['x-credits-remaining'], undefined, 'account/me is free');
  });
});

describe('team credits', () => {
  it('should share one balance between the keys of a team and never let another team spend it', async (t) => {
    const app = await buildTestApp(t);
    const a = await app.team({ credits: 2 });
    const a2 = await app.key(a.orgId);
    const b = await app.team({ credits: 50 });
    assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', a.key)).headers['x-credits-remaining'], '1');
    assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', a2.key)).headers['x-credits-remaining'], '0');
    const denied = await get(app, '/api/v4/lookup/ip/8.8.8.8', a.key);
    assert.equal(denied.statusCode, 402);
    assert.equal(denied.headers['content-type'], PROBLEM);
    assert.match(denied.json().detail, /costs 1 credit and the team balance is 0/);
    const other = await get(app, '/api/v4/account/me', b.key);
    assert.equal(other.json().lookup_quota.credits, 50);
    assert.equal(other.json().organization.id, b.orgId);
  });

  it('should give 402 for a batch the balance cannot cover whole, charge nothing, and keep account/me working', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team({ credits: 5 });
    const ips = Array.from({ length: 10 }, (_, i) => `8.8.8.${i}`);
    const res = await app.http.inject({ method: 'POST', url: '/api/v4/lookup/ips', headers: { 'x-api-key': key }, payload: { ips } });
    assert.equal(res.statusCode, 402);
    assert.match(res.json().detail, /costs 9 credits and the team balance is 5/);
    assert.equal((await get(app, '/api/v4/account/me', key)).json().lookup_quota.credits, 5);
  });

  it('should refill to the allotment when resets_in elapses', async (t) => {
    const app = await buildTestApp(t);
    await app.services.admin.createOrg({ name: 'Small', credits: 1, resetPeriodSeconds: 86400 });
    const { secret } = await app.services.admin.createKey({ org: 'Small', email: 'x@small.test', scopes: ['BASIC'] });
    assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', secret)).statusCode, 200);
    assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', secret)).statusCode, 402);
    const me = (await get(app, '/api/v4/account/me', secret)).json();
    app.clock.advance(me.lookup_quota.resets_in * 1000);
    const after = await get(app, '/api/v4/lookup/ip/8.8.8.8', secret);
    assert.equal(after.statusCode, 200);
    assert.equal(after.headers['x-credits-remaining'], '0');
    assert.equal((await get(app, '/api/v4/account/me', secret)).json().lookup_quota.resets_in, 86400);
  });
});

describe('rate limits', () => {
  it('should send RateLimit headers and answer 429 with an integer Retry-After when the account bucket (10/s, burst 10) is empty', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    for (let i = 1; i <= 10; i++) {
      const res = await get(app, '/api/v4/account/me', key);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], String(10 - i));
      assert.equal(res.headers['ratelimit-reset'], '1');
    }
    const limited = await get(app, '/api/v4/account/me', key);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['content-type'], PROBLEM);
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    app.clock.advance(100);
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 200, 'one token back after 100 ms at 10/s');
  });

  it('should share the lookup bucket (100/s, burst 200) between single and batch lookups and all keys of a team', async (t) => {
    const app = await buildTestApp(t);
    const a = await app.team({ credits: 1e6 });
    const a2 = await app.key(a.orgId);
    const b = await app.team({ credits: 1e6 });
    for (let i = 0; i < 199; i++) assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', i % 2 ? a.key : a2.key)).statusCode, 200);
    const batch = await app.http.inject({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': a.key },
      payload: { ips: ['8.8.8.8'] },
    });
    assert.equal(batch.statusCode, 200);
    assert.equal(batch.headers['ratelimit-remaining'], '0');
    const limited = await get(app, '/api/v4/lookup/ip/8.8.8.8', a2.key);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['x-credits-remaining'], undefined, 'a refused request is not charged');
    assert.equal((await get(app, '/api/v4/lookup/ip/8.8.8.8', b.key)).statusCode, 200, 'another team has its own bucket');
    assert.equal((await get(app, '/api/v4/lookup/domain/example.com', a.key)).statusCode, 200, 'domain lookups have their own bucket');
    const me = (await get(app, '/api/v4/account/me', a.key)).json();
    assert.equal(me.lookup_quota.credits, 1e6 - 201);
  });

  it('should apply operator overrides within the refresh time', async (t) => {
    const app = await buildTestApp(t);
    const { key, orgId } = await app.team();
    await app.services.admin.setLimit(orgId, 'account', { rate: 1, burst: 2 });
    app.clock.advance(2001);
    assert.equal((await get(app, '/api/v4/account/me', key)).headers['ratelimit-limit'], '2');
    assert.equal((await get(app, '/api/v4/account/me', key)).statusCode, 200);
    const limited = await get(app, '/api/v4/account/me', key);
    assert.equal(limited.statusCode, 429);
    await app.services.admin.resetLimits(orgId);
    app.clock.advance(2001);
    assert.equal((await get(app, '/api/v4/account/me', key)).headers['ratelimit-limit'], '10');
  });
});

describe('errors, health and documents', () => {
  it('should answer unknown routes with 404 and wrong methods with 405, both problem+json', async (t) => {
    const app = await buildTestApp(t);
    const missing = await app.http.inject({ url: '/api/v4/nope' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], PROBLEM);
    assert.equal(missing.json().status, 404);
    const wrong = await app.http.inject({ method: 'DELETE', url: '/api/v4/account/me' });
    assert.equal(wrong.statusCode, 405);
    assert.equal(wrong.headers['content-type'], PROBLEM);
    assert.equal(wrong.headers.allow, 'GET, HEAD');
    const getBatch = await app.http.inject({ url: '/api/v4/lookup/ips' });
    assert.equal(getBatch.statusCode, 405);
    assert.equal(getBatch.headers.allow, 'POST');
  });

  it('should echo a request id, generating one when none is given', async (t) => {
    const app = await buildTestApp(t);
    const given = await app.http.inject({ url: '/health', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(given.headers['x-request-id'], 'abc-123');
    const made = await app.http.inject({ url: '/health', headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('should hide internals of a 500', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    app.services.accounts.accountInfo = async () => {
      throw new Error('secret database path /var/lib/x');
    };
    const res = await get(app, '/api/v4/account/me', key);
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.doesNotMatch(res.body, /secret|var\/lib/);
  });

  it("should serve health at both paths without a key, with package.json's version, and 503 when a store fails", async (t) => {
    const app = await buildTestApp(t);
    assert.match(version, /^\d+\.\d+\.\d+/);
    for (const url of ['/health', '/api/v4/health']) {
      const res = await app.http.inject({ url });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json(), { status: 'ok', version, exports: { snapshots: 0, last_job_at: null } });
    }
    app.stores.health = async () => ['embedded database: disk I/O error'];
    const sick = await app.http.inject({ url: '/api/v4/health' });
    assert.equal(sick.statusCode, 503);
    assert.deepEqual(sick.json(), {
      status: 'unhealthy',
      version,
      problems: ['embedded database: disk I/O error'],
      exports: { snapshots: 0, last_job_at: null },
    });
  });

  it('should still answer health with its problem lines when the snapshot catalog cannot be read (its database is down)', async (t) => {
    const app = await buildTestApp(t);
    // What a PostgreSQL catalog throws while the database is down (pg-pool.ts): a dependency fault.
    const down = new AppError('UNAVAILABLE', 'The database is unavailable right now (ECONNREFUSED). Retry shortly.');
    app.stores.snapshots.count = async () => {
      throw down;
    };
    const alone = await app.http.inject({ url: '/health' });
    assert.equal(alone.statusCode, 503);
    assert.match(String(alone.headers['content-type']), /^application\/json/, 'the health report, not a failed request');
    assert.deepEqual(alone.json(), {
      status: 'unhealthy',
      version,
      problems: [`exports: the snapshot catalog cannot be read (${down.message})`],
    });
    // The database's own line says it when the stores know it (they saw the same failure).
    const line = 'database: unavailable for 3 s (ECONNREFUSED); requests that need it answer 503';
    app.stores.health = async () => [line];
    assert.deepEqual((await app.http.inject({ url: '/api/v4/health' })).json(), { status: 'unhealthy', version, problems: [line] });
    // Anything else is a bug, and stays a 500.
    app.stores.snapshots.count = async () => {
      throw new TypeError('not a fault');
    };
    assert.equal((await app.http.inject({ url: '/health' })).statusCode, 500);
  });

  it('should publish an OpenAPI 3.1 document and a local reference page without a key', async (t) => {
    const app = await buildTestApp(t);
    const doc = await app.http.inject({ url: '/api/v4/openapi.json' });
    assert.equal(doc.statusCode, 200);
    const spec = doc.json();
    assert.equal(spec.openapi, '3.1.0');
    assert.match(spec.info.description, /DB-IP/, 'the data licence asks for attribution');
    for (const path of [
      '/api/v4/account/me',
      '/api/v4/lookup/ip/{ip_address}',
      '/api/v4/lookup/ips',
      '/api/v4/lookup/domain/{domain}',
      '/api/v4/health',
    ]) {
      assert.ok(spec.paths[path], path);
    }
    assert.equal(spec.paths['/api/v4/lookup/ips'].post.requestBody.content['application/json'].schema.properties.ips.maxItems, 1000);
    for (const op of Object.values(FEED_STREAM_OPERATIONS)) {
      const get = spec.paths[`/api/v4${op.path}`]?.get;
      assert.ok(get, op.path);
      assert.ok(get.responses['200'].content['application/x-ndjson'].schema.properties.timestamp, `${op.path} documents its record`);
    }
    assert.equal(spec.paths['/internal/v1/ingest/*'], undefined, 'the operator endpoint is not in the customer API reference');
    const page = await app.http.inject({ url: '/api/v4/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>umbra/i);
    assert.doesNotMatch(page.body, /https?:\/\/(cdn|unpkg)/, 'assets are served locally');
  });

  it('should expose Prometheus metrics by operation and status, with credits charged', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    await get(app, '/api/v4/lookup/ip/8.8.8.8', key);
    await get(app, '/api/v4/lookup/ip/nope', key);
    const res = await app.http.inject({ url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /umbra_http_requests_total\{operation="lookup.ip",status="200"\} 1/);
    assert.match(res.body, /umbra_http_requests_total\{operation="lookup.ip",status="400"\} 1/);
    assert.match(res.body, /umbra_credits_charged_total\{operation="lookup.ip"\} 1/);
    assert.match(res.body, /umbra_http_request_duration_seconds_bucket/);
  });
});
