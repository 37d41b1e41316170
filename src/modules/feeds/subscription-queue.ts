import { SlowConsumerError, type FeedMessage } from './feed-bus.ts';

/**
 * A bounded per-consumer queue that is also the consumer's AsyncIterable: the bus pushes, the consumer
 * takes everything queued at once. Shared by every FeedBus backend so they behave alike.
 */
export class SubscriptionQueue implements AsyncIterable<readonly FeedMessage[]> {
  private queue: FeedMessage[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  private error: Error | undefined;

  constructor(
    private readonly maxBuffered: number,
    private readonly onOverflow: (() => void) | undefined,
    private readonly onEnd: () => void,
    signal: AbortSignal,
  ) {
    if (signal.aborted) this.end();
    else signal.addEventListener('abort', () => this.end(), { once: true });
  }

  push(messages: readonly FeedMessage[]): void {
    if (this.done) return;
    if (this.queue.length + messages.length > this.maxBuffered) {
      this.fail(new SlowConsumerError(this.maxBuffered));
      this.onOverflow?.();
      return;
    }
    for (let i = 0; i < messages.length; i++) this.queue.push(messages[i]!);
    this.notify();
  }

  /** Ends the iteration with an error (overflow, bus going down). */
  fail(error: Error): void {
    if (this.done) return;
    this.error = error;
    this.queue = [];
    this.end();
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.onEnd();
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<readonly FeedMessage[]> {
    try {
      for (;;) {
        if (this.error) throw this.error;
        if (this.queue.length > 0) {
          const batch = this.queue;
          this.queue = [];
          yield batch;
          continue;
        }
        if (this.done) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.end();
    }
  }
}
