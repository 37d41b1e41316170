import type { FeedDef } from '../../modules/feeds/feed-catalog.ts';
import { FEED_STREAM_OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import { streamNdjson, type NdjsonOptions } from '../ndjson.ts';
import type { RouteSpec } from '../route-spec.ts';
import { errorResponses } from '../schemas.ts';

/** GET /feeds/{S}/stream: one route per feed of the catalog, all through the same stream service. */
export const feedStream = (s: Services, feed: FeedDef, options: NdjsonOptions, closing: AbortSignal): RouteSpec => ({
  operation: FEED_STREAM_OPERATIONS[feed.id],
  schema: {
    response: {
      200: {
        description: `One ${feed.id} record per line (application/x-ndjson); an empty line is a keepalive. Closed cleanly after the stream lifetime; reconnect at once.`,
        content: { 'application/x-ndjson': { schema: feed.schema } },
      },
      ...errorResponses([401, 403, 429, 503]),
    },
  },
  handler: async (req, reply) => {
    const stream = await s.streams.open(callerOf(req), feed, closing);
    const end = await streamNdjson(reply, stream, options, closing);
    req.log.info({ operation: FEED_STREAM_OPERATIONS[feed.id].id, end }, 'stream closed');
    return reply;
  },
});
