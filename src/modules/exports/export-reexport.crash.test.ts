import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { download, DOWNLOAD_PATH } from '../../http/routes/downloads.ts';
import { ManualClock } from '../../lib/clock.ts';
import { FsObjectStore } from '../../storage/embedded/fs-object-store.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteSnapshotCatalog } from '../../storage/embedded/sqlite-snapshot-catalog.ts';
import { FEEDS } from '../feeds/feed-catalog.ts';
import { runCrashChild } from '../../../test/helpers/export-crash-harness.ts';
import { CursorCodec } from './cursor-codec.ts';
import { DownloadSigner } from './download-signer.ts';
import { ExportService } from './export-service.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';
import { INTENT_STALE_MS, recoverPublishes } from './publish-recovery.ts';

const H5 = Date.UTC(2026, 10, 21, 5);
const H6 = Date.UTC(2026, 10, 21, 6);
const DATE = '2026-11-21';
const SEED = 60_000;
const LATE = 2_000;
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * An earlier hour (05, while 06 is the newest, so the scheduler would never redo it) is exported
 * again after late records arrived, in a child SIGKILLed at points of the publish. After each kill
 * the restart settles the interrupted publish; the hour must stay listed, with metadata whose
 * checksum is the SHA-256 of the bytes its download serves.
 */
describe('an earlier hour re-exported and killed mid-publish (SIGKILL)', () => {
  it('should keep the hour listed and downloadable with a checksum of the bytes served, old or new, and settle the publish on restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-reexport-'));
    const secrets = [{ id: 'k', secret: 's' }];
    // The jobs' clock (the child's): 07:00 of the same day, so hourly metadata is served.
    const clock = new ManualClock(H5 + 2 * 3_600_000);
    const store = new FsObjectStore({ dataDir: dir, clock });
    const signer = new DownloadSigner({ secrets, clock, path: DOWNLOAD_PATH });
    const http = Fastify();
    http.get(DOWNLOAD_PATH, download(signer, store));
    try {
      await runCrashChild(dir, 'seed', H5, SEED);
      await runCrashChild(dir, 'seed', H6, 1_000);
      assert.equal((await runCrashChild(dir, 'hourly', H5, 0)).finished, true);
      assert.equal((await runCrashChild(dir, 'hourly', H6, 0)).finished, true);

      /** The restart after a kill: settle, then what a client sees of hour 05. */
      const restart = async () => {
        const db = openSqlite(join(dir, 'umbra.db'));
        try {
          const catalog = new SqliteSnapshotCatalog(db);
          const report = await recoverPublishes({ store, catalog, clock });
          const exports = new ExportService(catalog, store, new CursorCodec(secrets), clock, { signer });
          const listed = (await exports.list(FEEDS.proxies, 10, undefined)).feeds.map((i) => i.id);
          assert.deepEqual(listed, [`${DATE}/6`, `${DATE}/5`], 'both hours stay listed, 06 the newest');
          const meta = await exports.meta(FEEDS.proxies, DATE, '5');
          const res = await http.inject({ url: await exports.download(FEEDS.proxies, DATE, '5') });
          assert.equal(res.statusCode, 200, 'it downloads');
          assert.equal(sha(res.rawPayload), meta.checksum, 'the metadata checksum is the SHA-256 of the bytes served');
          assert.equal((await readParquet(new Uint8Array(res.rawPayload))).numRows, meta.rows);
          return { meta, report };
        } finally {
          db.close();
        }
      };

      let current = (await restart()).meta;
      let rows = SEED;
      const outcomes: string[] = [];
      // Points of the publish, in order, then kills spread over the whole job by time.
      const kills: Array<{ killAt?: string; killAfterMs?: number; expect?: 'old' | 'new' }> = [
        { killAt: 'intent', expect: 'old' },
        { killAt: 'put-temp', expect: 'old' },
        { killAt: 'put-renamed', expect: 'new' },
        { killAt: 'put-done', expect: 'new' },
        ...[20, 50, 80, 110].map((killAfterMs) => ({ killAfterMs })),
      ];
      for (const kill of kills) {
        // Late records first, so the rerun writes other bytes than the listed ones.
        const { finished } = await runCrashChild(dir, 'reexport', H5, LATE, kill);
        rows += LATE;
        const { meta, report } = await restart();
        const kept = meta.checksum === current.checksum;
        assert.equal(meta.rows, kept ? current.rows : rows);
        if (kill.expect) {
          assert.equal(finished, false, `${kill.killAt}: killed`);
          assert.equal(kept, kill.expect === 'old', `${kill.killAt}: ${kill.expect} bytes listed`);
          assert.equal(
            report.completed.length,
            kill.expect === 'new' ? 1 : 0,
            `${kill.killAt}: an upload that finished is completed on restart`,
          );
          assert.equal(
            report.pending,
            kill.expect === 'old' ? 1 : 0,
            `${kill.killAt}: an upload that did not is left for its owner until stale`,
          );
        }
        outcomes.push(
          `${kill.killAt ?? `${kill.killAfterMs}ms`}: ${finished ? 'finished' : 'killed'}, listed ${kept ? 'old' : 'new'} bytes ` +
            `(${meta.rows} rows)${report.completed.length ? ', completed on restart' : ''}`,
        );
        current = meta;
      }

      // An hour on, what is still pending was cut short: dropped, the listed file untouched.
      clock.advance(INTENT_STALE_MS);
      const later = await restart();
      assert.equal(later.report.pending, 0);
      assert.equal(later.meta.checksum, current.checksum);
      clock.advance(-INTENT_STALE_MS);
      assert.equal((await runCrashChild(dir, 'hourly', H5, 0)).finished, true, 'a rerun completes');
      const done = await restart();
      assert.equal(done.meta.rows, rows, 'with every record of the hour');
      console.log(outcomes.join('\n'));
    } finally {
      await http.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
