import { join } from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { systemClock } from '../lib/clock.ts';
import { runRollup } from '../modules/exports/daily-rollup-job.ts';
import type { ExportJobDeps } from '../modules/exports/export-job.ts';
import { runHourly } from '../modules/exports/hourly-snapshot-job.ts';
import { ParquetWriter } from '../modules/exports/parquet-writer.ts';
import { recoverPublishes } from '../modules/exports/publish-recovery.ts';
import { parseSnapshotRef, snapshotId } from '../modules/exports/snapshot-id.ts';
import type { Snapshot } from '../modules/exports/snapshot-catalog.ts';
import { FEED_IDS, FEED_LIST, findFeed, type FeedDef } from '../modules/feeds/feed-catalog.ts';
import { HOUR_MS, hourOf } from '../modules/feeds/feed-log.ts';
import { createStores } from '../storage/index.ts';
import { action } from './context.ts';
import { signingKeys } from './local-secrets.ts';
import { wholeArg, type Output } from './output.ts';
import { createProgress } from './progress.ts';

function feedsOf(name: string | undefined): FeedDef[] {
  if (name === undefined) return [...FEED_LIST];
  const feed = findFeed(name);
  if (!feed) throw AppError.field('feed', `unknown feed '${name}'; one of ${FEED_IDS.join(', ')}`);
  return [feed];
}

/**
 * The export jobs on this data dir's stores (they work while the server runs: writes are atomic),
 * after settling publishes a crash interrupted, so a job starts from a catalog that matches the store.
 */
async function withJobs<T>(config: Config, out: Output, use: (deps: ExportJobDeps) => Promise<T>): Promise<T> {
  const stores = createStores({ ...config, signingKeys: signingKeys(config) });
  const writer = await ParquetWriter.create({ spoolDir: join(config.dataDir, 'export-work') });
  try {
    const deps: ExportJobDeps = {
      feedLog: stores.feedLog, store: stores.objects, catalog: stores.snapshots, writer, clock: systemClock, workDir: join(config.dataDir, 'export-work'),
      onDamagedLines: (r) => out.info(`umbra: ${r.feed} ${new Date(r.hourStartMs).toISOString().slice(0, 13)}h: ${r.skipped} damaged log line(s) left out, ${r.repaired} record(s) recovered from them`),
    };
    const recovered = await recoverPublishes(deps);
    for (const s of recovered.completed) out.info(`umbra: ${s.feed} ${snapshotId(s.date, s.hour)}: completed a publish interrupted by a crash (its upload had finished)`);
    for (const s of recovered.abandoned) out.info(`umbra: ${s.feed} ${snapshotId(s.date, s.hour)}: dropped a publish interrupted by a crash before its upload (the previous file stays listed)`);
    return await use(deps);
  } finally {
    writer.close();
    await stores.close();
  }
}

async function runAll(out: Output, feeds: FeedDef[], label: string, job: (f: FeedDef) => Promise<Snapshot>): Promise<Snapshot[]> {
  const progress = createProgress(true);
  const done: Snapshot[] = [];
  try {
    for (const f of feeds) {
      done.push(await job(f));
      progress.update({ phase: label, done: done.length, total: feeds.length });
    }
  } finally {
    progress.stop();
  }
  out.result(done, () => done.map((s) => `${s.feed} ${snapshotId(s.date, s.hour)}: ${s.rows} rows, ${s.size} bytes, sha256 ${s.checksum}`).join('\n'));
  return done;
}

/** `umbra exports run-hourly|rollup|list`: run and watch the snapshot jobs by hand. */
export function registerExports(program: Command): void {
  const exportsCmd = program.command('exports').description('parquet snapshots of the feeds');
  exportsCmd
    .command('run-hourly')
    .description('write hourly snapshots (default: the last complete UTC hour, every feed)')
    .option('--feed <feed>', 'only this feed')
    .option('--date <date>', 'UTC date YYYY-MM-DD (with --hour)')
    .option('--hour <hour>', 'UTC hour 0..23')
    .action(
      action(async (out, configOf, o: { feed?: string; date?: string; hour?: string }) => {
        const feeds = feedsOf(o.feed);
        if ((o.date === undefined) !== (o.hour === undefined)) throw AppError.field('hour', '--date and --hour go together');
        let hourMs = hourOf(Date.now()) - HOUR_MS;
        if (o.date !== undefined) {
          const ref = parseSnapshotRef(o.date, o.hour);
          if (ref.date === 'latest') throw AppError.field('date', 'must be a UTC date YYYY-MM-DD');
          hourMs = Date.parse(`${ref.date}T00:00:00Z`) + ref.hour! * HOUR_MS;
        }
        if (hourMs + HOUR_MS > Date.now()) throw AppError.field('hour', 'must be a complete hour (in the past)');
        await withJobs(configOf(), out, (deps) => runAll(out, feeds, 'hourly snapshots', (f) => runHourly(deps, f.id, hourMs)));
      }),
    );
  exportsCmd
    .command('rollup')
    .description("roll a UTC date's hours into its daily snapshot, then delete the hourly ones")
    .requiredOption('--date <date>', 'UTC date YYYY-MM-DD (a past date)')
    .option('--feed <feed>', 'only this feed')
    .action(
      action(async (out, configOf, o: { date: string; feed?: string }) => {
        const ref = parseSnapshotRef(o.date);
        if (ref.date === 'latest' || Date.parse(`${ref.date}T00:00:00Z`) + 86_400_000 > Date.now()) throw AppError.field('date', 'must be a complete past UTC date YYYY-MM-DD');
        await withJobs(configOf(), out, (deps) => runAll(out, feedsOf(o.feed), `rollup ${ref.date}`, (f) => runRollup(deps, f.id, ref.date)));
      }),
    );
  exportsCmd
    .command('list')
    .description('the snapshots of a feed, newest first')
    .argument('<feed>', 'feed id or URL segment')
    .option('--limit <n>', 'how many (default 100)')
    .action(
      action(async (out, configOf, name: string, o: { limit?: string }) => {
        const [feed] = feedsOf(name);
        const limit = wholeArg('limit', o.limit, 1) ?? 100;
        const config = configOf();
        const stores = createStores({ ...config, signingKeys: signingKeys(config) });
        try {
          const { items } = await stores.snapshots.list(feed!.id, { limit });
          out.result(items, () => (items.length ? items.map((s) => `${snapshotId(s.date, s.hour).padEnd(14)} ${s.kind.padEnd(7)} ${String(s.rows).padStart(9)} rows ${String(s.size).padStart(11)} B  ${s.checksum}`).join('\n') : 'no snapshots'));
        } finally {
          await stores.close();
        }
      }),
    );
}
