import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config.ts';
import { runHourly } from '../../../src/modules/exports/hourly-snapshot-job.ts';
import type { ObjectStore } from '../../../src/modules/exports/object-store.ts';
import { readParquet } from '../../helpers/parquet-test-reader.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { createStores } from '../../../src/storage/index.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const H = 3_600_000;
const PROBLEM = 'application/problem+json';
const NOW = Date.UTC(2026, 10, 22, 12);
const TODAY = Date.UTC(2026, 10, 22);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * An app whose object store, once armed, replaces an object right after the download route has read
 * its metadata (`head` or `read`) and before the route sends a byte: the put of a rerun landing mid-request.
 */
async function setup(t: TestContext) {
  const clock = new ManualClock(NOW);
  let armed: { key: string; bytes: Buffer } | undefined;
  const replaceAfter = new Set(['head', 'read']);
  const wrap = (inner: ObjectStore): ObjectStore =>
    new Proxy(inner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        if (!replaceAfter.has(prop as string)) return v.bind(target);
        return async (key: string, ...rest: unknown[]) => {
          const out = await (v as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
          if (armed && armed.key === key) {
            const { bytes } = armed;
            armed = undefined;
            await target.putBytes(key, bytes, { sha256: sha(bytes), rows: 1 });
          }
          return out;
        };
      },
    });
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-dl-'));
  const stores = await createStores({ ...parseConfig({ UMBRA_DATA_DIR: dataDir }), sqliteFile: ':memory:' }, clock);
  const app = await buildTestApp(t, { clock, stores: { ...stores, objects: wrap(stores.objects) } });
  // After the app's own cleanup, which closes these stores.
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { key } = await app.team();
  const jobs = await exportJobsFor(t, app, clock);
  const api = (path: string) => app.http.inject({ url: `/api/v4/feeds/anonymizers${path}`, headers: { 'x-api-key': key } });
  /** The presigned URL a download of snapshot `id` redirects to. */
  const urlOf = async (id: string) => {
    const res = await api(`/export/${id}`);
    assert.equal(res.statusCode, 307, res.body);
    return res.headers.location as string;
  };
  const records = async (hourMs: number, n: number, from = 0) => {
    const base = sampleRecords(NOW).anonymizers;
    const items = Array.from({ length: n }, (_, i) => ({
      n: i + 1,
      value: {
        ...base,
        range_start: `10.0.${from + i}.0`,
        range_end: `10.0.${from + i}.255`,
        timestamp: Math.floor((hourMs + i * 1000) / 1000),
      },
    }));
    assert.equal((await app.services.ingest.ingest(FEEDS.anonymizers, [items])).accepted, n);
  };
  return { app, jobs, api, urlOf, records, arm: (k: string, bytes: Buffer) => void (armed = { key: k, bytes }) };
}

