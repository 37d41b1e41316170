import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { DEFAULT_SCHEDULE, dueJobs, ExportScheduler, nextWakeMs, RETRY_MS, type DueJob, type FeedView } from './export-scheduler.ts';
import { EXPORT_LOCK, LocalJobLock } from './job-lock.ts';
import { ParquetWriter } from './parquet-writer.ts';
import type { RecoveryReport } from './publish-recovery.ts';
import type { Snapshot } from './snapshot-catalog.ts';

const D = Date.UTC(2026, 10, 22); // today 00:00 UTC
const MIN = 60_000;
const view = (v: Partial<FeedView> = {}): FeedView => ({ feed: 'proxies', rollupsDone: new Set(), datesWithData: new Set(), ...v });
const show = (jobs: DueJob[]) =>
  jobs.map((j) =>
    j.kind === 'rollup' ? `rollup ${j.feed} ${j.date}` : `hourly ${j.feed} ${new Date(j.hourStartMs).toISOString().slice(0, 13)}`,
  );

describe(dueJobs.name, () => {
  const done21 = new Set(['2026-11-21']);

  it('should make the previous hour due one delay after each boundary, for every feed', () => {
    const views = [
      view({ latestHourMs: D + 10 * HOUR_MS, rollupsDone: done21 }),
      view({ feed: 'torrents', latestHourMs: D + 10 * HOUR_MS, rollupsDone: done21 }),
    ];
    assert.deepEqual(dueJobs(D + 12 * HOUR_MS + MIN - 1, views), []);
    assert.deepEqual(show(dueJobs(D + 12 * HOUR_MS + MIN, views)), ['hourly proxies 2026-11-22T11', 'hourly torrents 2026-11-22T11']);
  });

  it('should backfill the missed hours of the current day after a restart, oldest first', () => {
    assert.deepEqual(show(dueJobs(D + 3 * HOUR_MS + 5 * MIN, [view({ rollupsDone: done21 })])), [
      'hourly proxies 2026-11-22T00',
      'hourly proxies 2026-11-22T01',
      'hourly proxies 2026-11-22T02',
    ]);
    assert.deepEqual(show(dueJobs(D + 3 * HOUR_MS + 5 * MIN, [view({ latestHourMs: D + HOUR_MS, rollupsDone: done21 })])), [
      'hourly proxies 2026-11-22T02',
    ]);
  });

  it("should make yesterday's rollup due at 00:30 UTC, not before, and skip hours it covers", () => {
    const v = view({ latestHourMs: D - 2 * HOUR_MS, datesWithData: done21 });
    assert.deepEqual(show(dueJobs(D + 29 * MIN + 59_999, [v])), ['hourly proxies 2026-11-21T23']);
    assert.deepEqual(show(dueJobs(D + 30 * MIN, [v])), ['rollup proxies 2026-11-21']);
    assert.deepEqual(dueJobs(D + 30 * MIN, [view({ latestHourMs: D - HOUR_MS, rollupsDone: done21 })]), []);
    // At 01:01 the rollup (end of the 21st) still runs before hour 00 of the 22nd, which reuses a key.
    assert.deepEqual(show(dueJobs(D + HOUR_MS + MIN, [view({ latestHourMs: D - HOUR_MS, datesWithData: done21 })])), [
      'rollup proxies 2026-11-21',
      'hourly proxies 2026-11-22T00',
    ]);
  });

  it('should catch up missed rollups of older dates with records, even before 00:30', () => {
    const v = view({
      latestHourMs: D - HOUR_MS,
      datesWithData: new Set(['2026-11-18', '2026-11-20', '2026-11-21']),
      rollupsDone: new Set(['2026-11-20']),
    });
    assert.deepEqual(show(dueJobs(D + 10 * MIN, [v])), ['rollup proxies 2026-11-18']);
    assert.deepEqual(show(dueJobs(D + 40 * MIN, [v])), ['rollup proxies 2026-11-18', 'rollup proxies 2026-11-21']);
  });
});

describe(nextWakeMs.name, () => {
  it('should wake one delay after the next hour, or at 00:30 when that comes first', () => {
    assert.equal(nextWakeMs(D + 12 * HOUR_MS + 30 * MIN), D + 13 * HOUR_MS + MIN);
    assert.equal(nextWakeMs(D + 12 * HOUR_MS + MIN), D + 13 * HOUR_MS + MIN);
    assert.equal(nextWakeMs(D + 12 * HOUR_MS), D + 12 * HOUR_MS + MIN);
    assert.equal(nextWakeMs(D + 10 * MIN), D + 30 * MIN);
    assert.equal(nextWakeMs(D + 30 * MIN), D + HOUR_MS + MIN);
  });
});

