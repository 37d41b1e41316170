import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runRollup } from '../../../src/modules/exports/daily-rollup-job.ts';
import { runHourly } from '../../../src/modules/exports/hourly-snapshot-job.ts';
import { readParquet } from '../../helpers/parquet-test-reader.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import type { Scope } from '../../../src/modules/accounts/scopes.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const H = 3_600_000;
const DAY = 24 * H;
const PROBLEM = 'application/problem+json';
// 2026-11-22 12:00 UTC, the test clock's start.
const NOW = Date.UTC(2026, 10, 22, 12);

async function setup(t: TestContext, scopes?: Scope[]) {
  const app = await buildTestApp(t);
  const { key } = await app.team({ scopes });
  const jobs = await exportJobsFor(t, app);
  const get = (path: string, k: string | undefined = key) =>
    app.http.inject({ url: `/api/v4/feeds/anonymizers${path}`, headers: k ? { 'x-api-key': k } : {} });
  return { app, key, jobs, get };
}

/** Ingests n anonymizer records stamped inside the hour starting at hourMs. */
async function records(app: TestApp, hourMs: number, n: number): Promise<void> {
  const base = sampleRecords(NOW).anonymizers;
  const items = Array.from({ length: n }, (_, i) => ({
    n: i + 1,
    value: { ...base, range_start: `10.0.${i}.0`, range_end: `10.0.${i}.255`, timestamp: Math.floor((hourMs + i * 1000) / 1000) },
  }));
  const s = await app.services.ingest.ingest(FEEDS.anonymizers, [items]);
  assert.equal(s.accepted, n, JSON.stringify(s.errors));
}

