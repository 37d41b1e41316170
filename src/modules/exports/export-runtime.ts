import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { FeedId } from '../feeds/feed-catalog.ts';
import type { DamageReport, ExportJobDeps } from './export-job.ts';
import { DEFAULT_SCHEDULE, ExportScheduler, type SchedulerHooks } from './export-scheduler.ts';
import { JobLane } from './job-lane.ts';
import { EXPORT_LOCK, EXPORT_LOCK_WAIT_MS, LocalJobLock, type JobLock, waitForJobLock } from './job-lock.ts';
import { manualJob, runManualJob, type ManualJobRequest } from './manual-jobs.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { recoverPublishes, type RecoveryReport } from './publish-recovery.ts';
import type { Snapshot } from './snapshot-catalog.ts';

export interface ExportRuntimeOptions {
  /** The stores and clock the jobs work on; the writer is made here, on first use. */
  deps: Omit<ExportJobDeps, 'writer' | 'onDamagedLines'>;
  feeds: readonly FeedId[];
  /** Run the hourly and daily jobs on their schedule (UMBRA_EXPORT_JOBS); manual jobs run either way. */
  scheduled: boolean;
  /** Whose turn it is among the nodes (distributed mode); default: this process alone. */
  lock?: JobLock;
  /** How soon a failed or lock-busy pass is tried again (ms); default a minute. */
  retryMs?: number;
  hooks: Pick<SchedulerHooks, 'onDone' | 'onError' | 'onBusy'> & {
    onDamagedLines: (r: DamageReport) => void;
    onRecovered: (r: RecoveryReport) => void;
  };
}

/**
 * The export jobs of this process: the scheduler (when on) and the jobs an operator asks for
 * (`umbra exports run-hourly|rollup` through the internal endpoint), all in one lane, so no two jobs
 * of this process ever overlap. The DuckDB writer is made on first use and closed at stop.
 */
export class ExportRuntime implements Lifecycle {
  readonly name = 'export jobs';
  private readonly lane = new JobLane();
  private writer: ParquetWriter | undefined;
  private jobDeps: ExportJobDeps | undefined;
  scheduler: ExportScheduler | undefined;

  private readonly lock: JobLock;

  constructor(private readonly o: ExportRuntimeOptions) {
    this.lock = o.lock ?? new LocalJobLock();
  }

  private async deps(): Promise<ExportJobDeps> {
    this.writer ??= await ParquetWriter.create({ spoolDir: this.o.deps.workDir });
    return (this.jobDeps ??= { ...this.o.deps, writer: this.writer, onDamagedLines: this.o.hooks.onDamagedLines });
  }

  async start(): Promise<void> {
    if (!this.o.scheduled) return;
    const { onDone, onError, onDamagedLines, onRecovered, onBusy } = this.o.hooks;
    this.scheduler = new ExportScheduler(
      await this.deps(),
      this.o.feeds,
      this.o.deps.clock,
      { ...DEFAULT_SCHEDULE, retryMs: this.o.retryMs ?? DEFAULT_SCHEDULE.retryMs },
      { onDone, onError, onDamagedLines, onRecovered, onBusy },
      this.lane,
      this.lock,
    );
    this.scheduler.start();
  }

  /**
   * Validates and runs an operator's job now, after settling publishes a crash interrupted; waits for
   * a pass another node is running (up to a minute, then 503).
   */
  run(request: ManualJobRequest): Promise<Snapshot[]> {
    const job = manualJob(request, this.o.deps.clock.now());
    return this.lane.run(async () => {
      const held = await waitForJobLock(this.lock, EXPORT_LOCK, EXPORT_LOCK_WAIT_MS);
      try {
        const deps = await this.deps();
        const settled = await recoverPublishes(deps);
        if (settled.completed.length + settled.abandoned.length > 0) this.o.hooks.onRecovered(settled);
        return await runManualJob(deps, job);
      } finally {
        await held.release();
      }
    });
  }

  async stop(): Promise<void> {
    await this.scheduler?.stop();
    this.writer?.close();
  }
}
