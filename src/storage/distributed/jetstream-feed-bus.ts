import type { JsMsg } from '@nats-io/jetstream';
import {
  BusUnavailableError,
  type FeedBus,
  type FeedMessage,
  type FollowOptions,
  type SubscribeOptions,
} from '../../modules/feeds/feed-bus.ts';
import { FEEDS, type FeedId, recordTimeMs } from '../../modules/feeds/feed-catalog.ts';
import type { FeedRecord } from '../../modules/feeds/feed-records.ts';
import { SubscriptionQueue } from '../../modules/feeds/subscription-queue.ts';
import type { JetStreamFeedLog } from './jetstream-feed-log.ts';
import { type JetStreamContext, type ReadStart, StreamReader } from './jetstream-reader.ts';
import { NatsLink } from './nats-connection.ts';

export interface JetStreamFeedBusOptions {
  /** Most records one pull brings, live or replayed: what may wait in memory per feed and follower. Default 1,000. */
  batch?: number;
  /** How long one pull waits on the server for records (ms); a lost pull is noticed within it. Default 10,000. */
  pullExpiresMs?: number;
}

/** One local subscriber of a feed's live delivery. */
interface Listener {
  queue: SubscriptionQueue;
  /** Records up to this stream sequence were published before its subscribe() resolved; undefined until known. */
  after: number | undefined;
  /** What arrived while `after` was being learnt. */
  held: Array<{ seqs: number[]; messages: FeedMessage[] }>;
}

/** A node's one live consumer of a feed, fanned out to every local subscriber. */
interface Tap {
  readonly listeners: Set<Listener>;
  readonly stop: AbortController;
  readonly reader: Promise<StreamReader>;
  opened: boolean;
  /** The stream sequence the consumer started after. */
  start: number;
}

/**
 * Live delivery and replay of the feed log's own streams (JetStream): what any node appends reaches
 * the subscribers of every node, so ingestion publishes nothing (`carriesLog`).
 *
 * A node keeps one consumer per feed for all its live subscribers, created with the first and deleted
 * after the last: each record crosses the network and is parsed once per node, and the same message
 * objects go to every local SubscriptionQueue, which cuts off a subscriber that falls behind without
 * slowing the others. `follow` gives each caller a consumer of its own that starts at a time and is
 * pulled only as fast as the caller takes batches, so a replay of 90 days never piles up in memory.
 *
 * While NATS is down, live subscriptions stay open and followers wait; when it is back each consumer
 * is recreated right after the last record it delivered, so nothing is lost or delivered twice.
 * New subscriptions are refused meanwhile (BusUnavailableError: streams answer 503).
 */
export class JetStreamFeedBus implements FeedBus {
  readonly carriesLog = true;
  private readonly taps = new Map<FeedId, Tap>();
  private readonly followers = new Set<{ stop: AbortController; closedByBus: boolean }>();
  private readonly link: NatsLink;
  private closed = false;

  constructor(
    /** The log whose streams this bus delivers; publish appends through it. */
    private readonly log: JetStreamFeedLog,
    private readonly options: JetStreamFeedBusOptions = {},
  ) {
    this.link = NatsLink.of(log.nc);
  }

  /** Appends through the paired log: a published record is a stored one, delivered by the streams. */
  async publish(feed: FeedId, messages: readonly FeedMessage[]): Promise<void> {
    if (this.closed) throw new BusUnavailableError('the feed bus is closed');
    const def = FEEDS[feed];
    await this.log.append(
      feed,
      messages.map((m) => ({ timeMs: recordTimeMs(def, m.record), line: m.line })),
    );
  }

  async subscribe(feed: FeedId, options: SubscribeOptions): Promise<AsyncIterable<readonly FeedMessage[]>> {
    this.refuseIfDown();
    const tap = this.taps.get(feed) ?? this.openTap(feed);
    // Joined before the consumer exists: everything it delivers was published after this call.
    const fresh = !tap.opened;
    const listener: Listener = { queue: undefined as never, after: undefined, held: [] };
    tap.listeners.add(listener);
    listener.queue = new SubscriptionQueue(options.maxBuffered, options.onOverflow, () => this.leave(feed, tap, listener), options.signal);
    try {
      await tap.reader;
      listener.after = fresh ? tap.start : await this.lastSeq(feed);
    } catch (e) {
      listener.queue.end();
      throw new BusUnavailableError(`the feed bus cannot deliver ${feed} records now (${(e as Error).message})`);
    }
    for (const h of listener.held) deliver(listener, h.seqs, h.messages);
    listener.held = [];
    return listener.queue;
  }

