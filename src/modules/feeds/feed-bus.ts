import type { FeedId } from './feed-catalog.ts';
import type { FeedRecord } from './feed-records.ts';

/** A published record: the object (for gRPC and in-process consumers) and its JSON line, serialised once. */
export interface FeedMessage {
  readonly record: FeedRecord;
  readonly line: string;
}

export interface SubscribeOptions {
  /** Ends the subscription (the iterator returns). */
  signal: AbortSignal;
  /** Most messages queued for this consumer; past it the consumer is cut off with SlowConsumerError. */
  maxBuffered: number;
  /** Called at once when the buffer overflows, so a writer blocked on a stalled socket can give up. */
  onOverflow?: () => void;
}

export class SlowConsumerError extends Error {
  constructor(maxBuffered: number) {
    super(`consumer fell more than ${maxBuffered} records behind and was disconnected`);
    this.name = 'SlowConsumerError';
  }
}

export class BusUnavailableError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'BusUnavailableError';
  }
}

/** A subscription that first replays what the bus retains, then goes on live (see FeedBus.follow). */
export interface FollowOptions {
  signal: AbortSignal;
  /** Called once the replay has reached the records that were the newest when follow() was called. */
  onCaughtUp?: () => void;
}

/**
 * Live fan-out of feed records. Every subscriber gets every message published after subscribe()
 * resolved, in publish order, in batches (one await per batch, not per record). A subscriber that
 * falls maxBuffered behind is cut off; it never slows the publisher or other subscribers.
 */
export interface FeedBus {
  /**
   * True when the bus is the feed log's own delivery (JetStream: the records the log appended reach
   * subscribers from it, on every node, and can be replayed): ingestion then publishes nothing, and
   * `follow` exists. False for an in-process bus that ingestion feeds with `publish`.
   */
  readonly carriesLog: boolean;
  publish(feed: FeedId, messages: readonly FeedMessage[]): Promise<void>;
  /**
   * Resolves once the subscription is registered (a networked bus has created its consumer), so
   * nothing published after that is missed. Rejects with BusUnavailableError when the bus is down.
   */
  subscribe(feed: FeedId, options: SubscribeOptions): Promise<AsyncIterable<readonly FeedMessage[]>>;
  /**
   * Only when `carriesLog`: every retained record published since `sinceMs`, then every later one,
   * each exactly once, never cut off (paced by the consumer). What in-memory state that must see
   * every record (domain aggregates, the intelligence index) is rebuilt and kept current from.
   */
  follow?(feed: FeedId, sinceMs: number, options: FollowOptions): Promise<AsyncIterable<readonly FeedMessage[]>>;
  /** Problems that make streaming unavailable now (empty when healthy). */
  health(): Promise<string[]>;
  close(): Promise<void>;
}
