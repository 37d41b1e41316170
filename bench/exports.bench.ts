// Exports figures: parquet rows/s for one hour of anonymizer-like rows read from the durable log,
// against two baselines in the same run: DuckDB reading the log's own NDJSON file (no spool, only
// possible for the file backend) and a typed appender fed from JS (JSON.parse per row).
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { FEEDS } from '../src/modules/feeds/feed-catalog.ts';
import { ParquetWriter } from '../src/modules/exports/parquet-writer.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../src/storage/embedded/fs-object-store.ts';
import { SqliteSnapshotCatalog } from '../src/storage/embedded/sqlite-snapshot-catalog.ts';
import { openSqlite } from '../src/storage/embedded/sqlite-db.ts';
import { runRollup } from '../src/modules/exports/daily-rollup-job.ts';

const ROWS = Number(process.env.EXPORT_BENCH_ROWS ?? 1_000_000);
const HOUR = Date.UTC(2026, 10, 22, 5);

export async function benchExports(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-exports-'));
  try {
    const log = new FileFeedLog(join(dir, 'log'));
    const providers = ['NORDVPN', 'MULLVAD', 'TOR', 'EXPRESSVPN', 'PROTON'];
    for (let i = 0; i < ROWS; i += 100_000) {
      await log.append('anonymizers', Array.from({ length: Math.min(100_000, ROWS - i) }, (_, j) => {
        const k = i + j;
        const ip = `${1 + (k % 223)}.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
        const ts = HOUR / 1000 + (k % 3600);
        return { timeMs: ts * 1000, line: JSON.stringify({ range_start: ip, range_end: ip, provider: providers[k % 5], type: 'VPN', country_code: 'US', asn: 7922 + (k % 5000), timestamp: ts }) };
      }));
    }

    // Best of 3 each, interleaved: this machine is shared and single runs vary by 2x.
    const best: Record<string, number> = {};
    const time = async (name: string, fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      best[name] = Math.min(best[name] ?? Infinity, (performance.now() - t) / 1000);
    };
    const writers = { fifo: await ParquetWriter.create({ spoolDir: join(dir, 'spool'), spool: 'fifo' }), file: await ParquetWriter.create({ spoolDir: join(dir, 'spool'), spool: 'file' }) };
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    let size = 0;
    for (let round = 0; round < 3; round++) {
      await time('iterate', async () => {
        let n = 0;
        for await (const l of log.readHour('anonymizers', HOUR)) n += l.length > 0 ? 1 : 0;
        if (n !== ROWS) throw new Error(`read ${n}`);
      });
      for (const [mode, w] of Object.entries(writers)) {
        await time(mode, async () => {
          const info = await w.write(FEEDS.anonymizers, log.readHourBlocks('anonymizers', HOUR), join(dir, `${mode}.parquet`));
          if (info.rows !== ROWS) throw new Error(`wrote ${info.rows} of ${ROWS}`);
          size = info.size;
        });
      }
      // Baseline 1: DuckDB straight on the log's hour file (the file backend's layout; no port, no spool).
      await time('direct', () => con.run(`COPY (SELECT * FROM read_json('${join(dir, 'log', 'anonymizers', '2026-11-22', '05.ndjson')}', format = 'newline_delimited',
        columns = {range_start: 'VARCHAR', range_end: 'VARCHAR', provider: 'VARCHAR', type: 'VARCHAR', country_code: 'VARCHAR', asn: 'UBIGINT', timestamp: 'BIGINT'}))
        TO '${join(dir, 'direct.parquet')}' (FORMAT parquet, COMPRESSION zstd)`));
    }
    writers.fifo.close();
    writers.file.close();

    // Baseline 2: typed appender, one JS call per value.
    const t = performance.now();
    await con.run('CREATE TABLE t (range_start VARCHAR, range_end VARCHAR, provider VARCHAR, type VARCHAR, country_code VARCHAR, asn UBIGINT, timestamp BIGINT)');
    const ap = await con.createAppender('t');
    for await (const line of log.readHour('anonymizers', HOUR)) {
      const r = JSON.parse(line) as { range_start: string; range_end: string; provider: string; type: string; country_code: string; asn: number; timestamp: number };
      ap.appendVarchar(r.range_start);
      ap.appendVarchar(r.range_end);
      ap.appendVarchar(r.provider);
      ap.appendVarchar(r.type);
      ap.appendVarchar(r.country_code);
      ap.appendUBigInt(BigInt(r.asn));
      ap.appendBigInt(BigInt(r.timestamp));
      ap.endRow();
    }
    ap.closeSync();
    // Baseline 3 (the issue's): DuckDB writing the same rows straight from an in-memory table.
    const t3 = performance.now();
    await con.run(`COPY t TO '${join(dir, 'appender.parquet')}' (FORMAT parquet, COMPRESSION zstd)`);
    const tableS = (performance.now() - t3) / 1000;
    const appenderS = (performance.now() - t) / 1000;
    con.closeSync();
    db.closeSync();
    await log.close();

    // Daily rollup: the same rows spread over the 24 hours of a day, rolled into one file.
    const dayLog = new FileFeedLog(join(dir, 'daylog'));
    const DAY = Date.UTC(2026, 10, 21);
    const all: Array<{ timeMs: number; line: string }> = [];
    for await (const line of new FileFeedLog(join(dir, 'log')).readHour('anonymizers', HOUR)) {
      const k = all.length;
      const ts = DAY / 1000 + Math.floor((k * 86_400) / ROWS);
      all.push({ timeMs: ts * 1000, line: line.replace(/"timestamp":\d+/, `"timestamp":${ts}`) });
    }
    for (let i = 0; i < all.length; i += 100_000) await dayLog.append('anonymizers', all.slice(i, i + 100_000));
    const db2 = openSqlite(':memory:');
    const rollWriter = await ParquetWriter.create({ spoolDir: join(dir, 'spool') });
    const clock = { now: () => DAY + 2 * 86_400_000 };
    const jobDeps = { feedLog: dayLog, store: new FsObjectStore({ dataDir: join(dir, 'store'), secrets: [{ id: 'b', secret: 'bench-secret-0123456789' }], clock }), catalog: new SqliteSnapshotCatalog(db2), writer: rollWriter, clock, workDir: join(dir, 'work') };
    // Once: a finished rollup is not redone.
    const t4 = performance.now();
    const snap = await runRollup(jobDeps, 'anonymizers', '2026-11-21');
    const rollupS = (performance.now() - t4) / 1000;
    if (snap.rows !== ROWS) throw new Error(`rolled ${snap.rows} of ${ROWS}`);
    rollWriter.close();
    db2.close();
    await dayLog.close();

    const rate = (s: number) => Math.round(ROWS / s);
    return {
      rows: ROWS,
      'parquet writer, FIFO spool rows/s (target >= 1,000,000)': rate(best.fifo!),
      'parquet writer, file spool rows/s': rate(best.file!),
      'ceiling: FeedLog.readHour iteration alone rows/s': rate(best.iterate!),
      'baseline: read_json on the log file rows/s': rate(best.direct!),
      'baseline: typed appender (once) rows/s': rate(appenderS),
      'writer (FIFO) / direct ratio': Number((best.direct! / best.fifo!).toFixed(3)),
      'baseline: DuckDB COPY from an in-memory table rows/s': rate(tableS),
      'hourly writer / in-memory table ratio': Number((tableS / best.fifo!).toFixed(3)),
      'daily rollup (24 hours, whole job) rows/s': rate(rollupS),
      'rollup / in-memory table ratio (target >= 0.8)': Number((tableS / rollupS).toFixed(3)),
      'file size (MB, zstd)': Number((size / 1e6).toFixed(2)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchExports());
