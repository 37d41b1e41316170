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

/**
 * Live fan-out of feed records. Every subscriber gets every message published after subscribe()
 * returned, in publish order, in batches (one await per batch, not per record). A subscriber that
 * falls maxBuffered behind is cut off; it never slows the publisher or other subscribers.
 */
export interface FeedBus {
  publish(feed: FeedId, messages: readonly FeedMessage[]): Promise<void>;
  /** Registers at once (not on first iteration). Throws BusUnavailableError when the bus is down. */
  subscribe(feed: FeedId, options: SubscribeOptions): AsyncIterable<readonly FeedMessage[]>;
  /** Problems that make streaming unavailable now (empty when healthy). */
  health(): Promise<string[]>;
  close(): Promise<void>;
}
