import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite, type SqliteDb } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { FEED_IDS, FEEDS, recordTimeMs } from '../feeds/feed-catalog.ts';
import type { FeedLog } from '../feeds/feed-log.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { runRollup } from './daily-rollup-job.ts';
import type { DamageReport, ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { fullRecords } from '../../../test/helpers/full-feed-records.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import type { DaySources } from './rollup-sources.ts';

const D0 = Date.UTC(2026, 10, 21);
const DATE = '2026-11-21';
const rec = (hour: number, i: number) => ({
  ip: `198.51.${hour}.${i}`,
  provider: 'p',
  type: 'vpn',
  timestamp: (D0 + hour * HOUR_MS) / 1000 + i,
  country_code: 'NL',
  asn: 64_500 + i,
});
const line = (r: object) => JSON.stringify(r);

/** The same log without local files: what a networked FeedLog offers. */
const streamingOnly = (log: FeedLog): FeedLog => ({
  append: (f, e) => log.append(f, e),
  readHour: (f, h) => log.readHour(f, h),
  readHourBlocks: (f, h) => log.readHourBlocks(f, h),
  hours: (f) => log.hours(f),
  dropBefore: (f, h) => log.dropBefore(f, h),
  close: () => log.close(),
});

/**
 * Hour partitions as an older version could leave them: in the middle of the file, a record torn by
 * a crash with the next (acknowledged) record glued to it on one line, and a line of garbage.
 */
describe('export jobs on a log with damaged lines', () => {
  let dir: string;
  let db: SqliteDb;
  let reports: DamageReport[];
  let deps: ExportJobDeps & { store: FsObjectStore; feedLog: FileFeedLog };
  /** The intact records of each hour, in log order. */
  let intact: Map<number, object[]>;

  /** Writes hour `hour` with 10 records, the 4th torn and glued to the 5th, and garbage after the 7th. */
  const damagedHour = async (hour: number) => {
    const rs = Array.from({ length: 10 }, (_, i) => rec(hour, i));
    await deps.feedLog.append('proxies', [{ timeMs: rs[0]!.timestamp * 1000, line: line(rs[0]!) }]);
    const file = (await deps.feedLog.hourFile('proxies', D0 + hour * HOUR_MS))!.path;
    const lines = rs.map(line);
    const torn = lines[3]!.slice(0, 25);
    const text = `${[
      ...lines.slice(0, 3),
      torn + lines[4],
      ...lines.slice(5, 7),
      '\u0000\u0000\u0000garbage {"ip": 1, tail',
      ...lines.slice(7),
    ].join('\n')}\n`;
    writeFileSync(file, text);
    intact.set(
      hour,
      rs.filter((_, i) => i !== 3),
    );
  };
  const healthyHour = async (hour: number) => {
    const rs = Array.from({ length: 3 }, (_, i) => rec(hour, i));
    await deps.feedLog.append(
      'proxies',
      rs.map((r) => ({ timeMs: r.timestamp * 1000, line: line(r) })),
    );
    intact.set(hour, rs);
  };
  const asRows = (rs: object[]) =>
    rs.map((r) => ({
      variant: null,
      simulated: null,
      ...r,
      timestamp: BigInt((r as { timestamp: number }).timestamp),
      asn: BigInt((r as { asn: number }).asn),
    }));
  const rowsOf = async (key: string) => (await readParquet(readFileSync(deps.store.pathOf(key)))).rows;
  const damageOf = () => reports.map((r) => ({ hour: (r.hourStartMs - D0) / HOUR_MS, skipped: r.skipped, repaired: r.repaired }));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-damaged-'));
    db = openSqlite(':memory:');
    const clock = new ManualClock(D0 + 26 * HOUR_MS);
    reports = [];
    intact = new Map();
    deps = {
      feedLog: new FileFeedLog(join(dir, 'log')),
      store: new FsObjectStore({ dataDir: dir, clock }),
      catalog: new SqliteSnapshotCatalog(db),
      writer: await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 }),
      clock,
      workDir: join(dir, 'work'),
      onDamagedLines: (r) => reports.push(r),
    };
    await healthyHour(4);
    await damagedHour(5);
    await healthyHour(6);
  });
  afterEach(async () => {
    deps.writer.close();
    await deps.feedLog.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should snapshot the damaged hour with every intact record, the glued one included, and report the skipped lines', async () => {
    const snap = await runHourly(deps, 'proxies', D0 + 5 * HOUR_MS);
    assert.equal(snap.rows, 9);
    assert.deepEqual(await rowsOf(snap.key), asRows(intact.get(5)!));
    assert.deepEqual(
      damageOf(),
      [{ hour: 5, skipped: 2, repaired: 1 }],
      'the torn piece and the garbage line skipped, the glued record repaired',
    );
    // A healthy hour takes the fast path and reports nothing.
    await runHourly(deps, 'proxies', D0 + 4 * HOUR_MS);
    assert.equal(reports.length, 1);
  });

  it('should snapshot it the same through a log without local files', async () => {
    const snap = await runHourly({ ...deps, feedLog: streamingOnly(deps.feedLog) }, 'proxies', D0 + 5 * HOUR_MS);
    assert.deepEqual(await rowsOf(snap.key), asRows(intact.get(5)!));
    assert.deepEqual(damageOf(), [{ hour: 5, skipped: 2, repaired: 1 }]);
  });

  it('should roll up the day in one pass from the log, with every intact record of every hour', async () => {
    let sources: DaySources | undefined;
    const daily = await runRollup(deps, 'proxies', DATE, (s) => (sources = s));
    assert.deepEqual(sources?.fromLog, [4, 5, 6]);
    assert.deepEqual(await rowsOf(daily.key), asRows([4, 5, 6].flatMap((h) => intact.get(h)!)));
    assert.deepEqual(damageOf(), [{ hour: 5, skipped: 2, repaired: 1 }]);
  });

  it('should roll up the day when the damaged hour must be written again from the log (a late record), reusing the others', async () => {
    for (const h of [4, 5, 6]) await runHourly(deps, 'proxies', D0 + h * HOUR_MS);
    const late = rec(5, 50);
    await deps.feedLog.append('proxies', [{ timeMs: late.timestamp * 1000, line: line(late) }]);
    reports = [];
    let sources: DaySources | undefined;
    const daily = await runRollup(deps, 'proxies', DATE, (s) => (sources = s));
    assert.deepEqual({ reused: sources?.reused, rewritten: sources?.rewritten }, { reused: [4, 6], rewritten: [5] });
    assert.deepEqual(await rowsOf(daily.key), asRows([...intact.get(4)!, ...intact.get(5)!, late, ...intact.get(6)!]));
    assert.deepEqual(damageOf(), [{ hour: 5, skipped: 2, repaired: 1 }]);
  });

  it('should roll it up through a log without local files too', async () => {
    const daily = await runRollup({ ...deps, feedLog: streamingOnly(deps.feedLog) }, 'proxies', DATE);
    assert.deepEqual(await rowsOf(daily.key), asRows([4, 5, 6].flatMap((h) => intact.get(h)!)));
    assert.deepEqual(damageOf(), [{ hour: 5, skipped: 2, repaired: 1 }]);
  });

  it('should leave out lines that are JSON but no record, which DuckDB alone would turn into rows of NULLs', async () => {
    const file = (await deps.feedLog.hourFile('proxies', D0 + 6 * HOUR_MS))!.path;
    writeFileSync(file, `${readFileSync(file, 'utf8')}{}\nnull\n`);
    const snap = await runHourly(deps, 'proxies', D0 + 6 * HOUR_MS);
    assert.deepEqual(await rowsOf(snap.key), asRows(intact.get(6)!));
    assert.deepEqual(damageOf(), [{ hour: 6, skipped: 2, repaired: 0 }]);
  });

  it('should leave them out of every feed, honeypot_adb included now that its files have a timestamp column', async () => {
    const hour = D0 + 8 * HOUR_MS;
    const records = fullRecords(hour);
    for (const feed of FEED_IDS) {
      const rs = records[feed];
      await deps.feedLog.append(
        feed,
        rs.map((r) => ({ timeMs: recordTimeMs(FEEDS[feed], r as { timestamp: number }), line: line(r) })),
      );
      const file = (await deps.feedLog.hourFile(feed, hour))!.path;
      writeFileSync(file, `${readFileSync(file, 'utf8')}{}\n`);
      const snap = await runHourly(deps, feed, hour);
      assert.equal(snap.rows, rs.length, feed);
    }
    assert.deepEqual(
      reports.map((r) => [r.feed, r.skipped]),
      FEED_IDS.map((f) => [f, 1]),
    );
  });
});
