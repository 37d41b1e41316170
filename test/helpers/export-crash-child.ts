// Test fixture run as a child process by the *.crash.test.ts files, which SIGKILL it mid-job.
// argv: dataDir mode ('seed' | 'hourly' | 'reexport' | 'rollup') hourStartMs rows [killAt]
// `seed` appends `rows` records to the hour; `reexport` appends `rows` late ones from other addresses
// (so the hour's file changes), then runs the hourly job like `hourly`. `killAt` makes a job SIGKILL
// itself at one point of its publish:
//   intent       the publish intent is recorded, nothing uploaded
//   put-temp     the upload's temp file is written and synced, not yet renamed into place
//   put-renamed  the new bytes are renamed into place, their sidecar not yet
//   put-done     the upload returned, the catalog not yet updated
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { ManualClock } from '../../src/lib/clock.ts';
import { FileFeedLog } from '../../src/storage/embedded/file-feed-log.ts';
import { FsObjectStore } from '../../src/storage/embedded/fs-object-store.ts';
import { openSqlite } from '../../src/storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../src/storage/embedded/sqlite-snapshot-catalog.ts';
import { runRollup } from '../../src/modules/exports/daily-rollup-job.ts';
import { runHourly } from '../../src/modules/exports/hourly-snapshot-job.ts';
import { ParquetWriter } from '../../src/modules/exports/parquet-writer.ts';

const [dir, mode, hourArg, rowsArg, killAt] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const hour = Number(hourArg);
const feedLog = new FileFeedLog(join(dir, 'log'));
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

/** Kills the process just before the rename that puts a file ending in `suffix` into place. */
function killBeforeRename(suffix: string): void {
  const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');
  const rename = fsp.rename;
  fsp.rename = async (from, to) => {
    if (String(from).endsWith(suffix)) die();
    return rename(from, to);
  };
  // The store's `import { rename } from 'node:fs/promises'` is a live binding of the builtin's exports.
  syncBuiltinESMExports();
}

/** Appends n records to the hour: from 10.0.0.0/8, or 11.0.0.0/8 for late ones. */
async function append(n: number, net: number): Promise<void> {
  for (let i = 0; i < n; i += 50_000) {
    const entries = Array.from({ length: Math.min(50_000, n - i) }, (_, j) => {
      const k = i + j;
      const ts = hour / 1000 + (k % 3600);
      return {
        timeMs: ts * 1000,
        line: JSON.stringify({
          ip: `${net}.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`,
          provider: `p${k % 50}`,
          type: 'vpn',
          timestamp: ts,
          country_code: 'DE',
          asn: 4_000_000_000 + k,
        }),
      };
    });
    await feedLog.append('proxies', entries);
  }
}

if (mode === 'seed') await append(Number(rowsArg), 10);
else {
  if (mode === 'reexport') await append(Number(rowsArg), 11);
  const clock = new ManualClock(hour + 2 * 3_600_000);
  const db = openSqlite(join(dir, 'umbra.db'));
  const writer = await ParquetWriter.create({ spoolDir: join(dir, 'work'), threads: 1 });
  const store = new FsObjectStore({ dataDir: dir, clock });
  const catalog = new SqliteSnapshotCatalog(db);
  if (killAt === 'intent') {
    const begin = catalog.beginPublish.bind(catalog);
    catalog.beginPublish = async (s, at) => {
      await begin(s, at);
      return die();
    };
  } else if (killAt === 'put-temp') killBeforeRename('.part');
  else if (killAt === 'put-renamed') killBeforeRename('.part.json');
  else if (killAt === 'put-done') {
    const putFile = store.putFile.bind(store);
    store.putFile = async (k, f, m) => {
      await putFile(k, f, m);
      return die();
    };
  } else if (killAt !== undefined) throw new Error(`unknown kill point ${killAt}`);
  process.stdout.write('started\n');
  const deps = { feedLog, store, catalog, writer, clock, workDir: join(dir, 'work') };
  if (mode === 'rollup') await runRollup(deps, 'proxies', new Date(hour).toISOString().slice(0, 10));
  else await runHourly(deps, 'proxies', hour);
  writer.close();
  db.close();
  process.stdout.write('finished\n');
}
await feedLog.close();
