import { AppError } from '../../errors.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import type { Caller } from '../accounts/account-service.ts';
import { BusUnavailableError, type FeedBus, type FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { StreamLease, StreamSlots } from './stream-slots.ts';

export interface StreamOptions {
  /** Per-consumer buffer, in records, before a slow consumer is cut off. */
  maxBuffered: number;
  /** Measures how long a stream's lease has gone unrenewed; the slots backend's clock. */
  clock?: Clock;
}

/** One open live stream: the batches to send, and how it ends. */
export interface FeedStream {
  messages: AsyncIterable<readonly FeedMessage[]>;
  /** Aborted on overflow (slow consumer) so a writer waiting on a stalled socket gives up at once. */
  overflow: AbortSignal;
  /**
   * Aborted when the stream's slot lease could not be kept (renew found it expired, or the slots backend
   * failed for so long that the lease would lapse before the next try): the stream must end, since its
   * slot may be counted for another stream by now.
   */
  leaseLost: AbortSignal;
  /** Frees the team's stream slot; idempotent, never rejects. Transports call it when the stream ends for any reason. */
  close(): Promise<void>;
}

/** Seconds a client is told to wait after the concurrent-stream 429 (streams end within 30 minutes). */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Opens live feed streams for HTTP and gRPC alike. The connection bucket is taken by the transport's
 * operation guard first; here come the backend check (503) and the team's allowance (429).
 */
export class StreamService {
  private readonly clock: Clock;

  constructor(
    private readonly bus: FeedBus,
    private readonly slots: StreamSlots,
    private readonly options: StreamOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async open(caller: Caller, feed: FeedDef, signal: AbortSignal): Promise<FeedStream> {
    const problems = await this.bus.health();
    if (problems.length > 0)
      throw new AppError('UNAVAILABLE', 'The streaming backend is unavailable; retry shortly.', { retryAfter: STREAM_RETRY_AFTER_S });
    const max = caller.owner.org.maxStreams;
    // Read before acquiring: the lease expires ttlMs after the backend stamped it, never before this.
    const takenAt = this.clock.now();
    const lease = await this.slots.acquire(caller.orgId, max);
    if (lease === undefined) {
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
    const leaseLost = new AbortController();
    const onAbort = () => ended.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const keeper = this.keepLease(lease, takenAt, () => leaseLost.abort());
    let released = false;
    const close = async () => {
      if (released) return;
      released = true;
      keeper.stop();
      signal.removeEventListener('abort', onAbort);
      ended.abort();
      // A release that fails (the backend is down) leaves the lease to lapse by itself within the TTL.
      await this.slots.release(lease).catch(() => {});
    };
    try {
      const messages = await this.bus.subscribe(feed.id, {
        signal: ended.signal,
        maxBuffered: this.options.maxBuffered,
        onOverflow: () => overflow.abort(),
      });
      return { messages, overflow: overflow.signal, leaseLost: leaseLost.signal, close };
    } catch (e) {
      await close();
      if (e instanceof BusUnavailableError)
        throw new AppError('UNAVAILABLE', 'The streaming backend is unavailable; retry shortly.', { retryAfter: STREAM_RETRY_AFTER_S });
      throw e;
    }
  }

  /**
   * Renews the lease every ttlMs / 3 while the stream is open, one renew at a time (a slow backend never
   * piles them up). `lost` is called once when the lease is gone (renew says it expired) or when the
   * backend has failed for so long that the lease would lapse before the next try: the stream then ends
   * while its slot is still its own, so the team never holds more than its allowance. The timer is
   * unref'd: an open stream's renewals never keep the process alive on their own.
   */
  private keepLease(lease: StreamLease, takenAt: number, lost: () => void): { stop(): void } {
    const everyMs = Math.max(1, Math.floor(this.slots.ttlMs / 3));
    let renewedAt = takenAt;
    let renewing = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      clearInterval(timer);
    };
    const renew = async () => {
      if (renewing || stopped) return;
      renewing = true;
      const startedAt = this.clock.now();
      let kept: boolean | undefined;
      try {
        kept = await this.slots.renew(lease);
      } catch {
        // Tried again at the next tick, unless the lease would be past its TTL by then.
        kept = startedAt + everyMs >= renewedAt + this.slots.ttlMs ? false : undefined;
      } finally {
        renewing = false;
      }
      if (stopped) return;
      if (kept === true) renewedAt = startedAt;
      else if (kept === false) {
        stop();
        lost();
      }
    };
    const timer = setInterval(() => void renew(), everyMs);
    timer.unref();
    return { stop };
  }
}
