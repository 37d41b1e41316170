// Test fixture run as a child process by export-jobs.crash.test.ts, which SIGKILLs it mid-job.
// argv: dataDir mode ('seed' | 'hourly' | 'rollup') hourStartMs rows
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { runRollup } from './daily-rollup-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import { ParquetWriter } from './parquet-writer.ts';

const [dir, mode, hourArg, rowsArg] = process.argv.slice(2) as [string, string, string, string];
const hour = Number(hourArg);
const feedLog = new FileFeedLog(join(dir, 'log'));
if (mode === 'seed') {
  const n = Number(rowsArg);
  for (let i = 0; i < n; i += 50_000) {
    const entries = Array.from({ length: Math.min(50_000, n - i) }, (_, j) => {
      const k = i + j;
      const ts = hour / 1000 + (k % 3600);
      return { timeMs: ts * 1000, line: JSON.stringify({ ip: `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`, provider: `p${k % 50}`, type: 'vpn', timestamp: ts, country_code: 'DE', asn: 4_000_000_000 + k }) };
    });
    await feedLog.append('proxies', entries);
  }
} else {
  const clock = new ManualClock(hour + 2 * 3_600_000);
  const db = openSqlite(join(dir, 'umbra.db'));
  const writer = await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 });
  const store = new FsObjectStore({ dataDir: dir, secrets: [{ id: 'k', secret: 's' }], clock });
  process.stdout.write('started\n');
  const deps = { feedLog, store, catalog: new SqliteSnapshotCatalog(db), writer, clock, workDir: join(dir, 'work') };
  if (mode === 'rollup') await runRollup(deps, 'proxies', new Date(hour).toISOString().slice(0, 10));
  else await runHourly(deps, 'proxies', hour);
  writer.close();
  db.close();
  process.stdout.write('finished\n');
}
await feedLog.close();
