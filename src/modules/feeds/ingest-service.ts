import { createHash, randomUUID } from 'node:crypto';
import type { FeedBus, FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { FeedLog, FeedLogEntry } from './feed-log.ts';
import type { RecordValidator, RejectReason } from './feed-records.ts';
import type { IngestSummary } from './ingest-summary.ts';
import { AppError, dependencyFault } from '../../errors.ts';
import { INGEST_KEY_LEASE_MS, INGEST_KEY_RETENTION_MS, type IngestKeyState, type IngestKeyStore, ingestRecordId } from './ingest-keys.ts';

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

export type { IngestSummary, RecordError } from './ingest-summary.ts';

export interface IngestOptions {
  /**
   * The client's idempotency key for this batch: a resend under the same key stores only what the
   * earlier attempts did not, or nothing and the first answer again once one of them finished.
   */
  idempotencyKey?: string;
  onProgress?: (s: IngestSummary) => void;
  /**
   * Records made up by umbra's demo simulator: each stored record gets `simulated: true`, which
   * lookups' evidence and `umbra data status` report. Only in-process callers can set it; a record
   * that arrives with the member is refused (feed-records.ts), so no ingestion client can mark or
   * unmark data.
   */
  simulated?: boolean;
}

/** Where idempotency keys are kept, and the clock their leases and retention run on. */
export interface IngestKeys {
  store: IngestKeyStore;
  now: () => number;
}

/** How often a running keyed ingest renews its claim, and how often old keys are purged (ms). */
const RENEW_MS = INGEST_KEY_LEASE_MS / 3;
const PURGE_EVERY_MS = 60_000;

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
    private readonly keys?: IngestKeys,
  ) {}

  private lastPurgeMs = 0;

  /** Called after every ingest() with its summary (metrics). */
  onSummary(listener: (s: IngestSummary) => void): void {
    this.summaryListeners.push(listener);
  }

  async ingest(
    feed: FeedDef,
    /** Batches of items (one await per batch keeps per-record overhead low). */
    batches: AsyncIterable<readonly IngestItem[]> | Iterable<readonly IngestItem[]>,
    options: IngestOptions = {},
  ): Promise<IngestSummary> {
    const summary = options.idempotencyKey
      ? await this.keyed(feed, batches, options.idempotencyKey, options.onProgress)
      : await this.run(feed, batches, options.onProgress, undefined, options.simulated === true);
    for (const l of this.summaryListeners) l(summary);
    return summary;
  }

  /**
   * An ingest under an idempotency key: claimed in the shared key store, so a resend (after a lost
   * answer, a 503, a crash) stores each record once. Records are also appended under ids derived from
   * the key, so a log that drops duplicate ids (JetStream) stores once even the batch whose append
   * succeeded after its deadline, when the progress was never recorded.
   */
  private async keyed(
    feed: FeedDef,
    batches: AsyncIterable<readonly IngestItem[]> | Iterable<readonly IngestItem[]>,
    key: string,
    onProgress?: (s: IngestSummary) => void,
  ): Promise<IngestSummary> {
    if (!this.keys) throw new Error('this ingest service has no idempotency key store');
    const { store, now } = this.keys;
    const owner = randomUUID();
    this.purgeOldKeys();
    const claim = await store.claim(key, feed.id, owner, now(), INGEST_KEY_LEASE_MS);
    if (claim.kind === 'other_feed')
      throw new AppError(
        'IDEMPOTENCY_KEY_REUSED',
        `This Idempotency-Key was used for the ${claim.feed} feed; give every batch a key of its own.`,
      );
    if (claim.kind === 'busy')
      throw new AppError('IDEMPOTENCY_KEY_BUSY', 'An ingest under this Idempotency-Key is still running: retry once it has finished.', {
        retryAfter: Math.max(1, Math.ceil((claim.leaseUntilMs - now()) / 1000)),
      });
    const digest = createHash('sha256');
    if (claim.kind === 'finished') {
      // Read to the end: only the same records under the same key get the first answer again.
      for await (const items of batches) for (const item of items) digestItem(digest, item);
      if (digest.digest('hex') !== claim.state.recordsSha256)
        throw new AppError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used for other records; nothing was stored. Give every batch a key of its own.',
        );
      return { ...claim.state.summary, replayed: true };
    }
    const prior = claim.prior;
    let state: IngestKeyState = prior ?? {
      feed: feed.id,
      storedThrough: 0,
      summary: { feed: feed.id, accepted: 0, rejected: 0, by_reason: {}, errors: [] },
    };
    // The lease is renewed while the input trickles in between appends; each append's progress renews it too.
    let writes: Promise<void> = Promise.resolve();
    const record = (s: IngestKeyState) => {
      state = s;
      writes = writes.then(() => store.progress(key, owner, s, now(), INGEST_KEY_LEASE_MS));
      return writes;
    };
    const renew = setInterval(() => void record(state).catch(() => {}), RENEW_MS);
    renew.unref();
    try {
      const summary = await this.run(feed, batches, onProgress, {
        from: prior,
        digest,
        recordId: (n) => ingestRecordId(feed.id, key, n),
        stored: (s) => record(s),
      });
      clearInterval(renew);
      await writes.catch(() => {});
      await store.finish(
        key,
        owner,
        { feed: feed.id, storedThrough: state.storedThrough, summary, recordsSha256: digest.digest('hex') },
        now(),
      );
      return summary;
    } catch (e) {
      clearInterval(renew);
      // Free the key for the client's resend at once; what was stored stays recorded.
      await writes.catch(() => {});
      await store.release(key, owner).catch(() => {});
      throw e;
    }
  }

  /** Old keys go at most once a minute, in the background: a purge never delays an ingest. */
  private purgeOldKeys(): void {
    const t = this.keys!.now();
    if (t - this.lastPurgeMs < PURGE_EVERY_MS) return;
    this.lastPurgeMs = t;
    this.keys!.store.purge(t - INGEST_KEY_RETENTION_MS).catch((e: Error) =>
      this.logger.warn({ err: e.message }, 'old ingest keys not purged'),
    );
  }

  private async run(
    feed: FeedDef,
    batches: AsyncIterable<readonly IngestItem[]> | Iterable<readonly IngestItem[]>,
    onProgress: ((s: IngestSummary) => void) | undefined,
    keyed?: KeyedRun,
    simulated = false,
  ): Promise<IngestSummary> {
    const from = keyed?.from;
    const summary: IngestSummary = from
      ? { ...from.summary, by_reason: { ...from.summary.by_reason }, errors: [...from.summary.errors] }
      : { feed: feed.id, accepted: 0, rejected: 0, by_reason: {}, errors: [] };
    // Records an earlier attempt under the key stored (or rejected) are skipped, counted already.
    const skipThrough = from?.storedThrough ?? 0;
    // A valid check result is both the log entry (timeMs, line) and the bus message (record, line).
    let accepted: Array<FeedLogEntry & FeedMessage> = [];
    let lastRecord = 0;
    // Every valid record numbered up to this one is durable; none after it is, when an append fails.
    let storedThrough = skipThrough;
    // One append in flight at a time: the next records are validated while its fsync runs (the log
    // group-commits appends of concurrent requests), and a failed append stops the ingest with
    // everything before it stored and nothing after it.
    let inFlight: Promise<void> | undefined;
    let failure: { error: unknown } | undefined;
    const submit = () => {
      const batch = accepted;
      const through = lastRecord;
      // The answer as of `through`: validation has read exactly that far when a batch is cut.
      const asOf = keyed && { rejected: summary.rejected, by_reason: { ...summary.by_reason }, errors: [...summary.errors] };
      accepted = [];
      inFlight = this.log.append(feed.id, batch).then(
        async () => {
          summary.accepted += batch.length;
          storedThrough = through;
          if (keyed && asOf) {
            try {
              await keyed.stored({
                feed: feed.id,
                storedThrough: through,
                summary: { feed: feed.id, accepted: summary.accepted, ...asOf },
              });
            } catch (error) {
              // Stored, but not recorded under the key: stop here, so the answer says what was stored.
              failure ??= { error };
              inFlight = undefined;
              return;
            }
          }
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
        if (keyed) {
          digestItem(keyed.digest, item);
          if (item.n <= skipThrough) continue;
        }
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
          if (simulated) {
            check.record.simulated = true;
            check.line = JSON.stringify(check.record);
          }
          accepted.push(keyed ? { ...check, id: keyed.recordId(item.n) } : check);
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

interface KeyedRun {
  /** What earlier attempts under the key stored: the input up to from.storedThrough is skipped. */
  from: IngestKeyState | undefined;
  /** Digest of every input record, skipped ones included, so a resend can be told from other records. */
  digest: ReturnType<typeof createHash>;
  recordId: (n: number) => string;
  /** Called once each append is durable, before the ingest goes on; a failure stops the ingest. */
  stored: (s: IngestKeyState) => Promise<void>;
}

function digestItem(digest: ReturnType<typeof createHash>, item: IngestItem): void {
  if ('text' in item) digest.update(item.text);
  else if ('tooLong' in item) digest.update(`\u0000too long ${item.tooLong}`);
  else if ('refused' in item) digest.update(`\u0000refused ${item.refused.reason} ${item.refused.message}`);
  else digest.update(JSON.stringify(item.value) ?? 'undefined');
  digest.update('\n');
}

function interrupted(error: unknown, summary: IngestSummary, storedThrough: number): unknown {
  const cause = error instanceof AppError ? error : dependencyFault(error);
  // A bug stays itself (a 500, detail hidden, stack logged); storage faults say what was stored.
  return cause ? new IngestInterrupted(cause, { ...summary, errors: [...summary.errors] }, storedThrough) : error;
}
