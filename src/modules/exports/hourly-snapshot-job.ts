import type { FeedId } from '../feeds/feed-catalog.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { hourSource, publishSnapshot, type ExportJobDeps } from './export-job.ts';
import type { Snapshot } from './snapshot-catalog.ts';
import { hourlyKey } from './snapshot-keys.ts';
import { utcDate, utcHour } from '../../lib/time.ts';

/**
 * Snapshots one complete UTC hour of a feed to `{feed}/latest/{HH}_{feed}.parquet`; the `latest`
 * alias follows (catalog.latestHourly). Rerunning an hour rewrites identical bytes (DuckDB output is
 * deterministic, whichever way the lines reach it), so retries and restarts are safe. The snapshot
 * records the log version it was made from, so the rollup can tell whether it is still current.
 */
export async function runHourly(deps: ExportJobDeps, feed: FeedId, hourStartMs: number): Promise<Snapshot> {
  if (hourStartMs % HOUR_MS !== 0) throw new Error(`not an hour start: ${new Date(hourStartMs).toISOString()}`);
  const date = utcDate(hourStartMs);
  // Hours of a rolled-up date are served by the daily file (and answered 400); never recreate them.
  if ((await deps.catalog.rollupState(feed, date))?.state === 'done') throw new Error(`${feed} ${date} is already rolled up`);
  const source = await hourSource(deps, feed, hourStartMs);
  return publishSnapshot(
    deps,
    { feed, kind: 'hourly', date, hour: utcHour(hourStartMs), key: hourlyKey(feed, hourStartMs) },
    source.write,
    source.version,
  );
}
