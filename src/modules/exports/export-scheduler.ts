import type { Clock } from '../../lib/clock.ts';
import type { FeedId } from '../feeds/feed-catalog.ts';
import { HOUR_MS, hourOf } from '../../lib/time.ts';
import { runRollup } from './daily-rollup-job.ts';
import { sweepWorkDir, type DamageReport, type ExportJobDeps } from './export-job.ts';
import { runHourly } from './hourly-snapshot-job.ts';
import { JobLane } from './job-lane.ts';
import { EXPORT_LOCK, LocalJobLock, type JobLock } from './job-lock.ts';
import { recoverPublishes, type RecoveryReport } from './publish-recovery.ts';
import { DAY_MS, dayStartMs, utcDate } from '../../lib/time.ts';

export type DueJob = { kind: 'hourly'; feed: FeedId; hourStartMs: number } | { kind: 'rollup'; feed: FeedId; date: string };

export interface ScheduleOptions {
  /** Wait after an hour boundary so records of the closing hour still in flight land first. */
  hourlyDelayMs: number;
  /** Offset of the daily rollup after 00:00 UTC (spec: 00:30). */
  rollupAtMs: number;
  /** How many past days a restart looks back for missed rollups. */
  lookbackDays: number;
  /**
   * How soon a pass in which a job failed, or in which another node held the export lock, is followed
   * by another (ms): the longest a dead node's work waits for another node (UMBRA_EXPORT_RETRY_S).
   */
  retryMs: number;
}

/** How soon a pass in which a job failed is followed by another, by default (ms). */
export const RETRY_MS = 60_000;

export const DEFAULT_SCHEDULE: ScheduleOptions = { hourlyDelayMs: 60_000, rollupAtMs: 30 * 60_000, lookbackDays: 7, retryMs: RETRY_MS };

/** What the scheduler knows of one feed. */
export interface FeedView {
  feed: FeedId;
  /** Start (ms) of the newest hourly snapshot, if any. */
  latestHourMs?: number;
  /** Dates within the lookback whose rollup is done. */
  rollupsDone: ReadonlySet<string>;
  /** Dates within the lookback that hold records (rollups are only due for these). */
  datesWithData: ReadonlySet<string>;
}

/**
 * Pure: the jobs due at `nowMs`, in time order (a rollup sorts at the end of its day, before the next
 * day's hour 00, whose key it frees). Hourly: every complete hour of the day of the last complete hour
 * not yet snapshotted; normally just the previous hour. Rollups: every date of the lookback that has
 * records and no finished rollup, yesterday only from 00:30 (older ones are a restart's backlog). Hours of
 * a date being rolled up are skipped: the daily file serves them.
 */
export function dueJobs(nowMs: number, views: readonly FeedView[], o: ScheduleOptions = DEFAULT_SCHEDULE): DueJob[] {
  const jobs: { at: number; job: DueJob }[] = [];
  const today = utcDate(nowMs);
  const todayStart = dayStartMs(today);
  for (const v of views) {
    for (let d = o.lookbackDays; d >= 1; d--) {
      const date = utcDate(todayStart - d * DAY_MS);
      if (v.rollupsDone.has(date)) continue;
      // A date without records gets no daily file; yesterday waits for 00:30.
      if (!v.datesWithData.has(date) || (d === 1 && nowMs < todayStart + o.rollupAtMs)) continue;
      jobs.push({ at: dayStartMs(date) + DAY_MS, job: { kind: 'rollup', feed: v.feed, date } });
    }
    const rolling = new Set(jobs.flatMap(({ job }) => (job.kind === 'rollup' && job.feed === v.feed ? [job.date] : [])));
    const lastComplete = hourOf(nowMs - o.hourlyDelayMs) - HOUR_MS;
    const from = Math.max(dayStartMs(utcDate(lastComplete)), v.latestHourMs === undefined ? -Infinity : v.latestHourMs + HOUR_MS);
    for (let h = from; h <= lastComplete; h += HOUR_MS) {
      const date = utcDate(h);
      if (!v.rollupsDone.has(date) && !rolling.has(date)) jobs.push({ at: h, job: { kind: 'hourly', feed: v.feed, hourStartMs: h } });
    }
  }
  // Stable sort; at equal times a rollup (end of day D) goes before hour 00 of D+1.
  return jobs.sort((a, b) => a.at - b.at || (a.job.kind === 'rollup' ? -1 : 0) - (b.job.kind === 'rollup' ? -1 : 0)).map((j) => j.job);
}

/** Pure: when the next job can become due after `nowMs`. */
export function nextWakeMs(nowMs: number, o: ScheduleOptions = DEFAULT_SCHEDULE): number {
  const nextHourly = hourOf(nowMs - o.hourlyDelayMs) + HOUR_MS + o.hourlyDelayMs;
  const todayRollup = dayStartMs(utcDate(nowMs)) + o.rollupAtMs;
  const nextRollup = nowMs < todayRollup ? todayRollup : todayRollup + DAY_MS;
  return Math.min(nextHourly, nextRollup);
}

