import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import { runCrashChild } from '../../../test/helpers/export-crash-harness.ts';
import { sweepWorkDir } from './export-job.ts';
import { recoverPublishes } from './publish-recovery.ts';
import { filesUnder } from '../../storage/contract/object-store.contract.ts';

const HOUR = Date.UTC(2026, 10, 21, 5);
const ROWS = 200_000;
const KEY = 'proxies/latest/05_proxies.parquet';
const DAILY = 'proxies/2026/11/21/proxies.parquet';

const runChild = (dir: string, mode: 'hourly' | 'rollup', killAfterMs?: number) =>
  runCrashChild(dir, mode, HOUR, ROWS, killAfterMs === undefined ? {} : { killAfterMs });

describe('hourly job and rollup killed mid-write (SIGKILL)', () => {
  it('should never expose a partial object or a row that disagrees with its bytes, and a rerun completes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-crash-'));
    try {
      await runCrashChild(dir, 'seed', HOUR, ROWS);
      const clock = new ManualClock(HOUR);
      const store = new FsObjectStore({ dataDir: dir, clock });
      // Kill points spread over the job: parquet writing, upload, catalog write.
      const outcomes: string[] = [];
      for (const killAfter of [10, 60, 130, 200, 260, 330, 400]) {
        const { finished } = await runChild(dir, 'hourly', killAfter);
        const db = openSqlite(join(dir, 'umbra.db'));
        try {
          const catalog = new SqliteSnapshotCatalog(db);
          const unsettled = (await catalog.get('proxies', '2026-11-21', 5)) === undefined;
          // The restart: publishes the kill interrupted are settled by what the store holds.
          await recoverPublishes({ store, catalog, clock });
          const row = await catalog.get('proxies', '2026-11-21', 5);
          const head = await store.head(KEY);
          assert.deepEqual(await store.list('proxies/'), head ? [KEY] : []);
          if (head) {
            // Whatever is visible is a whole parquet file with every row of the hour, and listed.
            const bytes = readFileSync(store.pathOf(KEY));
            assert.equal((await readParquet(bytes)).numRows, ROWS);
            assert.equal(row?.checksum, createHash('sha256').update(bytes).digest('hex'), 'stored bytes are listed with their checksum');
          } else {
            assert.equal(row, undefined, 'a row never points at a missing object');
          }
          const how = unsettled && row ? ' (completed by recovery)' : '';
          outcomes.push(
            `${killAfter}ms: ${finished ? 'finished' : 'killed'}, object ${head ? 'whole' : 'absent'}, row ${row ? 'yes' : 'no'}${how}`,
          );
        } finally {
          db.close();
        }
      }
      assert.equal((await runChild(dir, 'hourly')).finished, true, 'a rerun completes');
      const db = openSqlite(join(dir, 'umbra.db'));
      const row = await new SqliteSnapshotCatalog(db).get('proxies', '2026-11-21', 5);
      db.close();
      assert.equal(row?.rows, ROWS);
      assert.equal(
        row?.checksum,
        createHash('sha256')
          .update(readFileSync(store.pathOf(KEY)))
          .digest('hex'),
      );

      // The rollup killed at points spread over it (fetch and verify the hourly file, COPY, upload,
      // catalog, cleanup): the daily object is absent or whole with every row; until the rollup is
      // done the hour stays whole and listed; a rerun completes with no row lost or doubled.
      for (const killAfter of [10, 60, 120, 170, 200, 240, 320]) {
        const { finished } = await runChild(dir, 'rollup', killAfter);
        const rdb = openSqlite(join(dir, 'umbra.db'));
        try {
          const cat = new SqliteSnapshotCatalog(rdb);
          const daily = await store.head(DAILY);
          if (daily) assert.equal((await readParquet(readFileSync(store.pathOf(DAILY)))).numRows, ROWS);
          const state = (await cat.rollupState('proxies', '2026-11-21'))?.state;
          const dailyRow = await cat.get('proxies', '2026-11-21');
          if (dailyRow) assert.equal(dailyRow.checksum, daily?.sha256, 'the daily row describes the stored bytes');
          if (state !== 'done') {
            assert.equal((await cat.get('proxies', '2026-11-21', 5))?.checksum, row?.checksum, 'the hour stays listed');
            assert.ok(await store.head(KEY), 'and downloadable');
          }
          outcomes.push(
            `rollup ${killAfter}ms: ${finished ? 'finished' : 'killed'}, state ${state ?? 'none'}, daily ${daily ? 'whole' : 'absent'}`,
          );
        } finally {
          rdb.close();
        }
      }
      assert.equal((await runChild(dir, 'rollup')).finished, true, 'a rerun of the rollup completes');
      const rdb = openSqlite(join(dir, 'umbra.db'));
      const cat = new SqliteSnapshotCatalog(rdb);
      assert.equal((await cat.get('proxies', '2026-11-21'))?.rows, ROWS);
      assert.deepEqual(await cat.hourlyOf('proxies', '2026-11-21'), []);
      rdb.close();
      assert.deepEqual(await store.list('proxies/'), [DAILY]);
      assert.equal((await readParquet(readFileSync(store.pathOf(DAILY)))).numRows, ROWS);
      // Temp files of killed runs are swept once old enough to be dead.
      const later = new ManualClock(Date.now() + 2 * 3_600_000);
      outcomes.push(`leftovers before sweep: ${filesUnder(join(dir, 'exports', '.tmp')).length + filesUnder(join(dir, 'work')).length}`);
      await new FsObjectStore({ dataDir: dir, clock: later }).sweepTemp();
      await sweepWorkDir({ workDir: join(dir, 'work'), clock: later });
      assert.deepEqual(filesUnder(join(dir, 'exports', '.tmp')), []);
      assert.deepEqual(filesUnder(join(dir, 'work')), []);
      console.log(outcomes.join('\n'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
