import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FeedId } from '../../modules/feeds/feed-catalog.ts';
import type { Snapshot, SnapshotCatalog } from '../../modules/exports/snapshot-catalog.ts';

const schema = { fields: [{ name: 'timestamp', type: 'BIGINT' as const }] };
const hourly = (feed: FeedId, date: string, hour: number, extra: Partial<Snapshot> = {}): Snapshot => ({
  feed,
  kind: 'hourly',
  date,
  hour,
  key: `${feed}/latest/${String(hour).padStart(2, '0')}_${feed}.parquet`,
  size: 100 + hour,
  rows: hour,
  checksum: 'a'.repeat(64),
  schema,
  createdAt: 1_795_000_000 + hour,
  ...extra,
});
const daily = (feed: FeedId, date: string, extra: Partial<Snapshot> = {}): Snapshot => ({
  feed,
  kind: 'daily',
  date,
  hour: null,
  key: `${feed}/${date.replaceAll('-', '/')}/${feed}.parquet`,
  size: 5000,
  rows: 500,
  checksum: 'b'.repeat(64),
  schema,
  createdAt: 1_795_100_000,
  ...extra,
});
const ids = (items: Snapshot[]) => items.map((s) => (s.hour === null ? s.date : `${s.date}/${s.hour}`));

export interface SnapshotCatalogHarness {
  catalog: SnapshotCatalog;
  /**
   * Another instance over the same durable state, as a process started after a crash of the one
   * using `catalog` would open (the first is not closed first).
   */
  reopen(): Promise<SnapshotCatalog>;
  close(): Promise<void>;
}