export interface SchedulerHooks {
  /** `sweep`: removing leftovers of dead jobs at start failed; `recover`: settling interrupted publishes failed. */
  onError?: (job: DueJob | 'sweep' | 'recover', e: Error) => void;
  onDone?: (job: DueJob) => void;
  /** Publishes cut short by a crash were settled (called only when one was completed or abandoned). */
  onRecovered?: (report: RecoveryReport) => void;
  /** Another node holds the export lock: this pass ran nothing (the next comes opts.retryMs later). */
  onBusy?: () => void;
  /** A job left out or repaired damaged lines of an hour partition (ExportJobDeps.onDamagedLines). */
  onDamagedLines?: (report: DamageReport) => void;
  /** Timer, injectable for tests. */
  setTimer?: (fn: () => void, ms: number) => { unref?(): void };
  clearTimer?: (t: unknown) => void;
}

/**
 * Runs due jobs one at a time (a rollup and the next day's hour 00 share a key, so they must not
 * overlap), then sleeps until the next boundary. A failed job is retried a minute later.
 */
export class ExportScheduler {
  private timer: unknown;
  private running: Promise<void> | undefined;
  /** Set by a pass in which a job failed: the next pass comes after opts.retryMs, not at the next boundary. */
  private failed = false;
  private stopped = true;
  private stopping = false;

  constructor(
    private readonly deps: ExportJobDeps,
    private readonly feeds: readonly FeedId[],
    private readonly clock: Clock = deps.clock,
    private readonly opts: ScheduleOptions = DEFAULT_SCHEDULE,
    private readonly hooks: SchedulerHooks = {},
    /** Shared with jobs an operator runs by hand in this process, so no two jobs overlap. */
    readonly lane: JobLane = new JobLane(),
    /** Which node's turn it is (distributed mode); in one process, its own passes only. */
    private readonly lock: JobLock = new LocalJobLock(),
  ) {}

  start(): void {
    this.stopped = false;
    this.stopping = false;
    // Leftovers of jobs killed mid-write; never visible, but they take disk.
    sweepWorkDir(this.deps).catch((e: Error) => this.hooks.onError?.('sweep', e));
    this.arm(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    (this.hooks.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout)))(this.timer);
    await this.running;
  }

  /**
   * One pass, with the cluster's export lock (in this process's lane): settles publishes a crash
   * interrupted (before anything reads the catalog, so an hour whose upload had finished counts as
   * done), then runs what is due now; returns the jobs attempted. When another node holds the lock,
   * nothing runs here and the pass comes again a minute later: that node does the work, and if it died
   * mid-job its lock is gone by then and this node takes over.
   */
  tick(): Promise<DueJob[]> {
    return this.lane.run(async () => {
      const held = await this.lock.tryAcquire(EXPORT_LOCK);
      if (!held) {
        this.failed = true;
        this.hooks.onBusy?.();
        return [];
      }
      try {
        return await this.pass();
      } finally {
        await held.release();
      }
    });
  }

  private async pass(): Promise<DueJob[]> {
    try {
      const report = await recoverPublishes(this.deps);
      if (report.completed.length + report.abandoned.length > 0) this.hooks.onRecovered?.(report);
    } catch (e) {
      this.hooks.onError?.('recover', e as Error);
    }
    const jobs = dueJobs(this.clock.now(), await this.view(), this.opts);
    const { onDamagedLines } = this.hooks;
    const deps = onDamagedLines ? { ...this.deps, onDamagedLines } : this.deps;
    for (const job of jobs) {
      // stop() lets the running job finish, not the rest of the batch.
      if (this.stopping) break;
      try {
        await (job.kind === 'hourly' ? runHourly(deps, job.feed, job.hourStartMs) : runRollup(deps, job.feed, job.date));
        this.hooks.onDone?.(job);
      } catch (e) {
        this.failed = true;
        this.hooks.onError?.(job, e as Error);
      }
    }
    return jobs;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    const set = this.hooks.setTimer ?? ((fn, d) => setTimeout(fn, d));
    const t = set(() => {
      this.failed = false;
      this.running = this.tick().then(
        // A job that failed (a disk full for a moment, the database locked by another process) is
        // tried again a minute later rather than at the next boundary, up to an hour away.
        () => this.arm(this.failed ? this.opts.retryMs : Math.max(0, nextWakeMs(this.clock.now(), this.opts) - this.clock.now())),
        () => this.arm(this.opts.retryMs),
      );
    }, ms);
    t.unref?.();
    this.timer = t;
  }

  private async view(): Promise<FeedView[]> {
    const { catalog, feedLog } = this.deps;
    const todayStart = dayStartMs(utcDate(this.clock.now()));
    const since = todayStart - this.opts.lookbackDays * DAY_MS;
    return Promise.all(
      this.feeds.map(async (feed) => {
        const latest = await catalog.latestHourly(feed);
        const rollupsDone = new Set<string>();
        for (let d = 1; d <= this.opts.lookbackDays; d++) {
          const date = utcDate(todayStart - d * DAY_MS);
          if ((await catalog.rollupState(feed, date))?.state === 'done') rollupsDone.add(date);
        }
        const datesWithData = new Set((await feedLog.hours(feed)).filter((h) => h >= since && h < todayStart).map(utcDate));
        return {
          feed,
          rollupsDone,
          datesWithData,
          ...(latest ? { latestHourMs: Date.parse(`${latest.date}T00:00:00Z`) + latest.hour! * HOUR_MS } : {}),
        };
      }),
    );
  }
}
