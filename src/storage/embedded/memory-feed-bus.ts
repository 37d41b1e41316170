import { BusUnavailableError, type FeedBus, type FeedMessage, type SubscribeOptions } from '../../modules/feeds/feed-bus.ts';
import type { FeedId } from '../../modules/feeds/feed-catalog.ts';
import { SubscriptionQueue } from '../../modules/feeds/subscription-queue.ts';

/** In-process fan-out for the embedded default: publish hands the same message objects to every queue. */
export class MemoryFeedBus implements FeedBus {
  readonly carriesLog = false;
  private readonly subscribers = new Map<FeedId, Set<SubscriptionQueue>>();
  private closed = false;

  async publish(feed: FeedId, messages: readonly FeedMessage[]): Promise<void> {
    if (this.closed) throw new BusUnavailableError('the feed bus is closed');
    const subs = this.subscribers.get(feed);
    if (!subs || messages.length === 0) return;
    for (const s of subs) s.push(messages);
  }

  async subscribe(feed: FeedId, options: SubscribeOptions): Promise<AsyncIterable<readonly FeedMessage[]>> {
    if (this.closed) throw new BusUnavailableError('the feed bus is closed');
    let subs = this.subscribers.get(feed);
    if (!subs) this.subscribers.set(feed, (subs = new Set()));
    const set = subs;
    const queue: SubscriptionQueue = new SubscriptionQueue(
      options.maxBuffered,
      options.onOverflow,
      () => set.delete(queue),
      options.signal,
    );
    set.add(queue);
    return queue;
  }

  async health(): Promise<string[]> {
    return this.closed ? ['feed bus: closed'] : [];
  }

  /** Ends every subscription with an error: consumers see the stream end, and new streams get 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const subs of this.subscribers.values()) for (const s of subs) s.fail(new BusUnavailableError('the feed bus closed'));
    this.subscribers.clear();
  }
}
