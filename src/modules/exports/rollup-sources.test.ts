import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parquetMetadata } from 'hyparquet';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite, type SqliteDb } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import type { FeedLog } from '../feeds/feed-log.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { runRollup } from './daily-rollup-job.ts';
import type { ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import type { ObjectStore } from './object-store.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import type { DaySources } from './rollup-sources.ts';

const D0 = Date.UTC(2026, 10, 21);
const DATE = '2026-11-21';
const FEED = 'honeypot_https';
/** honeypot_https: a JSON column (details), a BLOB one (raw, base64 in the log, sometimes absent) and a STRUCT (meta). */
const rec = (tsMs: number, i: number) => ({
  timestamp: tsMs,
  tunnel_id: i,
  domain: `t${i % 5}.example`,
  port: 443,
  protocol: 'tls',
  meta: { proxy_ip: '198.51.100.1', server: 's', pool_id: 'p', provider: 'P' },
  details: i % 3 === 0 ? null : { sni: `t${i}.example`, ja4: 't13d' },
  ...(i % 4 === 0 ? {} : { raw: Buffer.from([i & 255, 0, 22]).toString('base64') }),
});
type Rec = ReturnType<typeof rec>;
const asRow = (r: Rec) => ({
  timestamp: BigInt(r.timestamp),
  tunnel_id: BigInt(r.tunnel_id),
  domain: r.domain,
  port: r.port,
  details: r.details,
  raw: r.raw === undefined ? null : new Uint8Array(Buffer.from(r.raw, 'base64')),
  protocol: r.protocol,
  meta: r.meta,
  source_ip: null,
  simulated: null,
});

/** The same log without local files: what a networked FeedLog offers. */
const streamingOnly = (log: FeedLog): FeedLog => ({
  append: (f, e) => log.append(f, e),
  readHour: (f, h) => log.readHour(f, h),
  readHourBlocks: (f, h) => log.readHourBlocks(f, h),
  hours: (f) => log.hours(f),
  dropBefore: (f, h) => log.dropBefore(f, h),
  close: () => log.close(),
});
/** The same store without copyToFile: objects are fetched through get(). */
const withoutCopy = (s: ObjectStore): ObjectStore => ({
  putFile: (k, f, m) => s.putFile(k, f, m),
  putBytes: (k, b, m) => s.putBytes(k, b, m),
  head: (k) => s.head(k),
  get: (k) => s.get(k),
  read: (k) => s.read(k),
  delete: (k) => s.delete(k),
  list: (p) => s.list(p),
});

describe('daily rollup sources', () => {
  let dir: string;
  let db: SqliteDb;
  let deps: ExportJobDeps & { store: FsObjectStore; feedLog: FileFeedLog; catalog: SqliteSnapshotCatalog };
  /** What the log holds per hour, in append order. */
  let log: Map<number, Rec[]>;
  let n: number;

  const append = async (hour: number, count: number) => {
    const rs = Array.from({ length: count }, () => rec(D0 + hour * HOUR_MS + (n % 3_600_000), n++));
    log.set(hour, [...(log.get(hour) ?? []), ...rs]);
    await deps.feedLog.append(
      FEED,
      rs.map((r) => ({ timeMs: r.timestamp, line: JSON.stringify(r) })),
    );
  };
  const allRows = () => [...Array(24).keys()].flatMap((h) => log.get(h) ?? []).map(asRow);
  const rollup = async (d: ExportJobDeps = deps) => {
    let sources: DaySources | undefined;
    const snap = await runRollup(d, FEED, DATE, (s) => (sources = s));
    const bytes = readFileSync(deps.store.pathOf(snap.key));
    assert.equal(snap.checksum, createHash('sha256').update(bytes).digest('hex'), 'the checksum is of the stored bytes');
    const pq = await readParquet(bytes);
    assert.equal(snap.rows, pq.numRows);
    assert.deepEqual(
      pq.fields,
      [
        ['timestamp', 'BIGINT'],
        ['tunnel_id', 'BIGINT'],
        ['domain', 'VARCHAR'],
        ['port', 'INTEGER'],
        ['details', 'JSON'],
        ['raw', 'BLOB'],
        ['protocol', 'VARCHAR'],
        ['meta', 'STRUCT(proxy_ip VARCHAR, server VARCHAR, pool_id JSON, provider VARCHAR)'],
        ['source_ip', 'VARCHAR'],
        ['simulated', 'BOOLEAN'],
      ].map(([name, type]) => ({ name, type })),
    );
    assert.deepEqual({ kind: pq.kv.kind, date: pq.kv.date, feed: pq.kv.feed }, { kind: 'daily', date: DATE, feed: FEED });
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    assert.ok(
      meta.row_groups.every((g) => g.columns.every((c) => c.meta_data?.codec === 'ZSTD')),
      'zstd throughout',
    );
    return { snap, rows: pq.rows, sources: sources! };
  };
  const hoursWith = () => [...log.keys()].sort((a, b) => a - b);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-rollup-'));
    db = openSqlite(':memory:');
    const clock = new ManualClock(D0 + 25 * HOUR_MS);
    deps = {
      feedLog: new FileFeedLog(join(dir, 'log')),
      store: new FsObjectStore({ dataDir: dir, clock }),
      catalog: new SqliteSnapshotCatalog(db),
      writer: await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 }),
      clock,
      workDir: join(dir, 'work'),
    };
    log = new Map();
    n = 0;
    // Hour 7 has no records.
    for (let h = 0; h < 24; h++) if (h !== 7) await append(h, 4);
  });
  afterEach(async () => {
    deps.writer.close();
    await deps.feedLog.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should reuse the verified hourly files and write again only the hours that got records since', async () => {
    for (let h = 0; h < 24; h++) await runHourly(deps, FEED, D0 + h * HOUR_MS);
    assert.match((await deps.catalog.get(FEED, DATE, 3))?.sourceVersion ?? '', /^\d+:\d+$/, 'hourly snapshots record the log version');
    await append(10, 2); // late records for an hour already snapshotted
    await append(7, 1); // and the first of an hour snapshotted empty
    const { rows, sources, snap } = await rollup();
    assert.deepEqual(sources.rewritten, [7, 10]);
    assert.deepEqual(
      sources.reused,
      hoursWith().filter((h) => h !== 7 && h !== 10),
    );
    assert.deepEqual(sources.fromLog, []);
    assert.equal(sources.concat, 'merge', 'reused and rewritten hours alike are merged at the row-group level');
    assert.equal(snap.rows, 23 * 4 + 3);
    assert.deepEqual(rows, allRows());
    assert.deepEqual(await deps.store.list(`${FEED}/`), [snap.key], 'hourly objects deleted');
    assert.deepEqual(readdirSync(deps.workDir), [], 'nothing left in the work dir');
  });

  it('should write an hour again when its file is missing, holds other bytes, has an older schema or fails to download, fetching through get() without copyToFile', async () => {
    for (let h = 0; h < 24; h++) await runHourly(deps, FEED, D0 + h * HOUR_MS);
    const h2 = await deps.catalog.get(FEED, DATE, 2);
    await deps.store.delete(h2!.key);
    // Another day's bytes under hour 3's key, its row not updated (what a key reused daily can leave).
    const other = readFileSync(deps.store.pathOf((await deps.catalog.get(FEED, DATE, 4))!.key));
    await deps.store.putBytes((await deps.catalog.get(FEED, DATE, 3))!.key, other, {
      sha256: createHash('sha256').update(other).digest('hex'),
      rows: 4,
    });
    const h5 = (await deps.catalog.get(FEED, DATE, 5))!;
    await deps.catalog.upsert({ ...h5, schema: { fields: h5.schema.fields.slice(0, 5) } });
    await deps.catalog.forgetKey((await deps.catalog.get(FEED, DATE, 6))!.key);
    // And hour 8's download breaks midway.
    const store = withoutCopy(deps.store);
    const h8 = (await deps.catalog.get(FEED, DATE, 8))!.key;
    store.get = async (k) => {
      const body = await deps.store.get(k);
      if (k !== h8 || !body) return body;
      return Readable.from(
        (async function* () {
          for await (const c of body) yield c;
          throw new Error('connection reset');
        })(),
      );
    };
    const { rows, sources } = await rollup({ ...deps, store });
    assert.deepEqual(sources.rewritten, [2, 3, 5, 6, 8]);
    assert.deepEqual(sources.reused.length, 23 - 5);
    assert.deepEqual(rows, allRows());
  });

  it('should write the day in one pass from the log when no hourly file is usable', async () => {
    await append(23, 1);
    const { rows, sources } = await rollup();
    assert.deepEqual(sources, { reused: [], rewritten: [], fromLog: hoursWith() });
    assert.deepEqual(rows, allRows());
  });

  it('should stream hours and days from a log without local files, into the same hourly bytes', async () => {
    const fast = await runHourly(deps, FEED, D0 + 9 * HOUR_MS);
    const slowDeps = { ...deps, feedLog: streamingOnly(deps.feedLog) };
    const slow = await runHourly(slowDeps, FEED, D0 + 9 * HOUR_MS);
    assert.equal(slow.checksum, fast.checksum, 'both paths give the same bytes');
    assert.equal(slow.sourceVersion, undefined, 'no version without hourFile');
    for (let h = 0; h < 24; h++) await runHourly(slowDeps, FEED, D0 + h * HOUR_MS);
    const { rows, sources } = await rollup(slowDeps);
    assert.deepEqual(sources.fromLog, [...Array(24).keys()], 'without versions no hourly file can be trusted');
    assert.deepEqual(rows, allRows());
  });

  it('should leave out a torn last line on every path: hourly, reused and one-pass', async () => {
    const h12 = D0 + 12 * HOUR_MS;
    const file = (await deps.feedLog.hourFile(FEED, h12))!.path;
    // A whole object cut just before its newline: a crash mid-append; never acknowledged.
    appendFileSync(file, JSON.stringify(rec(h12 + 5, 999)));
    const hourly = await runHourly(deps, FEED, h12);
    assert.equal(hourly.rows, 4);
    assert.deepEqual((await readParquet(readFileSync(deps.store.pathOf(hourly.key)))).rows, log.get(12)!.map(asRow));
    // The other hours take the fast path; the rollup then reuses hour 12 too (its version ignores the torn line).
    for (let h = 0; h < 24; h++) if (h !== 12) await runHourly(deps, FEED, D0 + h * HOUR_MS);
    const reused = await rollup();
    assert.ok(reused.sources.reused.includes(12));
    assert.deepEqual(reused.rows, allRows());
  });

  it('should leave out a torn last line when the day is read in one pass', async () => {
    const h12 = D0 + 12 * HOUR_MS;
    appendFileSync((await deps.feedLog.hourFile(FEED, h12))!.path, JSON.stringify(rec(h12 + 5, 999)));
    const { rows, sources } = await rollup();
    assert.deepEqual(sources.fromLog, hoursWith());
    assert.deepEqual(rows, allRows());
  });
});
