import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config.ts';
import type { DownloadVia } from '../../../src/modules/exports/export-service.ts';
import { runHourly } from '../../../src/modules/exports/hourly-snapshot-job.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { S3ObjectStore } from '../../../src/storage/distributed/s3-object-store.ts';
import { createStores } from '../../../src/storage/index.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { uniqueTestName } from '../../helpers/engines.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { readParquet } from '../../helpers/parquet-test-reader.ts';
import { startS3Server, type TestS3 } from '../../helpers/s3-server.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const H = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12);
const TODAY = Date.UTC(2026, 10, 22);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let s3: TestS3;
before(async () => {
  s3 = await startS3Server();
});
after(() => s3.close());

/**
 * The app on the embedded stores but for its object store, an S3 bucket (s3rver): exports are written
 * there by the hourly job and downloaded as `via` says.
 */
async function setup(t: TestContext, via?: DownloadVia, endpoint = s3.endpoint) {
  const clock = new ManualClock(NOW);
  // The store signs with the real time: s3rver checks URLs against it.
  const objects = new S3ObjectStore({
    bucket: s3.bucket,
    endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    keyPrefix: uniqueTestName('app'),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-s3-dl-'));
  const stores = await createStores({ ...parseConfig({ UMBRA_DATA_DIR: dataDir }), sqliteFile: ':memory:' }, clock);
  const app = await buildTestApp(t, { clock, stores: { ...stores, objects }, exportDownloads: via });
  t.after(() => {
    objects.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const { key } = await app.team();
  const jobs = await exportJobsFor(t, app, clock);
  const api = (path: string) => app.http.inject({ url: `/api/v4/feeds/anonymizers${path}`, headers: { 'x-api-key': key } });
  const records = async (hourMs: number, n: number, from = 0) => {
    const base = sampleRecords(NOW).anonymizers;
    const items = Array.from({ length: n }, (_, i) => ({
      n: i + 1,
      value: {
        ...base,
        range_start: `10.1.${from + i}.0`,
        range_end: `10.1.${from + i}.255`,
        timestamp: Math.floor((hourMs + i * 1000) / 1000),
      },
    }));
    assert.equal((await app.services.ingest.ingest(FEEDS.anonymizers, [items])).accepted, n);
  };
  await records(TODAY + 3 * H, 6);
  return { app, api, jobs, records };
}

/** The app with hour 03 of today exported to S3, and that hour's metadata. */
async function exported(t: TestContext, via?: DownloadVia) {
  const s = await setup(t, via);
  await runHourly(s.jobs, 'anonymizers', TODAY + 3 * H);
  return { ...s, meta: (await s.api('/export/2026-11-22/3/meta')).json() };
}

describe('export downloads from an S3 object store, through the HTTP app', () => {
  it("should redirect to the bucket's own presigned URL (default when the store presigns), which serves the checksummed bytes", async (t) => {
    const { app, api, meta, jobs, records } = await exported(t);
    assert.equal(app.services.exports.downloadsVia, 'store');
    const res = await api('/export/2026-11-22/3');
    assert.equal(res.statusCode, 307);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    const location = res.headers.location as string;
    assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/`), location);
    assert.equal(new URL(location).searchParams.get('X-Amz-Expires'), '86400');
    // A customer's client: no key, nothing but the URL.
    const file = await fetch(location);
    assert.equal(file.status, 200);
    const bytes = Buffer.from(await file.arrayBuffer());
    assert.equal(sha(bytes), meta.checksum, 'the bytes are the ones the metadata names');
    assert.equal(bytes.length, meta.size);
    assert.equal((await readParquet(new Uint8Array(bytes))).numRows, 6);
    assert.equal(file.headers.get('content-disposition'), 'attachment; filename="03_anonymizers.parquet"');

    // A late record, the hour exported again: its key now holds other bytes. The URL issued before
    // still serves the bytes it named (never the new ones); a new download serves the new bytes.
    await records(TODAY + 3 * H, 1, 100);
    await runHourly(jobs, 'anonymizers', TODAY + 3 * H);
    const rerun = (await api('/export/2026-11-22/3/meta')).json();
    assert.notEqual(rerun.checksum, meta.checksum);
    const old = await fetch(location);
    assert.equal(old.status, 200);
    assert.equal(sha(Buffer.from(await old.arrayBuffer())), meta.checksum);
    const fresh = await fetch((await api('/export/2026-11-22/3')).headers.location as string);
    assert.equal(sha(Buffer.from(await fresh.arrayBuffer())), rerun.checksum);
    assert.equal(rerun.rows, 7);
  });

  it("should redirect to umbra's own signed URL when the operator chooses 'umbra', and serve the same bytes read from S3", async (t) => {
    const { app, api, meta } = await exported(t, 'umbra');
    assert.equal(app.services.exports.downloadsVia, 'umbra');
    const res = await api('/export/2026-11-22/3');
    assert.equal(res.statusCode, 307);
    const location = res.headers.location as string;
    assert.match(
      location,
      /^http:\/\/localhost:80\/downloads\?object=anonymizers%2Flatest%2F03_anonymizers\.parquet&sha256=[0-9a-f]{64}&expires=\d+&kid=[^&]+&sig=/,
    );
    const file = await app.http.inject({ url: location });
    assert.equal(file.statusCode, 200);
    assert.equal(sha(file.rawPayload), meta.checksum);
    assert.equal(file.headers.etag, `"${meta.checksum}"`);
    assert.equal(Number(file.headers['content-length']), meta.size);
    assert.equal(file.headers['content-type'], 'application/vnd.apache.parquet');
    // The route still refuses a URL whose checksum is not the one signed.
    const forged = location.replace(/sha256=[0-9a-f]{64}/, `sha256=${'0'.repeat(64)}`);
    assert.equal((await app.http.inject({ url: forged })).statusCode, 403);
  });

  it('should answer 503 with Retry-After, not hang, when S3 cannot be reached: the export job fails and the download route cannot read', async (t) => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as { port: number };
    await new Promise((r) => closed.close(r));
    const { app, api, jobs } = await setup(t, 'umbra', `http://127.0.0.1:${port}`);
    await assert.rejects(runHourly(jobs, 'anonymizers', TODAY + 3 * H), /object store/);
    // A row the catalog lists (its bytes in the bucket that cannot be reached now).
    const bytes = Buffer.from('PAR1 stored while S3 was up PAR1');
    await app.stores.snapshots.upsert({
      feed: 'anonymizers',
      kind: 'hourly',
      date: '2026-11-22',
      hour: 4,
      key: 'anonymizers/latest/04_anonymizers.parquet',
      size: bytes.length,
      rows: 1,
      checksum: sha(bytes),
      schema: { fields: [] },
      createdAt: NOW / 1000,
    });
    const res = await api('/export/2026-11-22/4');
    assert.equal(res.statusCode, 307, 'signing needs no request to S3');
    const t0 = performance.now();
    const file = await app.http.inject({ url: res.headers.location as string });
    assert.ok(performance.now() - t0 < 5_000);
    assert.equal(file.statusCode, 503);
    assert.equal(file.headers['content-type'], 'application/problem+json');
    assert.ok(Number(file.headers['retry-after']) >= 1);
    assert.match(file.json().detail, /object store is unavailable/);
  });
});
