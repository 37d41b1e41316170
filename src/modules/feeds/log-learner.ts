import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { FeedLog } from './feed-log.ts';
import type { FeedObserver } from './ingest-service.ts';
import type { LineDamage } from './log-lines.ts';
import { replayLog } from './log-replay.ts';

export interface LogLearnerOptions {
  /** What learns (for logs): "domain aggregates", "intelligence index". */
  name: string;
  log: FeedLog;
  /** Where new records come from once the replay is done. */
  ingest: { observe(observer: FeedObserver): void };
  feeds: readonly FeedDef[];
  /** How far back the replay reads (ms before now). */
  windowMs: number;
  now: () => number;
  observer: FeedObserver;
  onDamage?: (feed: FeedDef, hourStartMs: number, damage: LineDamage) => void;
  onReplayed?: (records: number, ms: number) => void;
}

/**
 * In-memory state learnt from the feeds (domain aggregates, the intelligence index): at start it is
 * rebuilt from the durable log's window, then ingestion keeps it current.
 */
export class LogLearner implements Lifecycle {
  readonly name: string;

  constructor(private readonly o: LogLearnerOptions) {
    this.name = o.name;
  }

  async start(): Promise<void> {
    const started = Date.now();
    const records = await replayLog(this.o.log, this.o.feeds, this.o.now() - this.o.windowMs, this.o.observer, this.o.onDamage);
    this.o.onReplayed?.(records, Date.now() - started);
    this.o.ingest.observe(this.o.observer);
  }

  async stop(): Promise<void> {}
}
