import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../errors.ts';
import { DAY_MS, hourOf } from '../../lib/time.ts';
import { FEED_IDS, type FeedId } from '../../modules/feeds/feed-catalog.ts';
import type { FeedLog, FeedLogEntry } from '../../modules/feeds/feed-log.ts';
import { type AppendItem, JetStreamAppender } from './jetstream-appender.ts';
import { type JetStreamContext, readSubject } from './jetstream-reader.ts';
import { NatsLink, natsFault } from './nats-connection.ts';

export interface JetStreamFeedLogOptions {
  /**
   * Names what this log owns: streams `<prefix>_<FEED>`, subjects `<prefix>.<feed>.<hourStartMs>`.
   * Letters, digits, '_' and '-'. Default `UMBRA_FEED`.
   */
  prefix?: string;
  /**
   * How long a record stays after it was appended (ms). Default 92 days: the 90-day behaviour window
   * of the intelligence index and the 31-day domain window, with room for a late export.
   */
  maxAgeMs?: number;
  /** Copies of each stream in a JetStream cluster. Default 1. */
  replicas?: number;
  /** An append fails once JetStream acknowledged nothing of it for this long (ms). Default 2,000. */
  ackTimeoutMs?: number;
  /** Deadline of every other JetStream request (ms). Default 2,000. */
  apiTimeoutMs?: number;
  /** How long a stream remembers message ids, so a record sent again is stored once (ms). Default 2 minutes. */
  duplicateWindowMs?: number;
  /** Most records one pull brings when an hour is read back. Default 2,000. */
  readBatch?: number;
}

/** Room left in a message for its headers (the message id) below the server's max_payload. */
const HEADER_ROOM = 256;

/**
 * The distributed feed log: one JetStream stream per feed, file storage, one subject per UTC hour of
 * the records' own time, so an hour partition is read back, counted and dropped by its subject. Every
 * node appends to it and reads it; the paired JetStreamFeedBus delivers what it stores. An append
 * resolves once JetStream acknowledged every record; records go from the stream after maxAgeMs.
 *
 * JetStream acknowledges a record once it is in the server's file store, not after an fsync (the
 * server syncs on its own interval): an acknowledged record survives a restart of NATS, but a crash of
 * the machine under it can lose the last records; run JetStream with replicas where that matters.
 */
