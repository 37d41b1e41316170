import { drained, type Drainable } from '../../lib/drained.ts';
import type { FeedMessage } from './feed-bus.ts';
import type { FeedStream } from './stream-service.ts';

/**
 * Why a live stream ended: its metric label, and what its transport answers. `lease_lost`: the stream's
 * slot of the team's allowance could not be kept (StreamService), so it ends rather than run uncounted.
 */
export type StreamEnd = 'lifetime' | 'client_closed' | 'slow_consumer' | 'backend' | 'server_closing' | 'lease_lost';

/** Where a stream goes: an NDJSON response, a gRPC server stream. */
export interface StreamSink extends Drainable {
  /** Writes one batch of records; false when the peer's buffer is full (the pump then waits for 'drain'). */
  write(batch: readonly FeedMessage[]): boolean;
  /** Calls `listener` once when the peer goes away (connection closed, call cancelled); returns how to stop listening. */
  onPeerGone(listener: () => void): () => void;
  /** True when the peer went away before the pump started. */
  peerGone(): boolean;
  /** Writes a keepalive (NDJSON's empty line); absent where the protocol has none. */
  keepalive?(): void;
}

export interface PumpOptions {
  /** The stream is ended cleanly after this long (30 minutes in production). */
  lifetimeMs: number;
  /** A keepalive is written whenever nothing was for this long (with sink.keepalive). */
  keepaliveMs?: number;
  /** Aborted when the server closes: the stream ends cleanly. */
  closing: AbortSignal;
}

/**
 * The one life of a live stream, whatever its transport: batches written as they come, backpressure
 * (waits for 'drain'), keepalives while idle, the lifetime close, a slow consumer or a failed backend
 * cut off, a lost slot lease, the server's shutdown, and the stream slot freed in `finally` whatever
 * ended it. The transport writes the head before and the ending after, from the StreamEnd this returns.
 */
export async function pumpStream(stream: FeedStream, sink: StreamSink, options: PumpOptions): Promise<StreamEnd> {
  let end: StreamEnd = 'lifetime';
  const stop = new AbortController();
  const finish = (why: StreamEnd) => {
    if (stop.signal.aborted) return;
    end = why;
    stop.abort();
    // Ends the subscription and frees the slot now, not when the pump next wakes.
    void stream.close();
  };
  const onOverflow = () => finish('slow_consumer');
  const onClosing = () => finish('server_closing');
  const onLeaseLost = () => finish('lease_lost');
  const stopListening = sink.onPeerGone(() => finish('client_closed'));
  stream.overflow.addEventListener('abort', onOverflow);
  stream.leaseLost.addEventListener('abort', onLeaseLost);
  options.closing.addEventListener('abort', onClosing);
  const lifetime = setTimeout(() => finish('lifetime'), options.lifetimeMs);
  let lastWrite = Date.now();
  let blocked = false;
  const keepaliveMs = options.keepaliveMs;
  const keepalive =
    sink.keepalive && keepaliveMs !== undefined
      ? setInterval(
          () => {
            if (blocked || Date.now() - lastWrite < keepaliveMs) return;
            lastWrite = Date.now();
            sink.keepalive!();
          },
          Math.max(5, Math.min(1000, Math.floor(keepaliveMs / 4))),
        )
      : undefined;
  if (sink.peerGone()) finish('client_closed');
  if (options.closing.aborted) finish('server_closing');
  if (stream.leaseLost.aborted) finish('lease_lost');
  try {
    const it = stream.messages[Symbol.asyncIterator]();
    while (!stop.signal.aborted) {
      const next = await it.next();
      if (next.done || stop.signal.aborted) break;
      lastWrite = Date.now();
      if (!sink.write(next.value)) {
        blocked = true;
        await drained(sink, stop.signal);
        blocked = false;
      }
    }
    await it.return?.();
  } catch (e) {
    end = (e as Error).name === 'SlowConsumerError' ? 'slow_consumer' : 'backend';
  } finally {
    clearTimeout(lifetime);
    clearInterval(keepalive);
    stopListening();
    stream.overflow.removeEventListener('abort', onOverflow);
    stream.leaseLost.removeEventListener('abort', onLeaseLost);
    options.closing.removeEventListener('abort', onClosing);
    await stream.close();
  }
  return end;
}
