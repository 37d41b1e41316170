import type { FeedId } from '../feeds/feed-catalog.ts';
import { publishSnapshot, type ExportJobDeps } from './export-job.ts';
import { writeDay, type DaySources } from './rollup-sources.ts';
import type { Snapshot } from './snapshot-catalog.ts';
import { dailyKey } from './snapshot-keys.ts';
import { dayStartMs } from '../../lib/time.ts';

/**
 * Rolls a UTC date of a feed into `{feed}/{YYYY}/{MM}/{DD}/{feed}.parquet`, then removes that date's
 * hourly snapshots.
 *
 * The FeedLog stays the source of truth: hourly files are reused only while they match it (see
 * writeDay), so records that arrived after their hour was snapshotted are included, and a missing or
 * replaced hourly file loses nothing. Rows keep log order (hour by hour, append order within an
 * hour), which is deterministic; sorting by timestamp would need a tie-breaker and not every feed has
 * a timestamp column.
 *
 * Crash-safe and idempotent: state `assembling` until the daily row is recorded, then `done`; a rerun
 * of an unfinished rollup starts over (the hourly files are still there), a rerun of a finished one
 * only completes the cleanup of hourly objects (deleted before their rows, so a crash leaves rows to
 * retry from).
 */
export async function runRollup(deps: ExportJobDeps, feed: FeedId, date: string, report?: (s: DaySources) => void): Promise<Snapshot> {
  if (Number.isNaN(dayStartMs(date))) throw new Error(`not a date: ${date}`);
  const nowSec = () => Math.floor(deps.clock.now() / 1000);
  let daily = await deps.catalog.get(feed, date);
  if (!daily || (await deps.catalog.rollupState(feed, date))?.state !== 'done') {
    await deps.catalog.setRollupState(feed, date, 'assembling', nowSec());
    daily = await publishSnapshot(deps, { feed, kind: 'daily', date, hour: null, key: dailyKey(feed, date) }, async (out, kv) => {
      const { sources, ...info } = await writeDay(deps, feed, date, out, kv);
      report?.(sources);
      return info;
    });
    await deps.catalog.setRollupState(feed, date, 'done', nowSec());
  }
  // At most 24 objects, deleted together (unlinks on a busy disk take ms each), all before their rows.
  await Promise.all((await deps.catalog.hourlyOf(feed, date)).map((s) => deps.store.delete(s.key)));
  await deps.catalog.deleteHourly(feed, date);
  return daily;
}