describe('feed exports over HTTP', () => {
  it('should list newest first, page with a signed cursor, and refuse bad limits and cursors', async (t) => {
    const { app, jobs, get } = await setup(t);
    const day0 = Date.UTC(2026, 10, 20);
    await records(app, day0 + 5 * H, 3);
    await runRollup(jobs, 'anonymizers', '2026-11-20');
    for (const h of [0, 1, 2, 3]) {
      await records(app, Date.UTC(2026, 10, 22) + h * H, h + 1);
      await runHourly(jobs, 'anonymizers', Date.UTC(2026, 10, 22) + h * H);
    }
    const all = (await get('/export')).json();
    assert.equal(all.stream, 'anonymizers');
    assert.deepEqual(
      all.feeds.map((i: { id: string }) => i.id),
      ['2026-11-22/3', '2026-11-22/2', '2026-11-22/1', '2026-11-22/0', '2026-11-20'],
    );
    assert.equal(all.next_cursor, undefined, 'absent, not null, on the last page');
    const first = all.feeds[0];
    assert.deepEqual(Object.keys(first).sort(), [
      'checksum',
      'created_at',
      'date',
      'download_path',
      'hour',
      'id',
      'kind',
      'row_count',
      'size_bytes',
    ]);
    assert.equal(first.kind, 'hourly');
    assert.equal(first.row_count, 4);
    assert.equal(first.download_path, '/api/v4/feeds/anonymizers/export/2026-11-22/3');
    assert.equal(all.feeds[4].kind, 'daily');
    assert.equal(all.feeds[4].hour, undefined);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await get(`/export?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json();
      assert.ok(page.feeds.length <= 2);
      seen.push(...page.feeds.map((i: { id: string }) => i.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.feeds.map((i: { id: string }) => i.id),
    );
    assert.equal((await get('/export?limit=100000')).json().feeds.length, 5, 'larger limits are clamped, not refused');
    assert.equal((await app.http.inject({ url: '/health' })).json().exports.snapshots, 5, 'health counts the snapshots');
    assert.match((await app.http.inject({ url: '/metrics' })).body, /umbra_export_snapshots\{feed="anonymizers",kind="hourly"\} 4/);

    for (const bad of ['0', '-1', 'abc', '1.5', '']) {
      const res = await get(`/export?limit=${bad}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.headers['content-type'], PROBLEM);
      assert.deepEqual(res.json().errors, { limit: ['must be an integer of at least 1'] }, bad);
    }
    const cur = (await get('/export?limit=1')).json().next_cursor as string;
    const tampered = `${cur.slice(0, 5)}${cur[5] === 'A' ? 'B' : 'A'}${cur.slice(6)}`;
    for (const c of ['nonsense', tampered]) assert.equal((await get(`/export?cursor=${encodeURIComponent(c)}`)).statusCode, 400);
    const otherFeed = await app.http.inject({
      url: `/api/v4/feeds/proxies/export?cursor=${encodeURIComponent(cur)}`,
      headers: { 'x-api-key': (await app.team()).key },
    });
    assert.equal(otherFeed.statusCode, 400, 'a cursor is bound to its feed');
  });

  it('should redirect downloads to a 24-hour URL that serves exactly the checksummed bytes without a key', async (t) => {
    const { app, jobs, get } = await setup(t);
    await records(app, Date.UTC(2026, 10, 21) + 7 * H, 5);
    await runRollup(jobs, 'anonymizers', '2026-11-21');
    const res = await get('/export/2026-11-21');
    assert.equal(res.statusCode, 307);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    const location = res.headers.location as string;
    assert.ok(location);
    const meta = (await get('/export/2026-11-21/meta')).json();
    assert.deepEqual(Object.keys(meta).sort(), [
      'checksum',
      'created_at',
      'date',
      'format',
      'id',
      'kind',
      'rows',
      'schema',
      'size',
      'stream',
    ]);
    assert.equal(meta.date, Date.UTC(2026, 10, 21) / 1000);
    assert.equal(meta.kind, 'daily');
    const file = await app.http.inject({ url: location });
    assert.equal(file.statusCode, 200);
    assert.equal(createHash('sha256').update(file.rawPayload).digest('hex'), meta.checksum);
    assert.equal(file.rawPayload.length, meta.size);
    const parquet = await readParquet(new Uint8Array(file.rawPayload));
    assert.equal(parquet.numRows, meta.rows);
    assert.equal(meta.rows, 5);
    assert.deepEqual(
      parquet.fields.map((f) => f.name),
      meta.schema.fields.map((f: { name: string }) => f.name),
    );
    assert.deepEqual(
      parquet.fields.map((f) => f.type),
      meta.schema.fields.map((f: { type: string }) => f.type),
    );

    const sig = /sig=([^&]+)/.exec(location)![1]!;
    const forged = location.replace(sig, sig.slice(0, -2) + (sig.endsWith('AA') ? 'BB' : 'AA'));
    const refused = await app.http.inject({ url: forged });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.headers['content-type'], PROBLEM);
    assert.equal(refused.rawPayload.includes(Buffer.from('PAR1')), false, 'not a byte of the file');
    app.clock.advance(DAY - 1000);
    assert.equal((await app.http.inject({ url: location })).statusCode, 200, 'still valid just before 24 hours');
    app.clock.advance(2000);
    const expired = await app.http.inject({ url: location });
    assert.equal(expired.statusCode, 403);
    assert.match(expired.json().detail, /expired/);
  });

  it('should apply the hourly rules: latest, padded hours, today-only metadata, rolled-up hours and 404s', async (t) => {
    const { app, jobs, get } = await setup(t);
    const today = Date.UTC(2026, 10, 22);
    const yesterday = today - DAY;
    await records(app, yesterday + 9 * H, 2);
    await runHourly(jobs, 'anonymizers', yesterday + 9 * H);
    await records(app, today + 7 * H, 3);
    await runHourly(jobs, 'anonymizers', today + 7 * H);

    const latest = await get('/export/latest/meta');
    assert.equal(latest.json().id, '2026-11-22/7');
    assert.equal((await get('/export/latest')).statusCode, 307);
    for (const h of ['7', '07']) {
      assert.equal((await get(`/export/2026-11-22/${h}`)).statusCode, 307, h);
      const m = (await get(`/export/2026-11-22/${h}/meta`)).json();
      assert.equal(m.hour, 7);
      assert.equal(m.kind, 'hourly');
      assert.equal(m.rows, 3);
    }
    assert.equal((await get('/export/latest/7/meta')).json().id, '2026-11-22/7');
    // Yesterday's hours: downloadable until the rollup, but no hourly metadata (not the current UTC date).
    assert.equal((await get('/export/2026-11-21/9')).statusCode, 307);
    const oldMeta = await get('/export/2026-11-21/9/meta');
    assert.equal(oldMeta.statusCode, 400);
    assert.ok(oldMeta.json().errors.date);
    await runRollup(jobs, 'anonymizers', '2026-11-21');
    const rolled = await get('/export/2026-11-21/9');
    assert.equal(rolled.statusCode, 400);
    assert.match(rolled.json().detail, /\/api\/v4\/feeds\/anonymizers\/export\/2026-11-21\b/);
    assert.equal((await get('/export/2026-11-21')).statusCode, 307);

    for (const [path, field] of [
      ['/export/2026-11-22/24', 'hour'],
      ['/export/2026-11-22/-1', 'hour'],
      ['/export/2026-11-22/007', 'hour'],
      ['/export/22-11-2026', 'date'],
      ['/export/2026-02-30', 'date'],
      ['/export/2026-13-01/meta', 'date'],
      ['/export/yesterday/3', 'date'],
    ] as const) {
      const res = await get(path);
      assert.equal(res.statusCode, 400, path);
      assert.ok(res.json().errors[field], `${path}: ${res.body}`);
    }
    const missing = await get('/export/2026-11-22/8');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], PROBLEM);
    assert.equal((await get('/export/2026-11-22/8/meta')).statusCode, 404);
    assert.equal((await get('/export/2026-10-01')).statusCode, 404);
    assert.equal((await get('/export/2026-10-01')).headers['retry-after'], undefined);
  });

  it('should answer 404 with Retry-After while yesterday is being rolled up, its hours still downloadable', async (t) => {
    const { app, jobs, get } = await setup(t);
    app.clock.set(Date.UTC(2026, 10, 23, 0, 10)); // 00:10 UTC: yesterday's rollup has not run yet
    const day = Date.UTC(2026, 10, 22);
    await records(app, day + 22 * H, 2);
    await runHourly(jobs, 'anonymizers', day + 22 * H);
    for (const path of ['/export/2026-11-22', '/export/2026-11-22/meta']) {
      const res = await get(path);
      assert.equal(res.statusCode, 404, path);
      assert.match(res.headers['retry-after'] as string, /^\d+$/);
      assert.match(res.json().detail, /being assembled/);
    }
    assert.equal((await get('/export/2026-11-22/22')).statusCode, 307, 'the hours stay downloadable');
    app.clock.set(Date.UTC(2026, 10, 23, 0, 31));
    await runRollup(jobs, 'anonymizers', '2026-11-22');
    assert.equal((await get('/export/2026-11-22')).statusCode, 307);
  });

  it('should need the feed export scope and take downloads from the shared download bucket', async (t) => {
    const { app, jobs, get } = await setup(t, ['ANONYMIZERS_STREAM', 'PROXY_FEEDS'] as Scope[]);
    assert.equal((await get('/export')).statusCode, 403);
    assert.equal((await get('/export', '')).statusCode, 401);
    const { key } = await app.team({ scopes: ['ANONYMIZERS_FEED', 'PROXY_FEEDS'] as Scope[] });
    await records(app, Date.UTC(2026, 10, 22) + 3 * H, 1);
    await runHourly(jobs, 'anonymizers', Date.UTC(2026, 10, 22) + 3 * H);
    let last: Awaited<ReturnType<typeof app.http.inject>> | undefined;
    for (let i = 0; i < 120; i++) {
      // Alternate feeds: the bucket is the team's, shared by all of them.
      last = await app.http.inject({
        url: i % 2 ? '/api/v4/feeds/anonymizers/export/latest' : '/api/v4/feeds/proxies/export/latest',
        headers: { 'x-api-key': key },
      });
      assert.notEqual(last.statusCode, 429, `request ${i + 1}`);
    }
    assert.equal(last!.headers['ratelimit-limit'], '120');
    const denied = await get('/export/latest', key);
    assert.equal(denied.statusCode, 429);
    assert.equal(denied.headers['retry-after'], '10');
    assert.equal((await get('/export', key)).statusCode, 200, 'list and metadata use the other bucket');
  });
});