/** Behaviour every SnapshotCatalog backend must have. */
export function snapshotCatalogContract(backend: string, make: () => Promise<SnapshotCatalogHarness>): void {
  describe(`SnapshotCatalog contract: ${backend}`, () => {
    const withCatalog = async (fn: (c: SnapshotCatalog, h: SnapshotCatalogHarness) => Promise<void>) => {
      const h = await make();
      try {
        await fn(h.catalog, h);
      } finally {
        await h.close();
      }
    };

    it('should upsert and get hourly and daily rows, with every field kept', async () => {
      await withCatalog(async (c) => {
        const h = hourly('anonymizers', '2026-11-22', 5);
        await c.upsert(h);
        await c.upsert(daily('anonymizers', '2026-11-21'));
        assert.deepEqual(await c.get('anonymizers', '2026-11-22', 5), h);
        assert.deepEqual(await c.get('anonymizers', '2026-11-21'), daily('anonymizers', '2026-11-21'));
        assert.deepEqual(await c.get('anonymizers', '2026-11-21', null), daily('anonymizers', '2026-11-21'));
        assert.equal(await c.get('anonymizers', '2026-11-22'), undefined, 'no daily for that date');
        assert.equal(await c.get('anonymizers', '2026-11-22', 6), undefined);
        assert.equal(await c.get('proxies', '2026-11-22', 5), undefined, 'feeds are separate');
        await c.upsert({ ...h, rows: 99, checksum: 'c'.repeat(64) });
        assert.equal((await c.get('anonymizers', '2026-11-22', 5))?.rows, 99, 'upsert replaces');
        await assert.rejects(c.upsert({ ...h, hour: null }));
        const versioned = hourly('anonymizers', '2026-11-22', 6, { sourceVersion: '1234:5678' });
        await c.upsert(versioned);
        assert.deepEqual(await c.get('anonymizers', '2026-11-22', 6), versioned, 'the source version is kept');
        await c.upsert(hourly('anonymizers', '2026-11-22', 6));
        assert.equal((await c.get('anonymizers', '2026-11-22', 6))?.sourceVersion, undefined, 'and replaced with the rest');
      });
    });

    it('should list newest first with daily and hourly interleaved, paging with a cursor', async () => {
      await withCatalog(async (c) => {
        for (const d of ['2026-11-18', '2026-11-19', '2026-11-20']) await c.upsert(daily('torrents', d));
        // Yesterday's hours during its rollup, and today's.
        for (const h of [22, 23]) await c.upsert(hourly('torrents', '2026-11-21', h, { key: `torrents/x/${h}_y.parquet` }));
        await c.upsert(daily('torrents', '2026-11-21'));
        for (const h of [0, 1, 2]) await c.upsert(hourly('torrents', '2026-11-22', h));
        const all = [
          '2026-11-22/2',
          '2026-11-22/1',
          '2026-11-22/0',
          '2026-11-21/23',
          '2026-11-21/22',
          '2026-11-21',
          '2026-11-20',
          '2026-11-19',
          '2026-11-18',
        ];
        const one = await c.list('torrents', { limit: 100 });
        assert.deepEqual(ids(one.items), all);
        assert.equal(one.next, undefined);
        const seen: string[] = [];
        let page = await c.list('torrents', { limit: 4 });
        for (;;) {
          seen.push(...ids(page.items));
          assert.ok(page.items.length <= 4);
          if (!page.next) break;
          page = await c.list('torrents', { limit: 4, before: page.next });
        }
        assert.deepEqual(seen, all);
        const exact = await c.list('torrents', { limit: 9 });
        assert.equal(exact.next, undefined, 'no cursor when nothing is left');
        assert.deepEqual((await c.list('ja4t', { limit: 5 })).items, []);
      });
    });

    it('should count the listed snapshots per feed and kind, and in all, leaving intents out', async () => {
      await withCatalog(async (c) => {
        assert.equal(await c.count(), 0);
        for (const h of [0, 1, 2]) await c.upsert(hourly('torrents', '2026-11-22', h));
        await c.upsert(daily('torrents', '2026-11-21'));
        await c.upsert(daily('proxies', '2026-11-21'));
        await c.beginPublish(hourly('proxies', '2026-11-22', 4), 1_000);
        assert.equal(await c.count('torrents'), 4);
        assert.equal(await c.count('torrents', 'hourly'), 3);
        assert.equal(await c.count('torrents', 'daily'), 1);
        assert.equal(await c.count('proxies'), 1, 'a publish under way is not listed yet');
        assert.equal(await c.count('ja4t'), 0);
        assert.equal(await c.count(undefined, 'daily'), 2);
        assert.equal(await c.count(), 5);
        // The same hour of the next day takes the key: one row goes as the other comes.
        await c.upsert(hourly('torrents', '2026-11-23', 0));
        assert.equal(await c.count('torrents', 'hourly'), 3);
        assert.equal(await c.deleteHourly('torrents', '2026-11-22'), 2);
        assert.equal(await c.count(), 3);
      });
    });

    it('should track the latest hourly snapshot across days', async () => {
      await withCatalog(async (c) => {
        assert.equal(await c.latestHourly('proxies'), undefined);
        await c.upsert(hourly('proxies', '2026-11-21', 23));
        await c.upsert(daily('proxies', '2026-11-22'));
        assert.deepEqual(ids([(await c.latestHourly('proxies'))!]), ['2026-11-21/23']);
        await c.upsert(hourly('proxies', '2026-11-22', 0));
        assert.deepEqual(ids([(await c.latestHourly('proxies'))!]), ['2026-11-22/0']);
      });
    });

    it('should let a key belong to one snapshot: the same hour of a later day replaces the earlier row', async () => {
      await withCatalog(async (c) => {
        await c.upsert(hourly('ja4t', '2026-11-21', 7));
        await c.upsert(hourly('ja4t', '2026-11-22', 7));
        assert.equal(await c.get('ja4t', '2026-11-21', 7), undefined);
        assert.ok(await c.get('ja4t', '2026-11-22', 7));
        assert.equal(await c.forgetKey(hourly('ja4t', '2026-11-22', 7).key), 1);
        assert.equal(await c.get('ja4t', '2026-11-22', 7), undefined);
        assert.equal(await c.forgetKey('ja4t/latest/nothing.parquet'), 0);
      });
    });

    it('should delete the hourly rows of one date only, and list them by hour', async () => {
      await withCatalog(async (c) => {
        for (const h of [3, 1, 2]) await c.upsert(hourly('honeypot_dns', '2026-11-21', h));
        await c.upsert(hourly('honeypot_dns', '2026-11-22', 0));
        await c.upsert(daily('honeypot_dns', '2026-11-21'));
        assert.deepEqual(
          (await c.hourlyOf('honeypot_dns', '2026-11-21')).map((s) => s.hour),
          [1, 2, 3],
        );
        assert.equal(await c.deleteHourly('honeypot_dns', '2026-11-21'), 3);
        assert.equal(await c.deleteHourly('honeypot_dns', '2026-11-21'), 0);
        assert.deepEqual(ids((await c.list('honeypot_dns', { limit: 10 })).items), ['2026-11-22/0', '2026-11-21']);
      });
    });

    it('should record the rollup state per feed and date', async () => {
      await withCatalog(async (c) => {
        assert.equal(await c.rollupState('proxies', '2026-11-21'), undefined);
        await c.setRollupState('proxies', '2026-11-21', 'assembling', 100);
        assert.deepEqual(await c.rollupState('proxies', '2026-11-21'), { state: 'assembling', updatedAt: 100 });
        await c.setRollupState('proxies', '2026-11-21', 'done', 200);
        assert.deepEqual(await c.rollupState('proxies', '2026-11-21'), { state: 'done', updatedAt: 200 });
        assert.equal(await c.rollupState('torrents', '2026-11-21'), undefined);
      });
    });

    describe('publishing: intent, upload, one step that swaps the rows', () => {
      // Yesterday's hour 5 is listed; today's hour 5 (same key, other bytes) is being published.
      const old = hourly('proxies', '2026-11-21', 5, { checksum: 'a'.repeat(64), rows: 10 });
      const next = hourly('proxies', '2026-11-22', 5, { checksum: 'c'.repeat(64), rows: 20, sourceVersion: '7:700' });

      it('should keep the old row listed while an intent is recorded, and keep the intent across a restart', async () => {
        await withCatalog(async (c, h) => {
          await c.upsert(old);
          await c.beginPublish(next, 1_000);
          assert.deepEqual(await c.get('proxies', '2026-11-21', 5), old, 'the old row stays listed');
          assert.equal(await c.get('proxies', '2026-11-22', 5), undefined, 'the new row is not listed before the upload');
          assert.deepEqual(ids((await c.list('proxies', { limit: 10 })).items), ['2026-11-21/5']);
          // The process is killed here; the next one finds the intent.
          const after = await h.reopen();
          assert.deepEqual(await after.publishIntents(), [{ snapshot: next, startedAtMs: 1_000 }]);
          assert.deepEqual(await after.get('proxies', '2026-11-21', 5), old);
        });
      });

      it('should complete a publish whose upload finished (killed after the upload): the other rows of the key go, the new row is listed, the intent is gone', async () => {
        await withCatalog(async (c, h) => {
          await c.upsert(old);
          await c.upsert(hourly('proxies', '2026-11-21', 6, { key: 'proxies/latest/06_proxies.parquet' }));
          await c.beginPublish(next, 1_000);
          const after = await h.reopen();
          assert.equal(await after.completePublish(next, { onlyIfPending: true }), true);
          assert.equal(
            await after.get('proxies', '2026-11-21', 5),
            undefined,
            "the row of yesterday's bytes, which the key no longer holds",
          );
          assert.deepEqual(await after.get('proxies', '2026-11-22', 5), next);
          assert.ok(await after.get('proxies', '2026-11-21', 6), 'rows of other keys stay');
          assert.deepEqual(await after.publishIntents(), []);
          assert.equal(await after.completePublish(next, { onlyIfPending: true }), false, 'settled once: nothing pending any more');
          assert.deepEqual(await after.latestHourly('proxies'), next);
        });
      });

      it('should abandon a publish whose upload never happened (killed before or during the upload): rows untouched', async () => {
        await withCatalog(async (c, h) => {
          await c.upsert(old);
          await c.beginPublish(next, 1_000);
          const after = await h.reopen();
          assert.equal(await after.abandonPublish(next.key, 'f'.repeat(64)), false, 'only the intent of that checksum');
          assert.equal(await after.abandonPublish(next.key, next.checksum), true);
          assert.equal(await after.abandonPublish(next.key, next.checksum), false);
          assert.deepEqual(await after.publishIntents(), []);
          assert.deepEqual(await after.get('proxies', '2026-11-21', 5), old);
          assert.equal(
            await after.completePublish(next, { onlyIfPending: true }),
            false,
            'a dropped intent is not completed by a late recovery',
          );
          assert.deepEqual(await after.get('proxies', '2026-11-21', 5), old);
        });
      });

      it('should keep one intent per key (the latest attempt), and let its own publisher complete without it', async () => {
        await withCatalog(async (c) => {
          await c.upsert(old);
          await c.beginPublish(next, 1_000);
          const rerun = { ...next, checksum: 'd'.repeat(64), rows: 21 };
          await c.beginPublish(rerun, 2_000);
          const day = daily('torrents', '2026-11-21');
          await c.beginPublish(day, 1_500);
          assert.deepEqual(
            await c.publishIntents(),
            [
              { snapshot: day, startedAtMs: 1_500 },
              { snapshot: rerun, startedAtMs: 2_000 },
            ],
            'oldest first',
          );
          // The first attempt's completion leaves the rerun's intent, whose bytes are not known stored.
          assert.equal(await c.completePublish(next), true);
          assert.deepEqual(
            (await c.publishIntents()).map((i) => i.snapshot.checksum),
            [day.checksum, rerun.checksum],
          );
          assert.equal(await c.completePublish(rerun), true);
          assert.deepEqual(await c.get('proxies', '2026-11-22', 5), rerun);
          assert.deepEqual(
            (await c.publishIntents()).map((i) => i.snapshot.key),
            [day.key],
          );
          await assert.rejects(c.beginPublish({ ...next, hour: null }, 3_000), /an hourly snapshot has an hour/);
        });
      });
    });
  });
}
