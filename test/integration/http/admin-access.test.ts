import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../helpers/build-test-app.ts';

const TOKEN = 'operator-token-for-tests-0123456789';
const PROBLEM = 'application/problem+json';

describe('who may reach /metrics and /internal/* (UMBRA_ADMIN_ALLOW)', () => {
  it('should serve them to the machine itself by default', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    // inject() comes from 127.0.0.1, as a local Prometheus or the CLI does.
    assert.equal((await app.http.inject({ url: '/metrics' })).statusCode, 200);
    const status = await app.http.inject({ url: '/internal/v1/data-status', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(status.statusCode, 200, status.body);
    assert.equal((await app.http.inject({ url: '/metrics', remoteAddress: '203.0.113.9' })).statusCode, 403, 'another host is refused');
    assert.equal((await app.http.inject({ url: '/metrics', remoteAddress: '::ffff:127.0.0.1' })).statusCode, 200);
  });

  it('should refuse every other address with 403, token or not, and keep the probe and the API document public', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_ADMIN_ALLOW: '10.0.0.0/8, 2001:db8::/32' });
    const metrics = await app.http.inject({ url: '/metrics' });
    assert.equal(metrics.statusCode, 403);
    assert.equal(metrics.headers['content-type'], PROBLEM);
    assert.match(metrics.json().detail, /^Prometheus metrics is served only to the addresses in the server's UMBRA_ADMIN_ALLOW/);
    assert.doesNotMatch(metrics.body, /10\.0\.0\.0|2001:db8/, 'the allow-list itself is not disclosed');
    for (const req of [
      { url: '/internal/v1/data-status', headers: { authorization: `Bearer ${TOKEN}` } },
      { url: '/internal/v1/ingest/proxies', method: 'POST' as const, headers: { authorization: `Bearer ${TOKEN}` }, payload: '' },
    ]) {
      const res = await app.http.inject(req);
      assert.equal(res.statusCode, 403, `${req.url}: ${res.body}`);
    }
    assert.equal((await app.http.inject({ url: '/health' })).statusCode, 200);
    assert.equal((await app.http.inject({ url: '/api/v4/openapi.json' })).statusCode, 200);
  });

  it('should serve every address with any, and refuse a malformed list at start', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_ADMIN_ALLOW: 'any' });
    assert.equal((await app.http.inject({ url: '/metrics', remoteAddress: '203.0.113.9' })).statusCode, 200);
    const { parseConfig } = await import('../../../src/config.ts');
    assert.throws(() => parseConfig({ UMBRA_ADMIN_ALLOW: 'localhost' }), /UMBRA_ADMIN_ALLOW.*'localhost' is not an address or CIDR/);
  });
});
