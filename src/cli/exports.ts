import { join } from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { systemClock } from '../lib/clock.ts';
import type { ExportJobDeps } from '../modules/exports/export-job.ts';
import { ParquetWriter } from '../modules/exports/parquet-writer.ts';
import { recoverPublishes } from '../modules/exports/publish-recovery.ts';
import { snapshotId } from '../modules/exports/snapshot-id.ts';
import type { Snapshot } from '../modules/exports/snapshot-catalog.ts';
import { FEED_IDS, FEED_LIST, findFeed, type FeedDef } from '../modules/feeds/feed-catalog.ts';
import { type HeldLock, waitForExportLock } from '../modules/exports/job-lock.ts';
import { manualJob, runManualJob, type ManualJobRequest } from '../modules/exports/manual-jobs.ts';
import { EXPORT_JOBS_PATH } from '../http/routes/export-jobs.ts';
import { action, cliStores } from './context.ts';
import { operatorToken, signingKeys } from './local-secrets.ts';
import { dataDirState, describeOwner, withDataDir } from './local-server.ts';
import { UsageError, wholeArg, type Output } from './output.ts';
import { createProgress } from './progress.ts';

function feedsOf(name: string | undefined): FeedDef[] {
  if (name === undefined) return [...FEED_LIST];
  const feed = findFeed(name);
  if (!feed) throw AppError.field('feed', `unknown feed '${name}'; one of ${FEED_IDS.join(', ')}`);
  return [feed];
}

/**
 * The export jobs on this data dir's stores (the caller holds the data dir), after settling publishes
 * a crash interrupted, so a job starts from a catalog that matches the store.
 */
async function withJobs<T>(config: Config, out: Output, use: (deps: ExportJobDeps) => Promise<T>): Promise<T> {
  const stores = await cliStores({ ...config, signingKeys: signingKeys(config) });
  const writer = await ParquetWriter.create({ spoolDir: join(config.dataDir, 'export-work') });
  // Distributed mode: the nodes' export lock, so a job run here never overlaps a node's (it waits for
  // a pass under way, as a job asked of a node does).
  let held: HeldLock | undefined;
  try {
    held = await waitForExportLock(stores.jobLock);
    const deps: ExportJobDeps = {
      feedLog: stores.feedLog,
      store: stores.objects,
      catalog: stores.snapshots,
      writer,
      clock: systemClock,
      workDir: join(config.dataDir, 'export-work'),
      onDamagedLines: (r) =>
        out.info(
          `umbra: ${r.feed} ${new Date(r.hourStartMs).toISOString().slice(0, 13)}h: ${r.skipped} damaged log line(s) left out, ` +
            `${r.repaired} record(s) recovered from them`,
        ),
    };
    const recovered = await recoverPublishes(deps);
    for (const s of recovered.completed)
      out.info(`umbra: ${s.feed} ${snapshotId(s.date, s.hour)}: completed a publish interrupted by a crash (its upload had finished)`);
    for (const s of recovered.abandoned)
      out.info(
        `umbra: ${s.feed} ${snapshotId(s.date, s.hour)}: dropped a publish interrupted by a crash before its upload (the previous file ` +
          `stays listed)`,
      );
    return await use(deps);
  } finally {
    await held?.release();
    writer.close();
    await stores.close();
  }
}

/**
 * Runs an operator's job: through the server that holds the data dir when one runs (it owns the
 * exports and runs jobs one at a time), else here, holding the data dir while the job writes.
 */
async function runJob(out: Output, config: Config, request: ManualJobRequest): Promise<void> {
  const job = manualJob(request, Date.now());
  const label = job.kind === 'hourly' ? 'hourly snapshots' : `rollup ${job.date}`;
  const state = dataDirState(config);
  if (state.kind === 'busy')
    throw new UsageError(
      `the data dir ${config.dataDir} is in use by ${describeOwner(state.owner)}; nothing was written (try again once it has finished)`,
    );
  let done: Snapshot[];
  if (state.kind === 'server') {
    out.info(`asking the server at ${state.url} to run it (it owns this data dir)`);
    done = await remoteJob(state.url, config, request);
  } else {
    const progress = createProgress(true);
    try {
      done = await withDataDir(config, `exports ${job.kind}`, () =>
        withJobs(config, out, (deps) => runManualJob(deps, job, (_s, n, total) => progress.update({ phase: label, done: n, total }))),
      );
    } finally {
      progress.stop();
    }
  }
  out.result(done, () =>
    done
      .map((s) => `${s.feed} ${'id' in s ? s.id : snapshotId(s.date, s.hour)}: ${s.rows} rows, ${s.size} bytes, sha256 ${s.checksum}`)
      .join('\n'),
  );
}

/** The internal endpoint's answer: the snapshots the server wrote. */
type RemoteSnapshot = Pick<Snapshot, 'feed' | 'kind' | 'rows' | 'size' | 'checksum'> & { id: string };

async function remoteJob(base: string, config: Config, request: ManualJobRequest): Promise<Snapshot[]> {
  const token = operatorToken(config, false);
  if (!token)
    throw new UsageError(`no operator token: set UMBRA_OPERATOR_TOKEN or run on the server's data dir (${config.operatorTokenFile})`);
  const body = { ...request, ...(request.hour === undefined ? {} : { hour: Number(request.hour) }) };
  const res = await fetch(`${base}${EXPORT_JOBS_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { snapshots?: RemoteSnapshot[]; detail?: string; errors?: Record<string, string[]> };
  if (res.status === 400 && answer.errors) throw AppError.validation(answer.errors);
  if (res.status !== 200 || !answer.snapshots) throw new UsageError(`the server answered ${res.status}: ${answer.detail ?? ''}`);
  return answer.snapshots as unknown as Snapshot[];
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
      action(async (out, configOf, o: { feed?: string; date?: string; hour?: string }) => runJob(out, configOf(), { job: 'hourly', ...o })),
    );
  exportsCmd
    .command('rollup')
    .description("roll a UTC date's hours into its daily snapshot, then delete the hourly ones")
    .requiredOption('--date <date>', 'UTC date YYYY-MM-DD (a past date)')
    .option('--feed <feed>', 'only this feed')
    .action(action(async (out, configOf, o: { date: string; feed?: string }) => runJob(out, configOf(), { job: 'rollup', ...o })));
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
        const stores = await cliStores({ ...config, signingKeys: signingKeys(config) });
        try {
          const { items } = await stores.snapshots.list(feed!.id, { limit });
          out.result(items, () =>
            items.length
              ? items
                  .map(
                    (s) =>
                      `${snapshotId(s.date, s.hour).padEnd(14)} ${s.kind.padEnd(7)} ${String(s.rows).padStart(9)} rows ` +
                      `${String(s.size).padStart(11)} B  ${s.checksum}`,
                  )
                  .join('\n')
              : 'no snapshots',
          );
        } finally {
          await stores.close();
        }
      }),
    );
}
