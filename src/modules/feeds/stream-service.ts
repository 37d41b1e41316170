import { AppError } from '../../errors.ts';
import type { Caller } from '../accounts/account-service.ts';
import { BusUnavailableError, type FeedBus, type FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { StreamSlots } from './stream-slots.ts';

export interface StreamOptions {
  /** Per-consumer buffer, in records, before a slow consumer is cut off. */
  maxBuffered: number;
}

/** One open live stream: the batches to send, and how it ends. */
export interface FeedStream {
  messages: AsyncIterable<readonly FeedMessage[]>;
  /** Aborted on overflow (slow consumer) so a writer waiting on a stalled socket gives up at once. */
  overflow: AbortSignal;
  /** Frees the team's stream slot; idempotent. Transports call it when the stream ends for any reason. */
  close(): Promise<void>;
}

/** Seconds a client is told to wait after the concurrent-stream 429 (streams end within 30 minutes). */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Opens live feed streams for HTTP and gRPC alike. The connection bucket is taken by the transport's
 * operation guard first; here come the backend check (503) and the team's allowance (429).
 */
export class StreamService {
  constructor(
    private readonly bus: FeedBus,
    private readonly slots: StreamSlots,
    private readonly options: StreamOptions,
  ) {}

  async open(caller: Caller, feed: FeedDef, signal: AbortSignal): Promise<FeedStream> {
    const problems = await this.bus.health();
    if (problems.length > 0)
      throw new AppError('UNAVAILABLE', 'The streaming backend is unavailable; retry shortly.', { retryAfter: STREAM_RETRY_AFTER_S });
    const max = caller.owner.org.maxStreams;
    if (!(await this.slots.acquire(caller.orgId, max))) {
      throw new AppError(
        'TOO_MANY_STREAMS',
        `The team already has its ${max} concurrent streams open; close one or ask the operator for a larger allowance.`,
        {
          retryAfter: STREAM_RETRY_AFTER_S,
        },
      );
    }
    const ended = new AbortController();
    const overflow = new AbortController();
    const onAbort = () => ended.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let released = false;
    const close = async () => {
      if (released) return;
      released = true;
      signal.removeEventListener('abort', onAbort);
      ended.abort();
      await this.slots.release(caller.orgId);
    };
    try {
      const messages = await this.bus.subscribe(feed.id, {
        signal: ended.signal,
        maxBuffered: this.options.maxBuffered,
        onOverflow: () => overflow.abort(),
      });
      return { messages, overflow: overflow.signal, close };
    } catch (e) {
      await close();
      if (e instanceof BusUnavailableError)
        throw new AppError('UNAVAILABLE', 'The streaming backend is unavailable; retry shortly.', { retryAfter: STREAM_RETRY_AFTER_S });
      throw e;
    }
  }
}
