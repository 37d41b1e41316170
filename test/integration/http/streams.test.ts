import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FEED_LIST, FEEDS, type FeedId } from '../../../src/modules/feeds/feed-catalog.ts';
import type { Scope } from '../../../src/modules/accounts/scopes.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { MemoryStreamSlots } from '../../../src/storage/embedded/memory-stream-slots.ts';

async function listening(
  t: TestContext,
  env: Record<string, string> = {},
  stores?: Parameters<typeof buildTestApp>[3],
): Promise<{ app: TestApp; port: number }> {
  const app = await buildTestApp(t, {}, env, stores);
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.http.server.address() as { port: number }).port };
}

const ingest = (app: TestApp, feed: FeedId, values: unknown[]) =>
  app.services.ingest.ingest(FEEDS[feed], [values.map((value, i) => ({ n: i + 1, value }))]);

const until = async (cond: () => Promise<boolean> | boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
};

describe('GET /api/v4/feeds/{S}/stream', () => {
  it('should stream every feed as NDJSON in its own timestamp unit, records in publish order', async (t) => {
    const { app, port } = await listening(t);
    const { key } = await app.team({ maxStreams: 20 });
    for (const feed of FEED_LIST) {
      const s = await openStream(port, `/api/v4/feeds/${feed.segment}/stream`, key);
      assert.equal(s.status, 200, feed.id);
      assert.equal(s.headers['content-type'], 'application/x-ndjson');
      assert.equal(s.headers['ratelimit-limit'], '20');
      assert.ok(s.headers['x-request-id']);
      const base = sampleRecords(app.clock.now())[feed.id];
      const records = [1, 2, 3].map((k) => ({ ...base, timestamp: (base.timestamp as number) - k }));
      const summary = await ingest(app, feed.id, records);
      assert.equal(summary.accepted, 3, JSON.stringify(summary.errors));
      const got = (await s.records(3)) as Array<{ timestamp: number }>;
      assert.deepEqual(
        got.map((r) => r.timestamp),
        records.map((r) => r.timestamp),
      );
      // Unit per feed: ms for the honeypot feeds, s otherwise (now is 2026: 13 vs 10 digits).
      assert.equal(String(got[0]!.timestamp).length, feed.unit === 'ms' ? 13 : 10, feed.id);
      s.close();
    }
  });

  it('should need the feed stream scope, not the export scope or another feed scope', async (t) => {
    const { app, port } = await listening(t);
    const { key } = await app.team({ scopes: ['PROXY_FEEDS', 'HONEYPOT_HTTP_STREAM'] as Scope[] });
    const denied = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(denied.status, 403);
    assert.equal(denied.headers['content-type'], 'application/problem+json');
    assert.match((denied.body as { detail: string }).detail, /PROXY_FIREHOSE/);
    const ok = await openStream(port, '/api/v4/feeds/helio/http/stream', key);
    assert.equal(ok.status, 200);
    ok.close();
    assert.equal((await openStream(port, '/api/v4/feeds/helio/http/stream')).status, 401);
  });

  it('should write an empty keepalive line when idle and close cleanly at the end of its lifetime', async (t) => {
    const { app, port } = await listening(t, { UMBRA_STREAM_KEEPALIVE_MS: '40', UMBRA_STREAM_LIFETIME_MS: '400' });
    const { key, orgId } = await app.team();
    const started = Date.now();
    const s = await openStream(port, '/api/v4/feeds/anonymizers/stream', key);
    assert.equal(s.status, 200);
    assert.equal(await s.ended, 'end', 'closed cleanly, not cut');
    const took = Date.now() - started;
    assert.ok(took >= 380 && took < 2000, `closed after ${took} ms`);
    assert.ok(s.lines.filter((l) => l === '').length >= 3, `keepalives: ${JSON.stringify(s.lines)}`);
    await until(async () => (await app.stores.slots.count(orgId)) === 0);
    const metrics = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(metrics, /umbra_streams_ended_total\{feed="anonymizers",reason="lifetime"\} 1/);
    assert.match(metrics, /umbra_streams_open\{feed="anonymizers"\} 0/);
  });

  it('should refuse a stream over the team allowance with 429 and Retry-After, and free slots when streams end', async (t) => {
    const { app, port } = await listening(t);
    const { key, orgId } = await app.team({ maxStreams: 2 });
    const other = await app.key(orgId, ['PROXY_FIREHOSE']);
    const a = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    const b = await openStream(port, '/api/v4/feeds/proxies/stream', other.key);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    const c = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(c.status, 429);
    assert.equal(c.headers['content-type'], 'application/problem+json');
    assert.match(c.headers['retry-after'] ?? '', /^\d+$/);
    assert.ok(c.headers['ratelimit-limit'], 'the connection bucket was taken first');
    assert.match((c.body as { detail: string }).detail, /2 concurrent streams/);
    a.close();
    await until(async () => (await app.stores.slots.count(orgId)) === 1);
    const d = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(d.status, 200);
    b.close();
    d.close();
    await until(async () => (await app.stores.slots.count(orgId)) === 0);
  });

  it('should take one token per stream open from the team connection bucket (0.5/s, burst 20)', async (t) => {
    const { app, port } = await listening(t);
    const { key, orgId } = await app.team({ maxStreams: 100 });
    for (let i = 0; i < 20; i++) {
      const s = await openStream(port, `/api/v4/feeds/${FEED_LIST[i % 8]!.segment}/stream`, key);
      assert.equal(s.status, 200, `open ${i + 1}`);
      assert.equal(s.headers['ratelimit-remaining'], String(19 - i));
      s.close();
    }
    const denied = await openStream(port, '/api/v4/feeds/ja4t/stream', key);
    assert.equal(denied.status, 429);
    assert.equal(denied.headers['retry-after'], '2');
    app.clock.advance(2000);
    const again = await openStream(port, '/api/v4/feeds/ja4t/stream', key);
    assert.equal(again.status, 200);
    again.close();
    await until(async () => (await app.stores.slots.count(orgId)) === 0);
  });

  it('should end a stream cleanly when it loses its slot lease, counted as lease_lost', async (t) => {
    // A 60 ms lease is renewed every 20 ms; its expiry follows the app's manual clock.
    const { app, port } = await listening(t, {}, (made, clock) => ({ ...made, slots: new MemoryStreamSlots({ ttlMs: 60, clock }) }));
    const { key, orgId } = await app.team({ maxStreams: 1 });
    const s = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(s.status, 200);
    // The node stalled past the TTL: its lease lapsed, and another node's stream took the team's one slot.
    app.clock.advance(60);
    assert.ok(await app.stores.slots.acquire(orgId, 1));
    assert.equal(await s.ended, 'end', 'closed cleanly, so the client reconnects');
    assert.equal(await app.stores.slots.count(orgId), 1, 'the team holds its allowance, not one more');
    const metrics = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(metrics, /umbra_streams_ended_total\{feed="proxies",reason="lease_lost"\} 1/);
  });

  it('should answer 503 when the streaming backend is down, and end open streams', async (t) => {
    const { app, port } = await listening(t);
    const { key } = await app.team();
    const open = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    await app.stores.bus.close();
    assert.equal(await open.ended, 'end');
    const s = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(s.status, 503);
    assert.equal(s.headers['content-type'], 'application/problem+json');
    assert.match(s.headers['retry-after'] ?? '', /^\d+$/);
  });

  it('should disconnect a consumer that stops reading, without holding back the others', async (t) => {
    const { app, port } = await listening(t, { UMBRA_STREAM_BUFFER: '200' });
    const { key, orgId } = await app.team();
    const slow = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    const fast = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    slow.pause();
    // Loopback receive buffers here can hold 32 MB: publish until the server cuts the paused consumer
    // off (its stream slot is freed while the reading consumer keeps its own).
    const padding = 'x'.repeat(16_000);
    let total = 0;
    while ((await app.stores.slots.count(orgId)) === 2 && total < 10_000) {
      const batch = Array.from({ length: 100 }, (_, k) => ({
        record: { timestamp: total + k },
        line: JSON.stringify({ n: total + k, padding }),
      }));
      await app.stores.bus.publish('proxies', batch);
      total += 100;
      // The reading consumer reads as fast as the server sends, but it shares this process: on a loaded
      // machine the publisher could outrun it past its 200-record buffer. It is kept within 100 records,
      // as a real reader on its own CPU would be; the paused one falls behind all the same.
      await fast.records(total - 100, 10_000);
      await sleep(2);
    }
    const got = (await fast.records(total, 20_000)) as Array<{ n: number }>;
    assert.deepEqual(
      got.map((r) => r.n),
      [...Array(total).keys()],
      'the reading consumer got everything, in order',
    );
    assert.equal(await app.stores.slots.count(orgId), 1, 'the slow consumer was disconnected');
    slow.res.resume();
    assert.equal(await slow.ended, 'aborted', 'its response was cut, not ended cleanly');
    fast.close();
    await until(async () => (await app.stores.slots.count(orgId)) === 0);
  });
});
