import type { FeedId } from '../feeds/feed-catalog.ts';
import { HOUR_MS } from '../feeds/feed-log.ts';
import { concatHours, publishSnapshot, type ExportJobDeps } from './export-job.ts';
import type { Snapshot } from './snapshot-catalog.ts';
import { dailyKey, dayStartMs } from './snapshot-keys.ts';

/**
 * Rolls a UTC date of a feed into `{feed}/{YYYY}/{MM}/{DD}/{feed}.parquet`, then removes that date's
 * hourly snapshots.
 *
 * The day is read from the FeedLog, the source of truth, not from the hourly files: records that
 * arrived after their hour was snapshotted are included, and a missing hourly file loses nothing.
 * Rows keep log order (hour by hour, append order within an hour), which is deterministic; sorting by
 * timestamp would need a tie-breaker and not every feed has a timestamp column.
 *
 * Crash-safe and idempotent: state `assembling` until the daily row is recorded, then `done`; a rerun
 * of an unfinished rollup starts over (same bytes), a rerun of a finished one only completes the
 * cleanup of hourly objects (deleted before their rows, so a crash leaves rows to retry from).
 */
export async function runRollup(deps: ExportJobDeps, feed: FeedId, date: string): Promise<Snapshot> {
  const start = dayStartMs(date);
  if (Number.isNaN(start)) throw new Error(`not a date: ${date}`);
  const nowSec = () => Math.floor(deps.clock.now() / 1000);
  let daily = await deps.catalog.get(feed, date);
  if (!daily || (await deps.catalog.rollupState(feed, date))?.state !== 'done') {
    await deps.catalog.setRollupState(feed, date, 'assembling', nowSec());
    const hours = Array.from({ length: 24 }, (_, h) => start + h * HOUR_MS);
    daily = await publishSnapshot(deps, { feed, kind: 'daily', date, hour: null, key: dailyKey(feed, date) }, concatHours(deps.feedLog, feed, hours));
    await deps.catalog.setRollupState(feed, date, 'done', nowSec());
  }
  for (const s of await deps.catalog.hourlyOf(feed, date)) await deps.store.delete(s.key);
  await deps.catalog.deleteHourly(feed, date);
  return daily;
}
