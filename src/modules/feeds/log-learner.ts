import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { FeedBus, FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { FeedLog } from './feed-log.ts';
import type { FeedObserver } from './ingest-service.ts';
import type { LineDamage } from './log-lines.ts';
import { replayLog } from './log-replay.ts';

export interface LogLearnerOptions {
  /** What learns (for logs and /health): "domain aggregates", "intelligence index". */
  name: string;
  log: FeedLog;
  /** Where new records come from once the replay is done (every node's records, in distributed mode). */
  bus: FeedBus;
  feeds: readonly FeedDef[];
  /** How far back the replay reads (ms before now). */
  windowMs: number;
  now: () => number;
  observer: FeedObserver;
  onDamage?: (feed: FeedDef, hourStartMs: number, damage: LineDamage) => void;
  onReplayed?: (records: number, ms: number) => void;
  /** A feed's live delivery ended by a fault: the state stops learning that feed until a restart. */
  onLost?: (feed: FeedDef, err: Error) => void;
  /** The observer threw on a batch: the batch is passed over, learning goes on. */
  onObserverError?: (feed: FeedDef, err: Error) => void;
}

/**
 * In-memory state learnt from the feeds (domain aggregates, the intelligence index): rebuilt at start
 * from the window of records kept, then kept current from the feed bus, so every node learns every
 * node's records.
 *
 * With an in-process bus (embedded), the subscriptions are taken first and the file log is replayed
 * before start() returns; nothing is ingested meanwhile (the server listens only once every part has
 * started, and the data dir's lock keeps other writers out), so no record is missed or seen twice.
 * With a bus that carries the log (JetStream), each feed is followed from the window's start: one
 * sequence of records, replayed then live, each once. start() then returns at once and the learner
 * reports itself as catching up in /health until every feed has reached the records that were newest
 * at start, so a load balancer sends it no traffic meanwhile.
 */
export class LogLearner implements Lifecycle {
  readonly name: string;
  private readonly stopping = new AbortController();
  private readonly pumps: Promise<void>[] = [];
  private catchingUp = new Set<string>();
  private readonly lost = new Map<string, string>();

  constructor(private readonly o: LogLearnerOptions) {
    this.name = o.name;
  }

  async start(): Promise<void> {
    const started = Date.now();
    const signal = this.stopping.signal;
    if (this.o.bus.follow) {
      const follow = this.o.bus.follow.bind(this.o.bus);
      const sinceMs = this.o.now() - this.o.windowMs;
      this.catchingUp = new Set(this.o.feeds.map((f) => f.id));
      let records = 0;
      for (const feed of this.o.feeds) {
        const batches = await follow(feed.id, sinceMs, {
          signal,
          onCaughtUp: () => {
            this.catchingUp.delete(feed.id);
            if (this.catchingUp.size === 0) this.o.onReplayed?.(records, Date.now() - started);
          },
        });
        this.pumps.push(this.pump(feed, batches, (n) => (records += n)));
      }
      return;
    }
    // Maximum buffer: a learner must never be cut off (it would drift silently); it keeps up because
    // observing a record costs far less than validating and storing it.
    const live = await Promise.all(this.o.feeds.map((f) => this.o.bus.subscribe(f.id, { signal, maxBuffered: Number.POSITIVE_INFINITY })));
    const records = await replayLog(this.o.log, this.o.feeds, this.o.now() - this.o.windowMs, this.o.observer, this.o.onDamage);
    this.o.onReplayed?.(records, Date.now() - started);
    for (const [i, feed] of this.o.feeds.entries()) this.pumps.push(this.pump(feed, live[i]!));
  }

  /** Empty once the state is complete; otherwise what is missing (/health). */
  problems(): string[] {
    const out: string[] = [];
    if (this.catchingUp.size > 0) out.push(`${this.name}: catching up with the feed log (${[...this.catchingUp].join(', ')})`);
    for (const [feed, err] of this.lost) out.push(`${this.name}: no longer receives ${feed} records (${err}); restart the node`);
    return out;
  }

  private async pump(feed: FeedDef, batches: AsyncIterable<readonly FeedMessage[]>, counted?: (n: number) => void): Promise<void> {
    try {
      for await (const batch of batches) {
        try {
          this.o.observer(feed, batch);
        } catch (e) {
          this.o.onObserverError?.(feed, e as Error);
        }
        counted?.(batch.length);
      }
    } catch (e) {
      if (this.stopping.signal.aborted) return;
      this.lost.set(feed.id, (e as Error).message);
      this.o.onLost?.(feed, e as Error);
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.pumps);
  }
}
