import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { StreamSlots } from '../../../src/modules/feeds/stream-slots.ts';
import { RedisUnavailableError } from '../../../src/storage/distributed/redis-client.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { openStream } from '../../helpers/stream-client.ts';

const down = () => new RedisUnavailableError(new Error('Connection is closed.'));

/** A GET over a real socket, so the lookup fast path (which inject() bypasses) answers it. */
function getOverSocket(port: number, path: string, key: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers: { 'x-api-key': key } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('the shared rate-limit and stream-slot store unavailable', () => {
  it('should answer 503 with Retry-After, not 500, when a team bucket cannot be taken', async (t) => {
    const app = await buildTestApp(t, {}, {}, (made) => ({ ...made, limiter: { take: () => Promise.reject(down()) } }));
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.http.server.address() as { port: number }).port;
    const { key } = await app.team();
    for (const url of ['/api/v4/account/me', '/api/v4/lookup/domain/example.com']) {
      const res = await app.http.inject({ url, headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 503, url);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.headers['retry-after'], '5');
      assert.match(res.json().detail, /shared state store is unavailable/);
    }
    const fast = await getOverSocket(port, '/api/v4/lookup/ip/8.8.8.8', key);
    assert.equal(fast.status, 503, 'the lookup fast path answers the same');
    assert.equal(fast.headers['retry-after'], '5');
    assert.match(fast.body.detail, /REDIS_UNAVAILABLE/);
  });

  it('should answer 503 with Retry-After when a stream slot cannot be taken', async (t) => {
    const slots: StreamSlots = {
      ttlMs: 30_000,
      acquire: () => Promise.reject(down()),
      renew: () => Promise.reject(down()),
      release: () => Promise.reject(down()),
      count: () => Promise.reject(down()),
    };
    const app = await buildTestApp(t, {}, {}, (made) => ({ ...made, slots }));
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.http.server.address() as { port: number }).port;
    const { key } = await app.team();
    const s = await openStream(port, '/api/v4/feeds/proxies/stream', key);
    assert.equal(s.status, 503);
    assert.equal(s.headers['content-type'], 'application/problem+json');
    assert.equal(s.headers['retry-after'], '5');
  });
});
