import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { AppError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';

/** A log sink that keeps every line written. */
function capture(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, sink };
}

describe('request logging', () => {
  it('should log one JSON line per request with its request id and never the API key', async (t) => {
    const { lines, sink } = capture();
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

  it('should log a refusal for an unavailable engine as a warning without a stack, and a bug as an error with one', async (t) => {
    const { lines, sink } = capture();
    const app = await buildTestApp(t, { logger: createLogger('info', sink) });
    const { key } = await app.team();
    const accounts = app.stores.accounts;
    const original = accounts.findKeyByHash.bind(accounts);
    let fault: Error = new AppError('UNAVAILABLE', 'PostgreSQL is unavailable (connection refused).');
    accounts.findKeyByHash = () => Promise.reject(fault);
    const unavailable = await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key, 'x-request-id': 'req-503' } });
    fault = new TypeError("Cannot read properties of undefined (reading 'teamId')");
    const bug = await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key, 'x-request-id': 'req-500' } });
    accounts.findKeyByHash = original;
    assert.deepEqual([unavailable.statusCode, bug.statusCode], [503, 500]);
    const entries = lines.map((l) => JSON.parse(l));
    const refused = entries.filter((e) => e.reqId === 'req-503' && e.level >= 40 && !('status' in e));
    assert.deepEqual(
      refused.map((e) => [e.level, e.msg, e.code, e.detail, 'err' in e]),
      [[40, 'request refused', 'UNAVAILABLE', 'PostgreSQL is unavailable (connection refused).', false]],
    );
    const failed = entries.filter((e) => e.reqId === 'req-500' && e.level >= 40 && !('status' in e));
    assert.equal(failed.length, 1);
    assert.equal(failed[0].level, 50);
    assert.match(failed[0].err.stack, /TypeError: Cannot read properties/);
  });
});
