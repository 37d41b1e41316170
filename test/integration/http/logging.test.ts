import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/lib/logger.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';

describe('request logging', () => {
  it('should log one JSON line per request with its request id and never the API key', async (t) => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const app = await buildTestApp(t, { logger: createLogger('info', sink) });
    const { key } = await app.team();
    await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key, 'x-request-id': 'req-42' } });
    await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': `${key}x` } });
    const all = lines.join('\n');
    assert.doesNotMatch(all, new RegExp(key.slice(0, 18), 'i'), 'no part of the key is logged');
    const entries = lines.map((l) => JSON.parse(l));
    const first = entries.find((e) => e.reqId === 'req-42');
    assert.equal(first?.operation, 'lookup.ip');
    assert.equal(first?.status, 200);
    assert.equal(typeof first?.ms, 'number');
    assert.ok(entries.some((e) => e.status === 401));
  });
});