/** A refused download: the status, a problem body, and not a byte of any parquet file. */
async function refused(app: TestApp, url: string, status: number, why: string) {
  const res = await app.http.inject({ url });
  assert.equal(res.statusCode, status, `${why}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  assert.equal(res.headers['content-type'], PROBLEM, why);
  assert.equal(res.rawPayload.includes(Buffer.from('PAR1')), false, `${why}: not a byte of the file`);
}

const withParam = (url: string, name: string, value: string | undefined): string => {
  const u = new URL(url, 'http://x');
  if (value === undefined) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return `${u.pathname}?${u.searchParams.toString()}`;
};

describe('presigned export downloads', () => {
  it('should sign the checksum: a URL serves only the bytes it names, and one with the checksum removed, changed or any member tampered is refused', async (t) => {
    const { app, jobs, api, urlOf, records } = await setup(t);
    await records(TODAY + 3 * H, 3);
    await runHourly(jobs, 'anonymizers', TODAY + 3 * H);
    await records(TODAY + 4 * H, 4, 100);
    await runHourly(jobs, 'anonymizers', TODAY + 4 * H);
    const url = await urlOf('2026-11-22/3');
    const meta = (await api('/export/2026-11-22/3/meta')).json();
    const other = (await api('/export/2026-11-22/4/meta')).json();
    const served = await app.http.inject({ url });
    assert.equal(served.statusCode, 200);
    assert.equal(sha(served.rawPayload), meta.checksum, 'the bytes served are the ones the metadata names');
    assert.equal(served.headers.etag, `"${meta.checksum}"`);
    assert.equal((await readParquet(new Uint8Array(served.rawPayload))).numRows, 3);

    await refused(app, withParam(url, 'sha256', undefined), 403, 'checksum removed');
    await refused(app, withParam(url, 'sha256', other.checksum), 403, "checksum changed to another snapshot's");
    await refused(app, withParam(url, 'object', 'anonymizers/latest/04_anonymizers.parquet'), 403, 'key changed');
    const q = new URL(url, 'http://x').searchParams;
    await refused(app, withParam(url, 'expires', String(Number(q.get('expires')) + 60)), 403, 'expiry changed');
    await refused(app, withParam(url, 'kid', 'k9'), 403, 'key id changed');
    const sig = q.get('sig')!;
    await refused(app, withParam(url, 'sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)), 403, 'signature changed');
    for (const name of ['object', 'expires', 'kid', 'sig']) await refused(app, withParam(url, name, undefined), 403, `${name} removed`);
  });

  it('should refuse a URL issued before its key was replaced (404), with its checksum removed too (403), and serve the new URL', async (t) => {
    const { app, jobs, api, urlOf, records } = await setup(t);
    const yesterday = TODAY - 24 * H;
    // Yesterday's hour 5, then today's hour 5: the same key, other bytes (2 rows, then 40).
    await records(yesterday + 5 * H, 2);
    await runHourly(jobs, 'anonymizers', yesterday + 5 * H);
    const old = await urlOf('2026-11-21/5');
    assert.equal((await app.http.inject({ url: old })).statusCode, 200);
    await records(TODAY + 5 * H, 40);
    await runHourly(jobs, 'anonymizers', TODAY + 5 * H);
    await refused(app, old, 404, 'issued for the bytes the key held yesterday');
    await refused(app, withParam(old, 'sha256', undefined), 403, 'the old URL with its checksum removed');
    // A rerun of today's hour with a late record replaces the bytes again.
    const before = await urlOf('2026-11-22/5');
    await records(TODAY + 5 * H, 1, 200);
    await runHourly(jobs, 'anonymizers', TODAY + 5 * H);
    await refused(app, before, 404, 'issued before the rerun');
    const meta = (await api('/export/2026-11-22/5/meta')).json();
    const now = await app.http.inject({ url: await urlOf('2026-11-22/5') });
    assert.equal(now.statusCode, 200);
    assert.equal(sha(now.rawPayload), meta.checksum);
    assert.equal(meta.rows, 41);
  });

  it('should never serve the bytes of a put that replaces the object while the download is being answered', async (t) => {
    const { app, jobs, api, urlOf, records, arm } = await setup(t);
    await records(TODAY + 6 * H, 5);
    await runHourly(jobs, 'anonymizers', TODAY + 6 * H);
    const meta = (await api('/export/2026-11-22/6/meta')).json();
    const url = await urlOf('2026-11-22/6');
    arm('anonymizers/latest/06_anonymizers.parquet', Buffer.from('PAR1 the bytes of a rerun that landed mid-request PAR1'));
    const res = await app.http.inject({ url });
    // Either the bytes the URL names (read before the put) or a refusal; never the new bytes.
    if (res.statusCode === 200) assert.equal(sha(res.rawPayload), meta.checksum);
    else await refused(app, url, 404, 'after the replacement');
    assert.equal(res.statusCode, 200, 'the file opened before the put is served whole');
    await refused(app, url, 404, 'once the key holds the new bytes');
  });
});
