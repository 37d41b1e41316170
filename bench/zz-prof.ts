import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { HOUR_MS } from '../src/modules/feeds/feed-log.ts';
import { ParquetWriter } from '../src/modules/exports/parquet-writer.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../src/storage/embedded/fs-object-store.ts';
import { SqliteSnapshotCatalog } from '../src/storage/embedded/sqlite-snapshot-catalog.ts';
import { openSqlite } from '../src/storage/embedded/sqlite-db.ts';
import { runRollup } from '../src/modules/exports/daily-rollup-job.ts';
import { runHourly } from '../src/modules/exports/hourly-snapshot-job.ts';
const ROWS = 1_000_000, DAY = Date.UTC(2026, 10, 21);
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const log = new FileFeedLog(join(dir, 'log'));
for (let i = 0; i < ROWS; i += 100_000) await log.append('anonymizers', Array.from({ length: 100_000 }, (_, j) => { const k = i + j; const ts = DAY / 1000 + Math.floor((k * 86400) / ROWS); const ip = `${1 + (k % 223)}.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`; return { timeMs: ts * 1000, line: JSON.stringify({ range_start: ip, range_end: ip, provider: 'P' + (k % 5), type: 'VPN', country_code: 'US', asn: 7922 + (k % 5000), timestamp: ts }) }; }));
const writer = await ParquetWriter.create({ spoolDir: join(dir, 'spool') });
const acc: Record<string, number> = {};
const wrap = (o: any, m: string, name: string) => { const f = o[m].bind(o); o[m] = async (...a: any[]) => { const s = performance.now(); try { return await f(...a); } finally { acc[name] = (acc[name] ?? 0) + performance.now() - s; } }; };
for (let r = 0; r < 4; r++) {
  const db = openSqlite(':memory:'); const clock = { now: () => DAY + 2 * 86_400_000 };
  const store = new FsObjectStore({ dataDir: join(dir, 's' + r), secrets: [{ id: 'b', secret: 'x' }], clock });
  const catalog = new SqliteSnapshotCatalog(db);
  const deps = { feedLog: log, store, catalog, writer, clock, workDir: join(dir, 'work') };
  for (let h = 0; h < 24; h++) await runHourly(deps, 'anonymizers', DAY + h * HOUR_MS);
  for (const k of Object.keys(acc)) delete acc[k];
  wrap(writer, 'concatParquet', 'concat'); wrap(store, 'put', 'put'); wrap(store, 'copyToFile', 'link(sum)'); wrap(store, 'delete', 'delete'); wrap(log, 'hourFile', 'hourFile(sum)');
  const s = performance.now();
  await runRollup(deps, 'anonymizers', '2026-11-21');
  console.log('total', (performance.now() - s).toFixed(0), Object.entries(acc).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', '));
  // unwrap
  delete (writer as any).concatParquet; delete (log as any).hourFile;
  db.close();
}
writer.close(); await log.close(); rmSync(dir, { recursive: true, force: true });