export class JetStreamFeedLog implements FeedLog {
  readonly prefix: string;
  /** The JetStream handles the paired bus reads through (same connection). */
  readonly context: Promise<JetStreamContext>;
  private readonly appender: JetStreamAppender;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    readonly nc: NatsConnection,
    private readonly options: JetStreamFeedLogOptions = {},
  ) {
    this.prefix = options.prefix ?? 'UMBRA_FEED';
    if (!/^[A-Za-z0-9_-]+$/.test(this.prefix))
      throw new Error(`feed log prefix ${JSON.stringify(this.prefix)}: use letters, digits, '_' and '-'`);
    const link = NatsLink.of(nc);
    const timeout = options.apiTimeoutMs ?? 2_000;
    this.context = jetstreamManager(nc, { timeout, checkAPI: false }).then((jsm) => ({ js: jetstream(nc, { timeout }), jsm, link }));
    this.appender = new JetStreamAppender(nc, link, options.ackTimeoutMs ?? 2_000);
  }

  streamName(feed: FeedId): string {
    return `${this.prefix}_${feed.toUpperCase()}`;
  }

  private subject(feed: FeedId, hourStartMs: number): string {
    return `${this.prefix}.${feed}.${hourStartMs}`;
  }

  private config(feed: FeedId): StreamConfig {
    return {
      name: this.streamName(feed),
      description: `umbra feed log: ${feed}, one subject per hour of the records' time`,
      subjects: [`${this.prefix}.${feed}.*`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.options.maxAgeMs ?? 92 * DAY_MS),
      duplicate_window: nanos(this.options.duplicateWindowMs ?? 120_000),
      num_replicas: this.options.replicas ?? 1,
    } as StreamConfig;
  }

  /**
   * Creates the feeds' streams, or brings an existing one to this configuration (a new retention).
   * Idempotent, and safe when several nodes start at once: creating an identical stream succeeds.
   */
  async ensureStreams(): Promise<void> {
    const { jsm } = await this.context;
    await Promise.all(
      FEED_IDS.map(async (feed) => {
        const config = this.config(feed);
        try {
          await jsm.streams.add(config);
        } catch (e) {
          // The stream exists with another configuration (10058), or another node is creating it at
          // this moment (10065, its subjects "overlap" the new one's): bring it to this configuration.
          const code = (e as { code?: unknown }).code;
          if (code !== 10058 && code !== 10065) throw natsFault(e, `creating stream ${config.name}`);
          try {
            await jsm.streams.update(config.name, config);
          } catch (e2) {
            throw natsFault(e2, `updating stream ${config.name}`);
          }
        }
      }),
    );
  }

  append(feed: FeedId, entries: readonly FeedLogEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('feed log is closed'));
    if (entries.length === 0) return Promise.resolve();
    const max = (this.nc.info?.max_payload ?? 1 << 20) - HEADER_ROOM;
    const items: AppendItem[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      // Checked before anything is sent, so an append that cannot be stored whole stores nothing.
      if (e.line.length * 3 > max && Buffer.byteLength(e.line) > max)
        return Promise.reject(
          new AppError(
            'PAYLOAD_TOO_LARGE',
            `A record of ${Buffer.byteLength(e.line)} bytes is larger than the feed log takes (${max} bytes); nothing of this batch was stored.`,
          ),
        );
      items[i] = e.id
        ? { subject: this.subject(feed, hourOf(e.timeMs)), data: e.line, id: e.id }
        : { subject: this.subject(feed, hourOf(e.timeMs)), data: e.line };
    }
    const p = this.appender.publish(items);
    this.inFlight.add(p);
    const forget = () => this.inFlight.delete(p);
    p.then(forget, forget);
    return p;
  }

  async *readHour(feed: FeedId, hourStartMs: number): AsyncIterable<string> {
    const ctx = await this.context;
    for await (const lines of readSubject(ctx, this.streamName(feed), this.subject(feed, hourOf(hourStartMs)), this.readBatch))
      yield* lines;
  }

  async *readHourBlocks(feed: FeedId, hourStartMs: number): AsyncIterable<string> {
    const ctx = await this.context;
    for await (const lines of readSubject(ctx, this.streamName(feed), this.subject(feed, hourOf(hourStartMs)), this.readBatch))
      yield lines.join('\n');
  }

  private get readBatch(): number {
    return this.options.readBatch ?? 2_000;
  }

  async hours(feed: FeedId): Promise<number[]> {
    const { jsm } = await this.context;
    let subjects: Record<string, number>;
    try {
      subjects = (await jsm.streams.info(this.streamName(feed), { subjects_filter: `${this.prefix}.${feed}.*` })).state.subjects ?? {};
    } catch (e) {
      throw natsFault(e, `listing the hours of ${this.streamName(feed)}`);
    }
    return Object.keys(subjects)
      .map((s) => Number(s.slice(s.lastIndexOf('.') + 1)))
      .filter(Number.isSafeInteger)
      .sort((a, b) => a - b);
  }

  async dropBefore(feed: FeedId, hourStartMs: number): Promise<number> {
    const { jsm } = await this.context;
    let dropped = 0;
    for (const h of await this.hours(feed)) {
      if (h >= hourStartMs) break;
      try {
        await jsm.streams.purge(this.streamName(feed), { filter: this.subject(feed, h) });
      } catch (e) {
        throw natsFault(e, `dropping an hour of ${this.streamName(feed)}`);
      }
      dropped++;
    }
    return dropped;
  }

  /** Waits for the appends in flight (each settles within its deadline); the connection stays its owner's. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    await this.appender.close();
  }
}
