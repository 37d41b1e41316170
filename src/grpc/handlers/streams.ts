import type { Logger } from 'pino';
import type { FeedDef } from '../../modules/feeds/feed-catalog.ts';
import type { FeedStream } from '../../modules/feeds/stream-service.ts';
import type { FeedMessage } from '../../modules/feeds/feed-bus.ts';
import { pumpStream } from '../../modules/feeds/stream-pump.ts';
import { FEED_STREAM_OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { feedRecordToProto } from '../mappers.ts';
import { rateMetadata, toGrpcFailure } from '../status.ts';
import { apiKeyOf, codeName, type CallContext } from '../unary.ts';
import { GrpcStatus as status, type StreamCall, type StreamHandler } from '../wire-server.ts';

export interface StreamContext extends CallContext {
  services: Services;
  logger: Logger;
  /** The stream is ended cleanly (status OK) after this long (30 minutes in production). */
  lifetimeMs: number;
  /** Aborted when the app closes: open streams end cleanly. */
  closing: AbortSignal;
  /** The record's stream message, encoded once and shared by every call on the feed. */
  encoded(feed: FeedDef, message: FeedMessage): Buffer;
}

/**
 * Encodes feed messages with the method's serializer, caching the bytes on the message object that
 * the bus hands to every subscriber (weakly: they go when the message does).
 */
export function recordEncoder(serializers: Record<string, (value: object) => Buffer>): (feed: FeedDef, message: FeedMessage) => Buffer {
  const cache = new WeakMap<FeedMessage, Buffer>();
  return (feed, message) => {
    let bytes = cache.get(message);
    if (!bytes) {
      bytes = serializers[feed.grpcStream]!(feedRecordToProto(feed, message.record as unknown as Record<string, unknown>));
      cache.set(message, bytes);
    }
    return bytes;
  };
}

/**
 * Stream{Feed} ↔ GET /feeds/S/stream: the same guard (connection bucket), the same StreamService
 * (backend check, team allowance) and the same bus subscription as the HTTP route. A cancelled call
 * frees its stream slot at once; the lifetime and server shutdown end the call with OK.
 */
export function feedStreamMethod(ctx: StreamContext, feed: FeedDef): StreamHandler {
  const op = FEED_STREAM_OPERATIONS[feed.id];
  return (call) => {
    ctx.guard.admit(op, apiKeyOf(call.metadata), (err, admission) => {
      if (err) {
        const failure = toGrpcFailure(err, admission.rate);
        count(ctx, feed, failure.code);
        return fail(call, failure);
      }
      call.sendMetadata(rateMetadata({}, admission.rate));
      ctx.services.streams.open(admission.caller!, feed, ctx.closing).then(
        (stream) => void pump(ctx, feed, call, stream),
        (e) => {
          const failure = toGrpcFailure(e, admission.rate);
          count(ctx, feed, failure.code);
          fail(call, failure);
        },
      );
    });
  };
}

function fail(call: StreamCall, failure: ReturnType<typeof toGrpcFailure>): void {
  if (!call.cancelled) call.fail(failure);
}

const count = (ctx: CallContext, feed: FeedDef, code: number | undefined) =>
  ctx.metrics.grpcCalls.inc({ method: feed.grpcStream, code: codeName(code) });

async function pump(ctx: StreamContext, feed: FeedDef, call: StreamCall, stream: FeedStream): Promise<void> {
  ctx.metrics.streamsOpen.inc({ feed: feed.id });
  const why = await pumpStream(
    stream,
    {
      // One write (and so as few DATA frames as the window allows) per batch the bus delivers.
      write: (batch) => call.writeEncoded(batch.map((m) => ctx.encoded(feed, m))),
      onPeerGone: (listener) => {
        call.once('cancelled', listener);
        return () => call.off('cancelled', listener);
      },
      peerGone: () => call.cancelled,
      once: (event, listener) => call.once(event, listener),
      off: (event, listener) => call.off(event, listener),
    },
    { lifetimeMs: ctx.lifetimeMs, closing: ctx.closing },
  );
  ctx.metrics.streamsOpen.dec({ feed: feed.id });
  ctx.metrics.streamsEnded.inc({ feed: feed.id, reason: why });
  ctx.logger.info({ operation: FEED_STREAM_OPERATIONS[feed.id].id, transport: 'grpc', end: why }, 'stream closed');
  count(
    ctx,
    feed,
    why === 'client_closed'
      ? status.CANCELLED
      : why === 'slow_consumer' || why === 'backend' || why === 'lease_lost'
        ? status.UNAVAILABLE
        : status.OK,
  );
  if (why === 'client_closed') return;
  // Routine ends are OK (the client reconnects at once); a consumer cut off, a failed backend or a lost
  // slot is UNAVAILABLE, which clients retry with backoff.
  if (why === 'slow_consumer')
    fail(call, {
      code: status.UNAVAILABLE,
      details: 'The stream fell too far behind the feed and was disconnected; reconnect and read faster.',
      metadata: {},
    });
  else if (why === 'backend')
    fail(call, { code: status.UNAVAILABLE, details: 'The streaming backend is unavailable; retry shortly.', metadata: {} });
  else if (why === 'lease_lost')
    fail(call, {
      code: status.UNAVAILABLE,
      details: "The stream could not keep its slot of the team's concurrent-stream allowance; reconnect shortly.",
      metadata: {},
    });
  else call.end();
}