  async follow(feed: FeedId, sinceMs: number, options: FollowOptions): Promise<AsyncIterable<readonly FeedMessage[]>> {
    this.refuseIfDown();
    const stop = new AbortController();
    const follower = { stop, closedByBus: false };
    if (options.signal.aborted) stop.abort();
    else options.signal.addEventListener('abort', () => stop.abort(), { once: true });
    let reader: StreamReader;
    let last: number;
    try {
      const ctx = await this.log.context;
      last = await this.lastSeq(feed, ctx);
      reader = new StreamReader(ctx, this.readerOptions(feed, { kind: 'time', ms: sinceMs }, stop.signal));
      await reader.open();
    } catch (e) {
      stop.abort();
      throw new BusUnavailableError(`the feed bus cannot replay ${feed} records now (${(e as Error).message})`);
    }
    if (this.closed) {
      stop.abort();
      throw new BusUnavailableError('the feed bus is closed');
    }
    this.followers.add(follower);
    // Caught up once the record that was the newest when follow() was called has been handed over.
    let caughtUp = reader.cursor >= last;
    if (caughtUp) options.onCaughtUp?.();
    const followers = this.followers;
    return (async function* () {
      try {
        for await (const batch of reader.batches()) {
          const messages = toMessages(batch).messages;
          if (!caughtUp && batch[batch.length - 1]!.seq >= last) {
            caughtUp = true;
            options.onCaughtUp?.();
          }
          if (messages.length > 0) yield messages;
        }
        if (follower.closedByBus) throw new BusUnavailableError('the feed bus closed');
      } catch (e) {
        throw e instanceof BusUnavailableError
          ? e
          : new BusUnavailableError(`the feed bus stopped replaying ${feed} records (${(e as Error).message})`);
      } finally {
        followers.delete(follower);
        stop.abort();
      }
    })();
  }

  async health(): Promise<string[]> {
    if (this.closed) return ['feed bus: closed'];
    const problem = await this.link.probe();
    return problem ? [`feed bus: ${problem}`] : [];
  }

  /** Ends every subscription and follower with BusUnavailableError and deletes this node's consumers. */
  async close(): Promise<void> {
    this.closed = true;
    for (const tap of this.taps.values()) {
      for (const l of tap.listeners) l.queue.fail(new BusUnavailableError('the feed bus closed'));
      tap.stop.abort();
    }
    this.taps.clear();
    for (const f of this.followers) {
      f.closedByBus = true;
      f.stop.abort();
    }
  }

  private refuseIfDown(): void {
    if (this.closed) throw new BusUnavailableError('the feed bus is closed');
    const problem = this.link.problem();
    if (problem) throw new BusUnavailableError(`the feed bus is unavailable: ${problem}`);
  }

  private readerOptions(feed: FeedId, start: ReadStart, signal: AbortSignal) {
    return {
      stream: this.log.streamName(feed),
      start,
      batch: this.options.batch ?? 1_000,
      expiresMs: this.options.pullExpiresMs ?? 10_000,
      signal,
    };
  }

  private async lastSeq(feed: FeedId, ctx?: JetStreamContext): Promise<number> {
    const { jsm } = ctx ?? (await this.log.context);
    return (await jsm.streams.info(this.log.streamName(feed))).state.last_seq;
  }

  private openTap(feed: FeedId): Tap {
    const stop = new AbortController();
    const tap: Tap = {
      listeners: new Set(),
      stop,
      opened: false,
      start: 0,
      reader: this.log.context.then(async (ctx) => {
        const reader = new StreamReader(ctx, this.readerOptions(feed, { kind: 'new' }, stop.signal));
        await reader.open();
        tap.opened = true;
        tap.start = reader.cursor;
        return reader;
      }),
    };
    this.taps.set(feed, tap);
    tap.reader.then(
      (reader) => void this.pump(feed, tap, reader),
      () => this.forget(feed, tap),
    );
    return tap;
  }

  private async pump(feed: FeedId, tap: Tap, reader: StreamReader): Promise<void> {
    try {
      for await (const batch of reader.batches()) {
        const { seqs, messages } = toMessages(batch);
        if (messages.length > 0) for (const l of tap.listeners) deliver(l, seqs, messages);
      }
    } catch (e) {
      // Not an outage (the reader rides those out) but a closed connection or a bug: every local
      // subscriber ends; the next one starts a new tap.
      for (const l of tap.listeners)
        l.queue.fail(new BusUnavailableError(`the feed bus stopped delivering ${feed} records (${(e as Error).message})`));
      this.forget(feed, tap);
    }
  }

  private leave(feed: FeedId, tap: Tap, listener: Listener): void {
    tap.listeners.delete(listener);
    if (tap.listeners.size === 0) this.forget(feed, tap);
  }

  private forget(feed: FeedId, tap: Tap): void {
    tap.stop.abort();
    if (this.taps.get(feed) === tap) this.taps.delete(feed);
  }
}

/** Parses each record once per node; the same objects go to every local subscriber. */
function toMessages(batch: readonly JsMsg[]): { seqs: number[]; messages: FeedMessage[] } {
  const seqs: number[] = [];
  const messages: FeedMessage[] = [];
  for (const m of batch) {
    const line = m.string();
    let record: FeedRecord;
    try {
      record = JSON.parse(line) as FeedRecord;
    } catch {
      // Only whole records are appended; a line that is not one has nothing to deliver.
      continue;
    }
    seqs.push(m.seq);
    messages.push({ record, line });
  }
  return { seqs, messages };
}

/** Hands a listener the part of a batch published after its subscribe() resolved. */
function deliver(l: Listener, seqs: number[], messages: FeedMessage[]): void {
  const after = l.after;
  if (after === undefined) l.held.push({ seqs, messages });
  else if (seqs[0]! > after) l.queue.push(messages);
  else if (seqs[seqs.length - 1]! > after) l.queue.push(messages.slice(seqs.findIndex((s) => s > after)));
}
