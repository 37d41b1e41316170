import type { FastifyReply } from 'fastify';
import type { FeedStream } from '../modules/feeds/stream-service.ts';
import { drained } from '../lib/drained.ts';

export interface NdjsonOptions {
  /** An empty line is written whenever nothing was written for this long (service.md: about 15 s). */
  keepaliveMs: number;
  /** The stream is closed cleanly after this long (service.md: 30 minutes). */
  lifetimeMs: number;
}

export type StreamEnd = 'lifetime' | 'client_closed' | 'slow_consumer' | 'backend' | 'server_closing';

/**
 * Writes a feed stream as NDJSON on the raw response: one line per record, each batch in one write,
 * flushed as written. Owns keepalive, the lifetime close, backpressure (awaits 'drain') and cleanup:
 * the stream slot is freed in `finally`, whatever ended the stream.
 */
export async function streamNdjson(reply: FastifyReply, stream: FeedStream, options: NdjsonOptions, closing: AbortSignal): Promise<StreamEnd> {
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'application/x-ndjson',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);

  let end: StreamEnd = 'lifetime';
  const stop = new AbortController();
  const finish = (why: StreamEnd) => {
    if (stop.signal.aborted) return;
    end = why;
    stop.abort();
  };
  const onClose = () => finish('client_closed');
  const onOverflow = () => finish('slow_consumer');
  const onClosing = () => finish('server_closing');
  res.on('close', onClose);
  stream.overflow.addEventListener('abort', onOverflow);
  closing.addEventListener('abort', onClosing);
  const lifetime = setTimeout(() => finish('lifetime'), options.lifetimeMs);
  let blocked = false;
  const keepalive = setInterval(() => {
    if (!blocked && Date.now() - lastWrite >= options.keepaliveMs) write('\n');
  }, Math.max(5, Math.min(1000, Math.floor(options.keepaliveMs / 4))));
  let lastWrite = Date.now();
  const write = (text: string): boolean => {
    lastWrite = Date.now();
    return res.write(text);
  };
  stop.signal.addEventListener('abort', () => void stream.close());
  if (closing.aborted) finish('server_closing');

  try {
    const it = stream.messages[Symbol.asyncIterator]();
    while (!stop.signal.aborted) {
      const next = await it.next();
      if (next.done || stop.signal.aborted) break;
      let text = '';
      for (const m of next.value) text += `${m.line}\n`;
      if (!write(text)) {
        blocked = true;
        await drained(res, stop.signal);
        blocked = false;
      }
    }
    await it.return?.();
  } catch (e) {
    end = (e as Error).name === 'SlowConsumerError' ? 'slow_consumer' : 'backend';
  } finally {
    clearTimeout(lifetime);
    clearInterval(keepalive);
    res.off('close', onClose);
    stream.overflow.removeEventListener('abort', onOverflow);
    closing.removeEventListener('abort', onClosing);
    await stream.close();
    // A consumer that stalled gets no more bytes: destroy rather than queue an end behind its backlog.
    const why = end as StreamEnd; // set from event callbacks, which narrowing cannot see
    if (why === 'slow_consumer' || why === 'client_closed') res.destroy();
    else res.end();
  }
  return end;
}
