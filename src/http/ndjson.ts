import type { FastifyReply } from 'fastify';
import type { FeedStream } from '../modules/feeds/stream-service.ts';
import { pumpStream, type StreamEnd } from '../modules/feeds/stream-pump.ts';

export interface NdjsonOptions {
  /** An empty line is written whenever nothing was written for this long (about 15 s in production). */
  keepaliveMs: number;
  /** The stream is closed cleanly after this long (30 minutes in production). */
  lifetimeMs: number;
}

/**
 * A feed stream as NDJSON on the raw response: one line per record, each batch in one write, flushed
 * as written, an empty line as keepalive. The stream's life is the shared pump's; here are the head
 * and the end: a consumer that stalled or left gets no more bytes (destroyed rather than ended
 * behind its backlog), any other end is a clean end of the response.
 */
export async function streamNdjson(
  reply: FastifyReply,
  stream: FeedStream,
  options: NdjsonOptions,
  closing: AbortSignal,
): Promise<StreamEnd> {
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
  const end = await pumpStream(
    stream,
    {
      write: (batch) => {
        let text = '';
        for (const m of batch) text += `${m.line}\n`;
        return res.write(text);
      },
      keepalive: () => void res.write('\n'),
      onPeerGone: (listener) => {
        res.once('close', listener);
        return () => res.off('close', listener);
      },
      peerGone: () => res.destroyed,
      once: (event, listener) => res.once(event, listener),
      off: (event, listener) => res.off(event, listener),
    },
    { lifetimeMs: options.lifetimeMs, keepaliveMs: options.keepaliveMs, closing },
  );
  if (end === 'slow_consumer' || end === 'client_closed') res.destroy();
  else res.end();
  return end;
}
