import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite, type SqliteDb } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { runRollup } from './daily-rollup-job.ts';
import type { ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import { recoverPublishes } from './publish-recovery.ts';
import type { ObjectStore } from './object-store.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import { filesUnder } from '../../storage/contract/object-store.contract.ts';

const D0 = Date.UTC(2026, 10, 21); // 2026-11-21 00:00 UTC
const rec = (tsSec: number, i: number) => ({
  ip: `192.0.2.${i % 256}`,
  provider: 'p',
  type: 'vpn',
  timestamp: tsSec,
  country_code: 'NL',
  asn: 3_000_000_000 + i,
});

async function bytesOf(store: ObjectStore, key: string): Promise<Buffer> {
  const r = await store.get(key);
  assert.ok(r, `object ${key} exists`);
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('export jobs', () => {
  let dir: string;
  let db: SqliteDb;
  let deps: ExportJobDeps & { store: FsObjectStore; catalog: SqliteSnapshotCatalog; feedLog: FileFeedLog; clock: ManualClock };
  /** proxies records by hour start: 5 per hour over 2026-11-21 plus 2 hours of the 22nd. */
  const byHour = new Map<number, object[]>();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-jobs-'));
    db = openSqlite(':memory:');
    const clock = new ManualClock(D0 + 26 * HOUR_MS);
    deps = {
      feedLog: new FileFeedLog(join(dir, 'log')),
      store: new FsObjectStore({ dataDir: dir, clock }),
      catalog: new SqliteSnapshotCatalog(db),
      writer: await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 }),
      clock,
      workDir: join(dir, 'work'),
    };
    byHour.clear();
    let i = 0;
    for (let h = 0; h < 26; h++) {
      const start = D0 + h * HOUR_MS;
      const rs = Array.from({ length: 5 }, () => rec(start / 1000 + (i % 3600), i++));
      byHour.set(start, rs);
      await deps.feedLog.append(
        'proxies',
        rs.map((r) => ({ timeMs: r.timestamp * 1000, line: JSON.stringify(r) })),
      );
    }
  });
  afterEach(async () => {
    deps.writer.close();
    await deps.feedLog.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectRows = (records: object[]) =>
    records.map((r) => ({
      ...r,
      timestamp: BigInt((r as { timestamp: number }).timestamp),
      asn: BigInt((r as { asn: number }).asn),
      variant: null,
      simulated: null,
    }));

  it('should snapshot one hour to its latest key, with a checksum of the stored bytes, idempotently', async () => {
    const h5 = D0 + 5 * HOUR_MS;
    const snap = await runHourly(deps, 'proxies', h5);
    assert.deepEqual(
      { key: snap.key, date: snap.date, hour: snap.hour, rows: snap.rows },
      { key: 'proxies/latest/05_proxies.parquet', date: '2026-11-21', hour: 5, rows: 5 },
    );
    const bytes = await bytesOf(deps.store, snap.key);
    assert.equal(snap.checksum, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(snap.size, bytes.length);
    const pq = await readParquet(bytes);
    assert.equal(pq.numRows, snap.rows);
    assert.deepEqual(pq.rows, expectRows(byHour.get(h5)!));
    assert.deepEqual(await deps.catalog.latestHourly('proxies'), snap);

    deps.clock.advance(60_000);
    const again = await runHourly(deps, 'proxies', h5);
    assert.equal(again.checksum, snap.checksum, 'same bytes on rerun');
    assert.equal((await deps.catalog.hourlyOf('proxies', '2026-11-21')).length, 1);
    await assert.rejects(runHourly(deps, 'proxies', h5 + 1));
  });

  it('should write a zero-row snapshot for an hour without records', async () => {
    const snap = await runHourly(deps, 'torrents', D0);
    assert.equal(snap.rows, 0);
    assert.equal((await readParquet(await bytesOf(deps.store, snap.key))).numRows, 0);
  });

  it('should roll a day into its daily file with every row, then delete that day hourly rows and objects only', async () => {
    for (let h = 0; h < 24; h++) await runHourly(deps, 'proxies', D0 + h * HOUR_MS);
    // A late record for 10:00 arrives after that hour was snapshotted: the rollup still has it.
    const late = rec((D0 + 10 * HOUR_MS) / 1000 + 7, 9999);
    await deps.feedLog.append('proxies', [{ timeMs: late.timestamp * 1000, line: JSON.stringify(late) }]);
    const today0 = await runHourly(deps, 'proxies', D0 + 24 * HOUR_MS);

    const daily = await runRollup(deps, 'proxies', '2026-11-21');
    assert.equal(daily.key, 'proxies/2026/11/21/proxies.parquet');
    const all = [...Array(24).keys()].flatMap((h) => byHour.get(D0 + h * HOUR_MS)!);
    all.splice(all.findIndex((r) => r === byHour.get(D0 + 10 * HOUR_MS)!.at(-1)) + 1, 0, late);
    const bytes = await bytesOf(deps.store, daily.key);
    assert.equal(daily.checksum, createHash('sha256').update(bytes).digest('hex'));
    const pq = await readParquet(bytes);
    assert.equal(pq.numRows, 24 * 5 + 1);
    assert.deepEqual(pq.rows, expectRows(all));
    assert.deepEqual(await deps.catalog.rollupState('proxies', '2026-11-21'), { state: 'done', updatedAt: deps.clock.now() / 1000 });
    assert.deepEqual(await deps.catalog.hourlyOf('proxies', '2026-11-21'), []);
    // Today's hour 00 shares the key of yesterday's hour 00 and survives the cleanup.
    assert.deepEqual(await deps.store.list('proxies/'), ['proxies/2026/11/21/proxies.parquet', 'proxies/latest/00_proxies.parquet']);
    assert.deepEqual(await deps.catalog.latestHourly('proxies'), today0);
    const again = await runRollup(deps, 'proxies', '2026-11-21');
    assert.equal(again.checksum, daily.checksum);
    await assert.rejects(runHourly(deps, 'proxies', D0 + 3 * HOUR_MS), /already rolled up/);
  });

  it('should keep the hour listed through a crash between upload and catalog write, settle it on recovery, and complete on rerun', async () => {
    const h3 = D0 + 3 * HOUR_MS;
    const first = await runHourly(deps, 'proxies', h3);
    const catalog = deps.catalog;
    // A late record, so the rerun uploads other bytes; then the catalog step fails as a crash would.
    const late = rec(h3 / 1000 + 7, 999);
    await deps.feedLog.append('proxies', [{ timeMs: late.timestamp * 1000, line: JSON.stringify(late) }]);
    const crashing = Object.create(catalog) as SqliteSnapshotCatalog;
    crashing.completePublish = async () => {
      throw new Error('crash');
    };
    await assert.rejects(runHourly({ ...deps, catalog: crashing }, 'proxies', h3), /crash/);
    assert.deepEqual(await catalog.get('proxies', '2026-11-21', 3), first, 'the old row stays listed until the new one replaces it');
    assert.deepEqual(readdirSync(deps.workDir), [], 'no temp parquet left behind');
    assert.deepEqual(filesUnder(join(dir, 'exports', '.tmp')), []);
    const stored = createHash('sha256')
      .update(await bytesOf(deps.store, first.key))
      .digest('hex');
    const recovered = await recoverPublishes(deps);
    assert.deepEqual(
      recovered.completed.map((s) => s.checksum),
      [stored],
      'the finished upload gets its row',
    );
    assert.equal((await catalog.get('proxies', '2026-11-21', 3))?.rows, 6);
    const rerun = await runHourly(deps, 'proxies', h3);
    assert.equal(rerun.checksum, stored);

    // Rollup crashes after its daily row, before `done`: the rerun redoes it, no row lost or doubled.
    const crashDone = Object.create(catalog) as SqliteSnapshotCatalog;
    crashDone.setRollupState = async (f, d, s, at) => {
      if (s === 'done') throw new Error('crash');
      return catalog.setRollupState(f, d, s, at);
    };
    await assert.rejects(runRollup({ ...deps, catalog: crashDone }, 'proxies', '2026-11-21'), /crash/);
    assert.equal((await catalog.rollupState('proxies', '2026-11-21'))?.state, 'assembling');
    assert.ok(await catalog.get('proxies', '2026-11-21', 3), 'hours stay downloadable while assembling');
    const daily = await runRollup(deps, 'proxies', '2026-11-21');
    assert.equal((await readParquet(await bytesOf(deps.store, daily.key))).numRows, 121, "the day's 120 records and the late one");
    assert.equal(await catalog.get('proxies', '2026-11-21', 3), undefined);
  });
});
