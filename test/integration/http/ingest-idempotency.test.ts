import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/errors.ts';
import { hourOf } from '../../../src/lib/time.ts';
import type { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';

const TOKEN = 'operator-token-for-tests-0123456789';
const PROBLEM = 'application/problem+json';

const post = (app: TestApp, feed: string, body: string, headers: Record<string, string> = {}) =>
  app.http.inject({
    method: 'POST',
    url: `/internal/v1/ingest/${feed}`,
    payload: body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', ...headers },
  });

async function logged(app: TestApp, feed: keyof typeof FEEDS): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const line of app.stores.feedLog.readHour(feed, hourOf(app.clock.now()))) out.push(JSON.parse(line));
  return out;
}

/** n proxy records with distinct public addresses, and one bad line at record 3. */
function proxies(app: TestApp, n: number): string {
  const good = sampleRecords(app.clock.now()).proxies;
  const lines = Array.from({ length: n }, (_, i) =>
    i === 2 ? '{"ip": "not an address"}' : JSON.stringify({ ...good, ip: `1.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }),
  );
  return `${lines.join('\n')}\n`;
}

describe('ingestion with an Idempotency-Key', () => {
  it('should store a batch once when it is resent under its key, and answer the resend as the first time', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const body = proxies(app, 50);
    const first = await post(app, 'proxies', body, { 'idempotency-key': 'sensor-7/2026-11-25T10' });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(first.json().accepted, 49);
    assert.equal(first.json().rejected, 1);

    const again = await post(app, 'proxies', body, { 'idempotency-key': 'sensor-7/2026-11-25T10' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), { ...first.json(), replayed: true }, 'the first answer, marked as replayed');
    assert.equal((await logged(app, 'proxies')).length, 49, 'nothing stored by the resend');

    // Without a key, the rule is the plain one: every request's records are new observations.
    await post(app, 'proxies', body);
    await post(app, 'proxies', body);
    assert.equal((await logged(app, 'proxies')).length, 49 * 3);
  });

  it('should refuse a key used for other records or another feed (422), storing nothing', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    assert.equal((await post(app, 'proxies', proxies(app, 5), { 'idempotency-key': 'k1' })).statusCode, 200);
    const other = await post(app, 'proxies', proxies(app, 6), { 'idempotency-key': 'k1' });
    assert.equal(other.statusCode, 422, other.body);
    assert.equal(other.headers['content-type'], PROBLEM);
    assert.match(other.json().detail, /used for other records; nothing was stored/);
    const feed = await post(app, 'anonymizers', `${JSON.stringify(sampleRecords(app.clock.now()).anonymizers)}\n`, {
      'idempotency-key': 'k1',
    });
    assert.equal(feed.statusCode, 422, feed.body);
    assert.match(feed.json().detail, /used for the proxies feed/);
    assert.equal((await logged(app, 'proxies')).length, 4);
    assert.equal((await logged(app, 'anonymizers')).length, 0);
  });

  it('should answer 409 with Retry-After while another ingest holds the key', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const now = app.clock.now();
    assert.equal((await app.stores.ingestKeys.claim('busy-key', 'proxies', 'another-node', now, 30_000)).kind, 'claimed');
    const res = await post(app, 'proxies', proxies(app, 5), { 'idempotency-key': 'busy-key' });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.equal(res.headers['retry-after'], '30');
    assert.equal((await logged(app, 'proxies')).length, 0);
  });

  it('should refuse a malformed key with 400 naming the header', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    for (const key of ['has space', 'x'.repeat(256), 'é']) {
      const res = await post(app, 'proxies', proxies(app, 5), { 'idempotency-key': key });
      assert.equal(res.statusCode, 400, key);
      assert.deepEqual(Object.keys(res.json().errors), ['Idempotency-Key']);
    }
    assert.equal((await logged(app, 'proxies')).length, 0);
  });

  it('should, after a storage fault stopped an ingest midway, store only the rest when it is resent under its key', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const body = proxies(app, 12_000);
    // The disk fills after the first append (5,000 records): the 507 says what was stored.
    const log = app.stores.feedLog;
    const append = log.append.bind(log);
    let appends = 0;
    log.append = (feed, entries) => {
      appends++;
      if (appends === 2) return Promise.reject(new AppError('INSUFFICIENT_STORAGE', 'The disk is full.'));
      return append(feed, entries);
    };
    const stopped = await post(app, 'proxies', body, { 'idempotency-key': 'batch-42' });
    assert.equal(stopped.statusCode, 507, stopped.body);
    const through = stopped.json().stored_through_record as number;
    assert.equal(stopped.json().accepted, through - 1, 'every valid record up to stored_through_record, less the bad one');
    assert.ok(through > 0 && through < 12_000, `stored through ${through}`);

    const resent = await post(app, 'proxies', body, { 'idempotency-key': 'batch-42' });
    assert.equal(resent.statusCode, 200, resent.body);
    assert.equal(resent.json().accepted, 11_999, 'the answer covers the whole batch, both attempts');
    assert.equal(resent.json().rejected, 1, 'the bad record counted once');
    assert.equal(resent.json().errors.length, 1);
    const stored = await logged(app, 'proxies');
    assert.equal(stored.length, 11_999, 'each record stored once');
    assert.equal(new Set(stored.map((r) => r.ip)).size, 11_999);

    const third = await post(app, 'proxies', body, { 'idempotency-key': 'batch-42' });
    assert.equal(third.headers['idempotent-replayed'], 'true');
    assert.deepEqual(third.json(), { ...resent.json(), replayed: true });
  });
});
