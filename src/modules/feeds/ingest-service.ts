import type { FeedBus, FeedMessage } from './feed-bus.ts';
import type { FeedDef, FeedId } from './feed-catalog.ts';
import type { FeedLog, FeedLogEntry } from './feed-log.ts';
import type { RecordValidator, RejectReason } from './feed-records.ts';

/** One input record: an NDJSON line, or an already-parsed value (CSV rows, the simulator). `n` is 1-based. */
export type IngestItem = { n: number; text: string } | { n: number; value: unknown } | { n: number; tooLong: number };

export interface RecordError {
  /** 1-based record (line) number in the input. */
  record: number;
  field: string;
  message: string;
  reason: RejectReason;
}

export interface IngestSummary {
  feed: FeedId;
  accepted: number;
  rejected: number;
  byReason: Partial<Record<RejectReason, number>>;
  /** The first MAX_ERRORS errors, each naming the record and the field. */
  errors: RecordError[];
}

/** Called with every durable batch: domain aggregates and the intelligence index learn from it. */
export type FeedObserver = (feed: FeedDef, messages: readonly FeedMessage[]) => void;

export const MAX_ERRORS = 100;
const BATCH = 5000;
const MAX_IN_FLIGHT = 8;

export interface IngestLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Operator ingestion: validate each record, make the good ones durable in the feed log, then publish
 * them to live streams and observers. Bad records are reported and never stop the good ones. A record
 * counts as accepted only once the log has it on disk.
 */
export class IngestService {
  private readonly observers: FeedObserver[] = [];
  private readonly summaryListeners: Array<(s: IngestSummary) => void> = [];

  constructor(
    private readonly log: FeedLog,
    private readonly bus: FeedBus,
    private readonly validator: RecordValidator,
    private readonly logger: IngestLogger,
  ) {}

  observe(observer: FeedObserver): void {
    this.observers.push(observer);
  }

  /** Called after every ingest() with its summary (metrics). */
  onSummary(listener: (s: IngestSummary) => void): void {
    this.summaryListeners.push(listener);
  }

  async ingest(
    feed: FeedDef,
    /** Batches of items (one await per batch keeps per-record overhead low). */
    batches: AsyncIterable<readonly IngestItem[]> | Iterable<readonly IngestItem[]>,
    onProgress?: (s: IngestSummary) => void,
  ): Promise<IngestSummary> {
    const summary: IngestSummary = { feed: feed.id, accepted: 0, rejected: 0, byReason: {}, errors: [] };
    // A valid check result is both the log entry (timeMs, line) and the bus message (record, line).
    let accepted: Array<FeedLogEntry & FeedMessage> = [];
    // Validation of the next batch overlaps the fsync of the previous ones (the log group-commits
    // them); a batch is counted and delivered only after its own append resolved, in input order.
    let chain: Promise<void> = Promise.resolve();
    const inFlight: Promise<void>[] = [];
    const commit = async () => {
      if (accepted.length === 0) return;
      const batch = accepted;
      accepted = [];
      const durable = this.log.append(feed.id, batch);
      chain = chain.then(async () => {
        await durable;
        summary.accepted += batch.length;
        await this.deliver(feed, batch);
        onProgress?.(summary);
      });
      // Errors surface from the final `await chain`; the window only waits, it never throws.
      inFlight.push(chain.catch(() => {}));
      if (inFlight.length >= MAX_IN_FLIGHT) await inFlight.shift();
    };
    for await (const items of batches) for (const item of items) {
      const check =
        'text' in item
          ? this.validator.checkLine(feed, item.text)
          : 'tooLong' in item
            ? ({ ok: false, reason: 'too_long', field: 'record', message: `is longer than ${item.tooLong} bytes` } as const)
            : this.validator.check(feed, item.value);
      if (check.ok) {
        accepted.push(check);
        if (accepted.length >= BATCH) await commit();
      } else {
        summary.rejected++;
        summary.byReason[check.reason] = (summary.byReason[check.reason] ?? 0) + 1;
        if (summary.errors.length < MAX_ERRORS) summary.errors.push({ record: item.n, field: check.field, message: check.message, reason: check.reason });
      }
    }
    await commit();
    await chain;
    for (const l of this.summaryListeners) l(summary);
    return summary;
  }

  /** Live delivery after durability: a bus or observer failure never un-acknowledges a stored record. */
  private async deliver(feed: FeedDef, messages: readonly FeedMessage[]): Promise<void> {
    try {
      await this.bus.publish(feed.id, messages);
    } catch (e) {
      this.logger.warn({ feed: feed.id, err: (e as Error).message, records: messages.length }, 'stored records not published live');
    }
    for (const o of this.observers) {
      try {
        o(feed, messages);
      } catch (e) {
        this.logger.warn({ feed: feed.id, err: (e as Error).message }, 'feed observer failed');
      }
    }
  }
}
