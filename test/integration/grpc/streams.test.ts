import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import { FEED_LIST, FEEDS, type FeedId } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { dropNulls, grpcClient, grpcToJson } from '../../helpers/grpc-client.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { MemoryStreamSlots } from '../../../src/storage/embedded/memory-stream-slots.ts';

async function listening(t: TestContext, env: Record<string, string> = {}, stores?: Parameters<typeof buildTestApp>[3]) {
  const app = await buildTestApp(t, {}, env, stores);
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const port = await app.grpc.listen('127.0.0.1', 0);
  const client = grpcClient(port);
  t.after(() => client.close());
  return { app, client, httpPort: (app.http.server.address() as { port: number }).port };
}

const ingest = async (app: TestApp, feed: FeedId, values: unknown[]) => {
  const s = await app.services.ingest.ingest(FEEDS[feed], [values.map((value, i) => ({ n: i + 1, value }))]);
  assert.equal(s.accepted, values.length, JSON.stringify(s.errors));
};

const until = async (cond: () => Promise<boolean> | boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
};

// A parsed ClientHello with nested arrays and objects, to carry the Struct path end to end.
const HELLO = {
  sni: 'vpn.northwind-bank.com',
  cipher_suites: [{ code: 4865, name: 'TLS_AES_128_GCM_SHA256' }],
  compression_methods: [0],
  has_grease: true,
  ja4: 't13d1516h2_8daaf6152771_b186095e22b6',
};

describe('gRPC feed streams', () => {
  it('should stream every feed with the same records as the HTTP stream, instants as Timestamps (ms in nanos)', async (t) => {
    const { app, client, httpPort } = await listening(t);
    const { key, orgId } = await app.team({ maxStreams: 20 });
    for (const feed of FEED_LIST) {
      const http = await openStream(httpPort, `/api/v4/feeds/${feed.segment}/stream`, key);
      const grpc = client.stream(feed.grpcStream, key);
      // Both subscriptions exist before publishing once the team holds two slots.
      await until(async () => (await app.stores.slots.count(orgId)) === 2);
      const base = sampleRecords(app.clock.now())[feed.id];
      const records: Array<Record<string, unknown>> = [1, 2].map((k) => ({ ...base, timestamp: (base.timestamp as number) - k * 7 }));
      if (feed.id === 'honeypot_https') records[1] = { ...records[1]!, details: HELLO, raw: Buffer.from('hello').toString('base64') };
      await ingest(app, feed.id, records);
      const [viaHttp, viaGrpc] = await Promise.all([http.records(2), grpc.records(2)]);
      assert.deepEqual(dropNulls(viaGrpc.map((m) => grpcToJson(m, feed.unit))), dropNulls(viaHttp), feed.id);
      // Timestamps: the same instant; honeypot milliseconds land in nanos.
      const ts = viaGrpc[0].timestamp;
      const ms = (records[0]!.timestamp as number) * (feed.unit === 'ms' ? 1 : 1000);
      assert.equal(ts.seconds, Math.floor(ms / 1000), feed.id);
      assert.equal(ts.nanos, (ms % 1000) * 1e6, feed.id);
      http.close();
      grpc.cancel();
      await until(async () => (await app.stores.slots.count(orgId)) === 0);
    }
  });
});

