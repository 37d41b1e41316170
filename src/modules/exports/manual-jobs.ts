import { AppError } from '../../errors.ts';
import { FEED_IDS, FEED_LIST, findFeed, type FeedDef } from '../feeds/feed-catalog.ts';
import { HOUR_MS, hourOf } from '../../lib/time.ts';
import { runRollup } from './daily-rollup-job.ts';
import type { ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import type { Snapshot } from './snapshot-catalog.ts';
import { parseSnapshotRef } from './snapshot-id.ts';
import { DAY_MS } from '../../lib/time.ts';

/** An export job an operator asked for now (`umbra exports run-hourly|rollup`), validated. */
export type ManualJob = { kind: 'hourly'; feeds: FeedDef[]; hourStartMs: number } | { kind: 'rollup'; feeds: FeedDef[]; date: string };

/** What an operator may ask for: the CLI's flags, or the same as the internal endpoint's JSON body. */
export interface ManualJobRequest {
  job: string;
  feed?: string;
  date?: string;
  hour?: string | number;
}

function feedsOf(name: string | undefined): FeedDef[] {
  if (name === undefined) return [...FEED_LIST];
  const feed = findFeed(name);
  if (!feed) throw AppError.field('feed', `unknown feed '${name}'; one of ${FEED_IDS.join(', ')}`);
  return [feed];
}

/**
 * Validates a request to run a job now. Hourly: a complete past UTC hour (default: the last one);
 * rollup: a complete past UTC date. Throws a validation error naming the field.
 */
export function manualJob(r: ManualJobRequest, nowMs: number): ManualJob {
  const feeds = feedsOf(r.feed);
  const hour = r.hour === undefined ? undefined : String(r.hour);
  if (r.job === 'hourly') {
    if ((r.date === undefined) !== (hour === undefined)) throw AppError.field('hour', 'date and hour go together');
    let hourStartMs = hourOf(nowMs) - HOUR_MS;
    if (r.date !== undefined) {
      const ref = parseSnapshotRef(r.date, hour);
      if (ref.date === 'latest') throw AppError.field('date', 'must be a UTC date YYYY-MM-DD');
      hourStartMs = Date.parse(`${ref.date}T00:00:00Z`) + ref.hour! * HOUR_MS;
    }
    if (hourStartMs + HOUR_MS > nowMs) throw AppError.field('hour', 'must be a complete hour (in the past)');
    return { kind: 'hourly', feeds, hourStartMs };
  }
  if (r.job === 'rollup') {
    if (r.date === undefined) throw AppError.field('date', 'is required: a complete past UTC date YYYY-MM-DD');
    const ref = parseSnapshotRef(r.date);
    if (ref.date === 'latest' || Date.parse(`${ref.date}T00:00:00Z`) + DAY_MS > nowMs)
      throw AppError.field('date', 'must be a complete past UTC date YYYY-MM-DD');
    return { kind: 'rollup', feeds, date: ref.date };
  }
  throw AppError.field('job', "must be 'hourly' or 'rollup'");
}

/** Runs the job for each of its feeds in turn; `onDone` after each (progress). */
export async function runManualJob(
  deps: ExportJobDeps,
  job: ManualJob,
  onDone?: (s: Snapshot, done: number, total: number) => void,
): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  for (const f of job.feeds) {
    out.push(job.kind === 'hourly' ? await runHourly(deps, f.id, job.hourStartMs) : await runRollup(deps, f.id, job.date));
    onDone?.(out[out.length - 1]!, out.length, job.feeds.length);
  }
  return out;
}
