import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { ManualClock } from '../../lib/clock.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite, type SqliteDb } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { FEED_IDS, FEEDS, recordTimeMs, type FeedId } from '../feeds/feed-catalog.ts';
import { runRollup } from './daily-rollup-job.ts';
import type { ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { asMember, dropAbsent, parseDuckType } from '../../../test/helpers/duck-types.ts';
import { fullRecords } from '../../../test/helpers/full-feed-records.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import type { DaySources } from './rollup-sources.ts';

const D0 = Date.UTC(2026, 10, 21);
async function* linesOf(records: object[]): AsyncIterable<string> {
  for (const r of records) yield JSON.stringify(r);
}
const DATE = '2026-11-21';
const META = 'STRUCT(proxy_ip VARCHAR, server VARCHAR, pool_id JSON, provider VARCHAR)';
/** The contract's columns (unchanged: names, order, types), then every other member of the stream record. */
const CONTRACT: Record<FeedId, [string, string][]> = {
  proxies: [
    ['ip', 'VARCHAR'],
    ['provider', 'VARCHAR'],
    ['type', 'VARCHAR'],
    ['timestamp', 'BIGINT'],
    ['country_code', 'VARCHAR'],
    ['asn', 'UBIGINT'],
  ],
  anonymizers: [
    ['range_start', 'VARCHAR'],
    ['range_end', 'VARCHAR'],
    ['provider', 'VARCHAR'],
    ['type', 'VARCHAR'],
    ['country_code', 'VARCHAR'],
    ['asn', 'UBIGINT'],
    ['timestamp', 'BIGINT'],
  ],
  torrents: [
    ['info_hash', 'VARCHAR'],
    ['name', 'VARCHAR'],
    ['magnet_uri', 'VARCHAR'],
    ['total_size', 'BIGINT'],
    ['piece_length', 'BIGINT'],
    ['file_count', 'BIGINT'],
    ['timestamp', 'BIGINT'],
  ],
  honeypot_http: [
    ['timestamp', 'BIGINT'],
    ['tunnel_id', 'BIGINT'],
    ['domain', 'VARCHAR'],
    ['port', 'INTEGER'],
    ['method', 'VARCHAR'],
    ['uri', 'VARCHAR'],
    ['version', 'VARCHAR'],
    ['raw', 'VARCHAR'],
  ],
  honeypot_https: [
    ['timestamp', 'BIGINT'],
    ['tunnel_id', 'BIGINT'],
    ['domain', 'VARCHAR'],
    ['port', 'INTEGER'],
    ['details', 'JSON'],
    ['raw', 'BLOB'],
  ],
  honeypot_dns: [
    ['timestamp', 'BIGINT'],
    ['tunnel_id', 'BIGINT'],
    ['domain', 'VARCHAR'],
    ['port', 'INTEGER'],
  ],
  honeypot_adb: [
    ['session', 'VARCHAR'],
    ['sequential_id', 'BIGINT'],
    ['command', 'BLOB'],
    ['hash', 'VARCHAR'],
  ],
  ja4t: [
    ['ip', 'VARCHAR'],
    ['ja4t', 'VARCHAR'],
    ['provider', 'VARCHAR'],
    ['type', 'VARCHAR'],
    ['timestamp', 'BIGINT'],
    ['country_code', 'VARCHAR'],
    ['asn', 'UBIGINT'],
  ],
};
const ADDED: Record<FeedId, [string, string][]> = {
  proxies: [
    ['variant', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  anonymizers: [
    ['variant', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  torrents: [
    ['files', 'STRUCT(path VARCHAR, length BIGINT)[]'],
    ['peers', 'STRUCT(ip VARCHAR, port INTEGER, source VARCHAR, encrypted BOOLEAN)[]'],
    ['simulated', 'BOOLEAN'],
  ],
  honeypot_http: [
    ['protocol', 'VARCHAR'],
    ['meta', META],
    ['headers', 'MAP(VARCHAR, VARCHAR)'],
    ['source_ip', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  honeypot_https: [
    ['protocol', 'VARCHAR'],
    ['meta', META],
    ['source_ip', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  honeypot_dns: [
    ['protocol', 'VARCHAR'],
    ['meta', META],
    ['qname', 'VARCHAR'],
    ['qtype', 'VARCHAR'],
    ['source_ip', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  honeypot_adb: [
    ['timestamp', 'TIMESTAMP WITH TIME ZONE'],
    ['source_ip', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
  ja4t: [
    ['variant', 'VARCHAR'],
    ['simulated', 'BOOLEAN'],
  ],
};
const expectedColumns = (feed: FeedId) => [...CONTRACT[feed], ...ADDED[feed]];
/** Columns holding a nested record member under another name (the contract flattens http `details`). */
const MEMBER_OF: Record<string, string[]> = {
  method: ['details', 'method'],
  uri: ['details', 'uri'],
  version: ['details', 'version'],
  headers: ['details', 'headers'],
};

describe('parquet exports carry every member of the stream record', () => {
  let dir: string;
  let db: SqliteDb;
  let duck: DuckDBInstance;
  let con: DuckDBConnection;
  let deps: ExportJobDeps & { store: FsObjectStore; feedLog: FileFeedLog };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-columns-'));
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
    duck = await DuckDBInstance.create(':memory:');
    con = await duck.connect();
  });
  after(async () => {
    deps.writer.close();
    await deps.feedLog.close();
    con.closeSync();
    duck.closeSync();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const append = (feed: FeedId, records: Record<string, unknown>[]) =>
    deps.feedLog.append(
      feed,
      records.map((r) => ({ timeMs: recordTimeMs(FEEDS[feed], r as { timestamp: number }), line: JSON.stringify(r) })),
    );
  const sql = (s: string) => `'${s.replaceAll("'", "''")}'`;

  /** Checks the file's columns with DuckDB (names in order, types) and returns its rows as stream records. */
  const readBack = async (feed: FeedId, file: string) => {
    const described = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sql(file)})`)).getRowObjectsJS();
    // DuckDB quotes member names that are keywords ("source"); the catalog spells them plain.
    const columns = described.map((c) => [c.column_name as string, (c.column_type as string).replaceAll('"', '')]);
    assert.deepEqual(columns, expectedColumns(feed), `${feed}: columns and DuckDB types in order`);
    const rows = (await con.runAndReadAll(`SELECT * FROM read_parquet(${sql(file)})`)).getRowObjectsJS();
    return rows.map((row) => {
      const rec: Record<string, unknown> = {};
      for (const [name, type] of columns) {
        const value = asMember(row[name!], parseDuckType(type!), FEEDS[feed].unit);
        if (value === undefined) continue;
        const path = MEMBER_OF[name!] && feed === 'honeypot_http' ? MEMBER_OF[name!]! : [name!];
        let node = rec;
        for (const p of path.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
        node[path.at(-1)!] = value;
      }
      return rec;
    });
  };

  const hour = D0 + 5 * HOUR_MS;
  for (const feed of FEED_IDS)
    it(`should write a ${feed} hour with the contract columns first, then every other member, that DuckDB reads back as the records`, async () => {
      const records = fullRecords(hour)[feed];
      await append(feed, records);
      const snap = await runHourly(deps, feed, hour);
      const file = deps.store.pathOf(snap.key);
      assert.deepEqual(await readBack(feed, file), records.map(dropAbsent), `${feed}: every member, values as streamed`);
      // The job read the log's file; lines streamed to the writer (a log without local files) give the same bytes.
      const streamed = await deps.writer.write(FEEDS[feed], linesOf(records), join(dir, `streamed-${feed}.parquet`), {
        kind: 'hourly',
        date: DATE,
        hour: '5',
      });
      assert.equal(streamed.sha256, snap.checksum, 'same bytes by either path');
      // hyparquet, a second reader, sees the same parquet schema (LIST/MAP/STRUCT groups, timestamp logical type).
      assert.deepEqual(
        (await readParquet(file)).fields.map((f) => [f.name, f.type]),
        expectedColumns(feed),
      );
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.type]),
        expectedColumns(feed),
        'the metadata schema names the same types',
      );
      if (feed === 'honeypot_http') {
        const details = (await readBack(feed, file))[0]!.details as { headers: object };
        assert.deepEqual(Object.keys(details.headers), ['host', 'user-agent', 'x-empty'], 'header order kept');
      }
    });

  it('should store added instants as TIMESTAMP(MICROS, isAdjustedToUTC=true) and lists as three-level LIST groups', async () => {
    const adb = deps.store.pathOf((await deps.catalog.get('honeypot_adb', DATE, 5))!.key);
    const ts = (
      await con.runAndReadAll(`SELECT type, logical_type FROM parquet_schema(${sql(adb)}) WHERE name = 'timestamp'`)
    ).getRowObjectsJS();
    assert.equal(ts.length, 1);
    assert.equal(ts[0]!.type, 'INT64');
    assert.match(String(ts[0]!.logical_type), /TimestampType\(isAdjustedToUTC=1, unit=TimeUnit\(MILLIS=<null>, MICROS=MicroSeconds\(\)/);
    const torrents = deps.store.pathOf((await deps.catalog.get('torrents', DATE, 5))!.key);
    const files = (
      await con.runAndReadAll(
        `SELECT name, repetition_type, converted_type, num_children FROM parquet_schema(${sql(torrents)}) WHERE name IN ('files', 'list', 'element', 'path', 'length') LIMIT 5`,
      )
    ).getRowsJS();
    assert.deepEqual(files, [
      ['files', 'OPTIONAL', 'LIST', 1n],
      ['list', 'REPEATED', null, 1n],
      ['element', 'OPTIONAL', null, 2n],
      ['path', 'OPTIONAL', 'UTF8', null],
      ['length', 'OPTIONAL', 'INT_64', null],
    ]);
  });

  it('should keep nested columns through the daily rollup: merged hourly files, the COPY fallback and one pass over the log', async () => {
    const hours = [5, 6, 9];
    for (const h of [6, 9]) for (const feed of FEED_IDS) await append(feed, fullRecords(D0 + h * HOUR_MS)[feed]);
    for (const feed of FEED_IDS) {
      const want = hours.flatMap((h) => fullRecords(D0 + h * HOUR_MS)[feed].map(dropAbsent));
      const hourly = [];
      for (const h of hours) hourly.push(deps.store.pathOf((await runHourly(deps, feed, D0 + h * HOUR_MS)).key));
      // The COPY that rewrites every row, taken when hourly files cannot be merged as they are.
      const copied = join(dir, `copy-${feed}.parquet`);
      await deps.writer.copyConcatParquet(FEEDS[feed], hourly, copied, { kind: 'daily', date: DATE });
      assert.deepEqual(await readBack(feed, copied), want, `${feed}: COPY`);

      let sources: DaySources | undefined;
      const daily = await runRollup(deps, feed, DATE, (s) => (sources = s));
      assert.equal(sources?.concat, 'merge', feed);
      assert.deepEqual(sources?.reused, hours);
      assert.equal(daily.rows, want.length);
      assert.deepEqual(await readBack(feed, deps.store.pathOf(daily.key)), want, `${feed}: merged`);
    }
    // Another day with no hourly files: written in one pass straight from the log's files.
    const next = D0 + 24 * HOUR_MS;
    for (const feed of FEED_IDS) {
      await append(feed, fullRecords(next + 2 * HOUR_MS)[feed]);
      await append(feed, fullRecords(next + 3 * HOUR_MS)[feed]);
      let sources: DaySources | undefined;
      const daily = await runRollup(deps, feed, '2026-11-22', (s) => (sources = s));
      assert.deepEqual(sources?.fromLog, [2, 3], feed);
      const want = [2, 3].flatMap((h) => fullRecords(next + h * HOUR_MS)[feed].map(dropAbsent));
      assert.deepEqual(await readBack(feed, deps.store.pathOf(daily.key)), want, `${feed}: one pass`);
    }
  });
});