describe('gRPC stream limits', () => {
  it('should share the team allowance with HTTP streams: 429 → RESOURCE_EXHAUSTED with retry-after, and a cancelled call frees its slot at once', async (t) => {
    const { app, client, httpPort } = await listening(t);
    const { key, orgId } = await app.team({ maxStreams: 2 });
    const http = await openStream(httpPort, '/api/v4/feeds/proxies/stream', key);
    const grpc = client.stream('StreamAnonymizers', key);
    await until(async () => (await app.stores.slots.count(orgId)) === 2);
    const refused = client.stream('StreamJA4T', key);
    const s = await refused.status;
    assert.equal(s.code, status.RESOURCE_EXHAUSTED);
    assert.match(s.details, /2 concurrent streams/);
    assert.equal(s.metadata.get('retry-after')[0], '5');
    assert.equal((await openStream(httpPort, '/api/v4/feeds/ja4t/stream', key)).status, 429, 'HTTP sees the same allowance');
    grpc.cancel();
    await until(async () => (await app.stores.slots.count(orgId)) === 1, 1000);
    const again = client.stream('StreamJA4T', key);
    await until(async () => (await app.stores.slots.count(orgId)) === 2);
    await ingest(app, 'ja4t', [sampleRecords(app.clock.now()).ja4t]);
    assert.equal((await again.records(1))[0].ja4t, '43080_2-4-8-1-3_1436_9');
    again.cancel();
    http.close();
  });

  it('should end streams cleanly with OK at the configured lifetime', async (t) => {
    const { app, client } = await listening(t, { UMBRA_STREAM_LIFETIME_MS: '150' });
    const { key, orgId } = await app.team();
    const started = Date.now();
    const s = await client.stream('StreamProxies', key).status;
    assert.equal(s.code, status.OK);
    assert.ok(Date.now() - started >= 140, 'not before the lifetime');
    assert.equal(await app.stores.slots.count(orgId), 0);
  });

  it('should end a call with UNAVAILABLE when its slot lease is lost', async (t) => {
    // A 60 ms lease is renewed every 20 ms; its expiry follows the app's manual clock.
    const { app, client } = await listening(t, {}, (made, clock) => ({ ...made, slots: new MemoryStreamSlots({ ttlMs: 60, clock }) }));
    const { key, orgId } = await app.team({ maxStreams: 1 });
    const call = client.stream('StreamProxies', key);
    await until(async () => (await app.stores.slots.count(orgId)) === 1);
    app.clock.advance(60);
    const s = await call.status;
    assert.equal(s.code, status.UNAVAILABLE, 'retried by clients, with backoff');
    assert.match(s.details, /could not keep its slot/);
    const metrics = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(metrics, /umbra_streams_ended_total\{feed="proxies",reason="lease_lost"\} 1/);
  });

  it('should refuse without a key, without the stream scope, and when the connection bucket is empty', async (t) => {
    const { app, client } = await listening(t);
    const { key } = await app.team({ scopes: ['PROXY_FEEDS', 'HONEYPOT_HTTP_STREAM'], maxStreams: 30 });
    assert.equal((await client.stream('StreamProxies').status).code, status.UNAUTHENTICATED);
    const denied = await client.stream('StreamProxies', key).status;
    assert.equal(denied.code, status.PERMISSION_DENIED);
    assert.match(denied.details, /PROXY_FIREHOSE/);
    // The connection bucket holds 20 tokens (0.5/s): 20 opens pass, the 21st is rate limited.
    const open = [];
    for (let i = 0; i < 20; i++) {
      const s = client.stream('StreamHoneypotHTTP', key);
      open.push(s);
      const st = await Promise.race([s.status, sleep(30).then(() => undefined)]);
      if (st) assert.notEqual(st.code, status.RESOURCE_EXHAUSTED, `open ${i + 1}`);
    }
    const limited = await client.stream('StreamHoneypotHTTP', key).status;
    assert.equal(limited.code, status.RESOURCE_EXHAUSTED);
    assert.match(limited.details, /stream bucket/);
    assert.equal(limited.metadata.get('retry-after')[0], '2');
    assert.equal(limited.metadata.get('ratelimit-remaining')[0], '0');
    for (const s of open) s.cancel();
  });
});

describe('gRPC streams at shutdown', () => {
  it('should end open gRPC and HTTP streams cleanly when the app closes', async (t) => {
    const { app, client, httpPort } = await listening(t);
    const { key, orgId } = await app.team();
    const grpc = client.stream('StreamTorrents', key);
    const http = await openStream(httpPort, '/api/v4/feeds/torrents/stream', key);
    await until(async () => (await app.stores.slots.count(orgId)) === 2);
    await app.close();
    assert.equal((await grpc.status).code, status.OK);
    assert.equal(await http.ended, 'end');
  });
});
