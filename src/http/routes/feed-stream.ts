import type { FeedDef } from '../../modules/feeds/feed-catalog.ts';
import { FEED_STREAM_OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import { streamNdjson, type NdjsonOptions } from '../ndjson.ts';
import type { RouteSpec } from '../route-spec.ts';
import type { Metrics } from '../../metrics.ts';
import { errorResponses } from '../schemas.ts';
import type { StreamEnd } from '../../modules/feeds/stream-pump.ts';

/** GET /feeds/{S}/stream: one route per feed of the catalog, all through the same stream service. */
export const feedStream = (s: Services, metrics: Metrics, feed: FeedDef, options: NdjsonOptions, closing: AbortSignal): RouteSpec => ({
  operation: FEED_STREAM_OPERATIONS[feed.id],
  schema: {
    response: {
      200: {
        description:
          `One ${feed.id} record per line (application/x-ndjson); an empty line is a keepalive. Closed cleanly after the ` +
          `stream lifetime; reconnect at once.`,
        content: { 'application/x-ndjson': { schema: feed.schema } },
      },
      ...errorResponses([401, 403, 429, 503]),
    },
  },
  handler: async (req, reply) => {
    const stream = await s.streams.open(callerOf(req), feed, closing);
    metrics.streamsOpen.inc({ feed: feed.id });
    let end: StreamEnd;
    try {
      end = await streamNdjson(reply, stream, options, closing);
    } finally {
      metrics.streamsOpen.dec({ feed: feed.id });
    }
    metrics.streamsEnded.inc({ feed: feed.id, reason: end });
    req.log.info({ operation: FEED_STREAM_OPERATIONS[feed.id].id, end }, 'stream closed');
    return reply;
  },
});
