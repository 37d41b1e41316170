import type { FeedBus, FeedMessage } from './feed-bus.ts';
import type { FeedDef, FeedId } from './feed-catalog.ts';
import type { FeedLog, FeedLogEntry } from './feed-log.ts';
import type { RecordValidator, RejectReason } from './feed-records.ts';
import { AppError, dependencyFault } from '../../errors.ts';

/** A record the input's reader already refused (a CSV row it could not read), with why. */
export interface RefusedRecord {
  reason: RejectReason;
  field: string;
  message: string;
}

/**
 * One input record: an NDJSON line, an already-parsed value (CSV rows, the simulator), a line too long
 * to read, or a record its reader refused. `n` is 1-based: the line it starts on.
 */
export type IngestItem =
  | { n: number; text: string }
  | { n: number; value: unknown }
  | { n: number; tooLong: number }
  | { n: number; refused: RefusedRecord };

export interface RecordError {
  /** 1-based record (line) number in the input. */
  record: number;
  field: string;
  message: string;
  reason: RejectReason;
}

/** The answer of an ingest (HTTP and `umbra ingest`), snake_case like the rest of the API. */
export interface IngestSummary {
  feed: FeedId;
  accepted: number;
  rejected: number;
  by_reason: Partial<Record<RejectReason, number>>;
  /** The first MAX_ERRORS errors, each naming the record and the field. */
  errors: RecordError[];
}

/** What learns from records (domain aggregates, the intelligence index), fed by LogLearner from the log and the bus. */
export type FeedObserver = (feed: FeedDef, messages: readonly FeedMessage[]) => void;

export const MAX_ERRORS = 100;
const BATCH = 5000;
/** Valid records held while an append is in flight, before validation waits for it. */
const MAX_BUFFERED = 40_000;

export interface IngestLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Operator ingestion: validate each record, make the good ones durable in the feed log, then publish
 * them to live streams (every node's learners and streams get them from the bus). Bad records are reported and never stop the good ones. A record
 * counts as accepted only once the log has it on disk.
 */
export class IngestService {
  private readonly summaryListeners: Array<(s: IngestSummary) => void> = [];

  constructor(
    private readonly log: FeedLog,
    private readonly bus: FeedBus,
    private readonly validator: RecordValidator,
    private readonly logger: IngestLogger,
  ) {}

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
    const summary: IngestSummary = { feed: feed.id, accepted: 0, rejected: 0, by_reason: {}, errors: [] };
    // A valid check result is both the log entry (timeMs, line) and the bus message (record, line).
    let accepted: Array<FeedLogEntry & FeedMessage> = [];
    let lastRecord = 0;
    // Every valid record numbered up to this one is durable; none after it is, when an append fails.
    let storedThrough = 0;
    // One append in flight at a time: the next records are validated while its fsync runs (the log
    // group-commits appends of concurrent requests), and a failed append stops the ingest with
    // everything before it stored and nothing after it.
    let inFlight: Promise<void> | undefined;
    let failure: { error: unknown } | undefined;
    const submit = () => {
      const batch = accepted;
      const through = lastRecord;
      accepted = [];
      inFlight = this.log.append(feed.id, batch).then(
        async () => {
          summary.accepted += batch.length;
          storedThrough = through;
          // Delivered before the next append starts, so streams see batches in input order.
          await this.deliver(feed, batch);
          inFlight = undefined;
          onProgress?.(summary);
        },
        (error: unknown) => {
          failure ??= { error };
          inFlight = undefined;
        },
      );
    };
    const settle = async () => {
      while (inFlight) await inFlight;
      if (failure) throw interrupted(failure.error, summary, storedThrough);
    };
    for await (const items of batches) {
      // A synchronous input (the simulator, a CSV already in memory) would otherwise validate up to
      // MAX_BUFFERED records without letting timers and sockets run: a networked log's acknowledgement
      // deadline would fire on a healthy engine, and other requests would wait.
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (const item of items) {
        lastRecord = item.n;
        const check =
          'text' in item
            ? this.validator.checkLine(feed, item.text)
            : 'tooLong' in item
              ? ({ ok: false, reason: 'too_long', field: 'record', message: `is longer than ${item.tooLong} bytes` } as const)
              : 'refused' in item
                ? ({ ok: false, ...item.refused } as const)
                : this.validator.check(feed, item.value);
        if (check.ok) {
          accepted.push(check);
          if (accepted.length >= BATCH && inFlight === undefined) {
            if (failure) await settle();
            submit();
          } else if (accepted.length >= MAX_BUFFERED) {
            await settle();
            submit();
          }
        } else {
          summary.rejected++;
          summary.by_reason[check.reason] = (summary.by_reason[check.reason] ?? 0) + 1;
          if (summary.errors.length < MAX_ERRORS)
            summary.errors.push({ record: item.n, field: check.field, message: check.message, reason: check.reason });
        }
      }
      if (failure) await settle();
    }
    await settle();
    if (accepted.length > 0) {
      submit();
      await settle();
    }
    for (const l of this.summaryListeners) l(summary);
    return summary;
  }

  /**
   * Live delivery after durability: a bus failure never un-acknowledges a stored record. A bus that
   * carries the log already has the records from the append.
   */
  private async deliver(feed: FeedDef, messages: readonly FeedMessage[]): Promise<void> {
    if (this.bus.carriesLog) return;
    try {
      await this.bus.publish(feed.id, messages);
    } catch (e) {
      this.logger.warn({ feed: feed.id, err: (e as Error).message, records: messages.length }, 'stored records not published live');
    }
  }
}

/**
 * An ingest stopped by a storage fault: the fault's status (507 for a full disk, 503 otherwise) with
 * what was stored, so a client resends exactly the rest. The summary rides along for the CLI.
 */
export class IngestInterrupted extends AppError {
  constructor(
    cause: AppError,
    readonly summary: IngestSummary,
    readonly storedThrough: number,
  ) {
    const stored =
      summary.accepted === 0
        ? 'Nothing of this request was stored.'
        : `${summary.accepted} records were stored (every valid record up to input record ${storedThrough}); nothing after it was stored: ` +
          `resend from record ${storedThrough + 1}.`;
    super(cause.code, `${cause.message} ${stored}`, {
      ...cause.context,
      members: { accepted: summary.accepted, rejected: summary.rejected, stored_through_record: storedThrough },
    });
  }
}

function interrupted(error: unknown, summary: IngestSummary, storedThrough: number): unknown {
  const cause = error instanceof AppError ? error : dependencyFault(error);
  // A bug stays itself (a 500, detail hidden, stack logged); storage faults say what was stored.
  return cause ? new IngestInterrupted(cause, { ...summary, errors: [...summary.errors] }, storedThrough) : error;
}
