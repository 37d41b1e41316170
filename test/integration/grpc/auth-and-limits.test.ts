import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';

async function setup(t: TestContext) {
  const app = await buildTestApp(t);
  const port = await app.grpc.listen('127.0.0.1', 0);
  const client = grpcClient(port);
  t.after(() => client.close());
  return { app, client };
}

const http = (app: Awaited<ReturnType<typeof setup>>['app'], url: string, key?: string) =>
  app.http.inject({ url, headers: key ? { 'x-api-key': key } : {} });

describe('gRPC authentication, errors and limits', () => {
  it('should refuse a missing, malformed, unknown or revoked key with UNAUTHENTICATED', async (t) => {
    const { app, client } = await setup(t);
    const { key, keyId } = await app.team();
    for (const bad of [undefined, '', 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const r = await client.unary('GetAccountInfo', {}, bad);
      assert.equal(r.error?.code, status.UNAUTHENTICATED, String(bad));
    }
    assert.equal((await client.unary('GetAccountInfo', {}, key)).error, undefined);
    await app.services.admin.revokeKey(keyId);
    app.services.accounts.invalidate();
    const revoked = await client.unary('GetAccountInfo', {}, key);
    assert.equal(revoked.error?.code, status.UNAUTHENTICATED);
    assert.match(revoked.error!.details, /revoked/);
  });

  it('should take rate tokens from the same team bucket as HTTP, and carry retry-after on RESOURCE_EXHAUSTED', async (t) => {
    const { app, client } = await setup(t);
    const { key } = await app.team();
    // The account bucket: burst 10, 10/s. Five over HTTP, five over gRPC, then both are refused.
    for (let i = 0; i < 5; i++) assert.equal((await http(app, '/api/v4/account/me', key)).statusCode, 200);
    for (let i = 0; i < 5; i++) {
      const r = await client.unary('GetAccountInfo', {}, key);
      assert.equal(r.error, undefined);
      assert.equal(r.trailers['ratelimit-remaining'], String(4 - i));
    }
    const limited = await client.unary('GetAccountInfo', {}, key);
    assert.equal(limited.error?.code, status.RESOURCE_EXHAUSTED);
    assert.equal(limited.trailers['retry-after'], '1');
    assert.equal(limited.trailers['ratelimit-limit'], '10');
    assert.equal(limited.trailers['ratelimit-remaining'], '0');
    assert.equal((await http(app, '/api/v4/account/me', key)).statusCode, 429);
    const metrics = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(metrics, /umbra_grpc_calls_total\{method="GetAccountInfo",code="OK"\} 5\n/);
    assert.match(metrics, /umbra_grpc_calls_total\{method="GetAccountInfo",code="RESOURCE_EXHAUSTED"\} 1\n/);
    assert.match(metrics, /umbra_rate_limited_total\{operation="account.me",bucket="account"\} 2\n/, 'one refusal per transport');
    app.clock.advance(1000);
    assert.equal((await client.unary('GetAccountInfo', {}, key)).error, undefined, 'refilled after a second of the injected clock');
  });

  it('should map exhausted credits (HTTP 402) to FAILED_PRECONDITION saying so, and charge nothing', async (t) => {
    const { app, client } = await setup(t);
    const { key } = await app.team({ credits: 2 });
    const batch = await client.unary('LookupIPs', { ips: ['8.8.8.8', '1.1.1.1', '9.9.9.9'] }, key);
    assert.equal(batch.error?.code, status.FAILED_PRECONDITION);
    assert.match(batch.error!.details, /credits exhausted/i);
    assert.match(batch.error!.details, /costs 3 credits and the team balance is 2/);
    const one = await client.unary('LookupIP', { ip_address: '8.8.8.8' }, key);
    assert.equal(one.trailers['x-credits-remaining'], '1');
    const me = await client.unary('GetAccountInfo', {}, key);
    assert.equal(me.value.lookup_quota.credits, 1);
  });

  it('should hide internals behind INTERNAL, as HTTP hides them behind 500', async (t) => {
    const { app, client } = await setup(t);
    const { key } = await app.team();
    app.services.accounts.accountInfo = async () => {
      throw new Error('secret database path /var/lib/x');
    };
    const r = await client.unary('GetAccountInfo', {}, key);
    assert.equal(r.error?.code, status.INTERNAL);
    assert.doesNotMatch(r.error!.details, /secret|var\/lib/);
    assert.equal(r.error!.details, (await http(app, '/api/v4/account/me', key)).json().detail);
  });

  it('should answer UNAVAILABLE where HTTP answers 503: a stream whose backend is down', async (t) => {
    const { app, client } = await setup(t);
    const { key, orgId } = await app.team();
    app.stores.bus.health = async () => ['bus down'];
    const s = await client.stream('StreamProxies', key).status;
    assert.equal(s.code, status.UNAVAILABLE);
    assert.equal(s.metadata.get('retry-after')[0], '5');
    assert.equal((await http(app, '/api/v4/feeds/proxies/stream', key)).statusCode, 503);
    assert.equal(await app.stores.slots.count(orgId), 0, 'no slot held');
  });

  it('should validate requests at the edge: INVALID_ARGUMENT naming the field, including an unknown feed (after the key check)', async (t) => {
    const { app, client } = await setup(t);
    const { key } = await app.team();
    const feed = await client.unary('ListExportSnapshots', { feed: 'nope' }, key);
    assert.equal(feed.error?.code, status.INVALID_ARGUMENT);
    assert.match(feed.error!.details, /^feed: must be one of proxies, anonymizers/);
    assert.equal((await client.unary('ListExportSnapshots', { feed: 'nope' })).error?.code, status.UNAUTHENTICATED);
    // A segment is accepted as well as an id.
    const listed = await client.unary('ListExportSnapshots', { feed: 'helio/adb' }, key);
    assert.equal(listed.value.stream, 'honeypot_adb');
    const ip = await client.unary('LookupIP', { ip_address: 'fe80::1%eth0' }, key);
    assert.equal(ip.error?.code, status.INVALID_ARGUMENT);
    assert.match(ip.error!.details, /^ip_address: /);
  });
});