describe(ExportScheduler.name, () => {
  it('should run due jobs from the stores state and re-arm for the next boundary, with a manual clock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-sched-'));
    const db = openSqlite(':memory:');
    const clock = new ManualClock(D - 2 * HOUR_MS + 5 * MIN); // 22:05 on the 21st
    const feedLog = new FileFeedLog(join(dir, 'log'));
    const writer = await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 });
    const catalog = new SqliteSnapshotCatalog(db);
    const deps = {
      feedLog,
      catalog,
      writer,
      clock,
      workDir: join(dir, 'work'),
      store: new FsObjectStore({ dataDir: dir, clock }),
    };
    const timers: number[] = [];
    const fns: (() => void)[] = [];
    const errors: Error[] = [];
    const sched = new ExportScheduler(deps, ['ja4t'], clock, undefined, {
      setTimer: (fn, ms) => {
        timers.push(ms);
        fns.push(fn);
        return {};
      },
      clearTimer: () => {},
      onError: (_j, e) => errors.push(e),
    });
    try {
      for (let h = 0; h < 24; h++) {
        const ts = (D - 24 * HOUR_MS + h * HOUR_MS) / 1000;
        await feedLog.append('ja4t', [
          {
            timeMs: ts * 1000,
            line: JSON.stringify({ ip: '192.0.2.1', ja4t: 'x', provider: 'p', type: 't', timestamp: ts, country_code: 'DE', asn: h }),
          },
        ]);
      }
      assert.equal((await sched.tick()).length, 22, 'hours 00..21 of the 21st, no rollup of a date without records');
      assert.equal((await catalog.latestHourly('ja4t'))?.hour, 21);
      clock.set(D - HOUR_MS + MIN);
      assert.deepEqual(show(await sched.tick()), ['hourly ja4t 2026-11-21T22']);
      clock.set(D + 30 * MIN);
      assert.deepEqual(show(await sched.tick()), ['rollup ja4t 2026-11-21'], 'hour 23 is left to the rollup');
      assert.equal((await catalog.get('ja4t', '2026-11-21'))?.rows, 24);
      assert.deepEqual(await catalog.hourlyOf('ja4t', '2026-11-21'), []);
      assert.deepEqual(await sched.tick(), [], 'nothing left');
      assert.deepEqual(errors, []);
      sched.start();
      assert.deepEqual(timers, [0]);
      fns[0]!();
      while (timers.length < 2) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(timers, [0, 31 * MIN], 'from 00:30 the next wake is 01:01');
      // A job that fails is tried again a minute later, not at the next boundary.
      clock.set(D + HOUR_MS + 2 * MIN);
      const putFile = deps.store.putFile.bind(deps.store);
      deps.store.putFile = async () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      };
      fns[1]!();
      while (timers.length < 3) await new Promise((r) => setTimeout(r, 5));
      assert.equal(errors.length, 1);
      assert.equal(timers[2], RETRY_MS);
      deps.store.putFile = putFile;
      fns[2]!();
      while (timers.length < 4) await new Promise((r) => setTimeout(r, 5));
      assert.equal(errors.length, 1, 'the retry succeeded');
      assert.equal((await catalog.latestHourly('ja4t'))?.hour, 0);
      assert.equal(timers[3], HOUR_MS - MIN, 'then back to the boundaries: 02:01');
      await sched.stop();
    } finally {
      writer.close();
      await feedLog.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should settle publishes a crash interrupted before a pass: a finished upload is listed (and not redone), one that never started is dropped once stale', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-sched-'));
    const db = openSqlite(':memory:');
    const clock = new ManualClock(D + 6 * HOUR_MS + 5 * MIN); // 06:05: hour 05 is the last complete one
    const feedLog = new FileFeedLog(join(dir, 'log'));
    const writer = await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 });
    const catalog = new SqliteSnapshotCatalog(db);
    const store = new FsObjectStore({ dataDir: dir, clock });
    const reports: RecoveryReport[] = [];
    const errors: Error[] = [];
    const sched = new ExportScheduler({ feedLog, catalog, writer, clock, workDir: join(dir, 'work'), store }, ['ja4t'], clock, undefined, {
      onRecovered: (r) => reports.push(r),
      onError: (_j, e) => errors.push(e),
    });
    const snap = (hour: number, bytes: Buffer): Snapshot => ({
      feed: 'ja4t',
      kind: 'hourly',
      date: '2026-11-22',
      hour,
      key: `ja4t/latest/${String(hour).padStart(2, '0')}_ja4t.parquet`,
      size: bytes.length,
      rows: 1,
      checksum: createHash('sha256').update(bytes).digest('hex'),
      schema: { fields: [] },
      createdAt: clock.now() / 1000,
    });
    try {
      // Hours 00..04 are listed; the publish of 05 was killed after its upload, that of 03 (a rerun) before it.
      for (let h = 0; h < 5; h++) await catalog.upsert(snap(h, Buffer.from(`hour ${h}`)));
      const h5 = snap(5, Buffer.from('hour 5'));
      await catalog.beginPublish(h5, clock.now() - 10 * MIN);
      await store.putBytes(h5.key, Buffer.from('hour 5'), { sha256: h5.checksum, rows: 1 });
      const h3 = snap(3, Buffer.from('hour 3, rerun'));
      await catalog.beginPublish(h3, clock.now() - 2 * HOUR_MS);
      assert.deepEqual(await sched.tick(), [], 'hour 05 counts as done: nothing is due');
      assert.deepEqual(errors, []);
      assert.deepEqual(
        reports.map((r) => ({ completed: r.completed.map((s) => s.hour), abandoned: r.abandoned.map((s) => s.hour), pending: r.pending })),
        [{ completed: [5], abandoned: [3], pending: 0 }],
      );
      assert.deepEqual(await catalog.get('ja4t', '2026-11-22', 5), h5);
      assert.equal(
        (await catalog.get('ja4t', '2026-11-22', 3))?.checksum,
        snap(3, Buffer.from('hour 3')).checksum,
        'the listed hour 03 is untouched',
      );
      assert.deepEqual(await catalog.publishIntents(), []);
      await sched.tick();
      assert.equal(reports.length, 1, 'reported only when something was settled');
    } finally {
      writer.close();
      await feedLog.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should run nothing while another node holds the export lock, and take over once it is free', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-sched-lock-'));
    const db = openSqlite(':memory:');
    const clock = new ManualClock(D + 2 * HOUR_MS + 5 * MIN);
    const feedLog = new FileFeedLog(join(dir, 'log'));
    const writer = await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 });
    const catalog = new SqliteSnapshotCatalog(db);
    const store = new FsObjectStore({ dataDir: dir, clock });
    const lock = new LocalJobLock(); // one lock space: this node and "another node"
    const timers: number[] = [];
    const fns: (() => void)[] = [];
    let busy = 0;
    const sched = new ExportScheduler(
      { feedLog, catalog, writer, clock, workDir: join(dir, 'work'), store },
      ['ja4t'],
      clock,
      { ...DEFAULT_SCHEDULE, retryMs: 7_000 },
      {
        setTimer: (fn, ms) => {
          timers.push(ms);
          fns.push(fn);
          return {};
        },
        clearTimer: () => {},
        onBusy: () => busy++,
      },
      undefined,
      lock,
    );
    try {
      const ts = (D + HOUR_MS) / 1000;
      const line = JSON.stringify({ ip: '192.0.2.1', ja4t: 'x', provider: 'p', type: 't', timestamp: ts, country_code: 'DE', asn: 1 });
      await feedLog.append('ja4t', [{ timeMs: ts * 1000, line }]);
      const other = await lock.tryAcquire(EXPORT_LOCK);
      assert.ok(other);
      sched.start();
      fns[0]!();
      while (timers.length < 2) await new Promise((r) => setTimeout(r, 5));
      assert.equal(busy, 1);
      assert.equal(timers[1], 7_000, 'looks again after the configured retry (UMBRA_EXPORT_RETRY_S)');
      assert.equal(await catalog.count(), 0, 'nothing ran here');
      await other.release(); // the other node finished, or died
      fns[1]!();
      while (timers.length < 3) await new Promise((r) => setTimeout(r, 5));
      assert.equal(busy, 1);
      assert.equal((await catalog.latestHourly('ja4t'))?.hour, 1, 'this node took over');
      assert.ok(await lock.tryAcquire(EXPORT_LOCK), 'and let the lock go after its pass');
      await sched.stop();
    } finally {
      writer.close();
      await feedLog.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
