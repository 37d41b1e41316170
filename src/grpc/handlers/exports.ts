import { AppError } from '../../errors.ts';
import { absoluteUrl, grpcBase } from '../../lib/public-url.ts';
import { FEED_IDS, findFeed, type FeedDef } from '../../modules/feeds/feed-catalog.ts';
import { FEED_EXPORT_OPERATIONS, type Operation } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { exportListToProto, exportMetaToProto } from '../mappers.ts';
import { unary, type CallContext } from '../unary.ts';

interface SnapshotRequest {
  feed?: string;
  date?: string;
  hour?: number;
}

/** A feed by id or URL segment; an unknown one is a 400 on `feed` (HTTP has no route for it). */
function feedOf(name: string | undefined): FeedDef {
  const feed = findFeed(name ?? '');
  if (!feed) throw AppError.field('feed', `must be one of ${FEED_IDS.join(', ')}`);
  return feed;
}

/** date and hour as the HTTP path segments: `YYYY-MM-DD/H` (a listed id) splits into both. */
function segments(req: SnapshotRequest): { feed: FeedDef; date: string; hour: string | undefined } {
  const feed = feedOf(req.feed);
  const date = req.date ?? '';
  if (req.hour === undefined && /^[^/]+\/[^/]+$/.test(date)) {
    const [d, h] = date.split('/') as [string, string];
    return { feed, date: d, hour: h };
  }
  return { feed, date, hour: req.hour === undefined ? undefined : String(req.hour) };
}

/** Hourly requests take the hourly operation's row (same scope, same bucket as its HTTP route). */
const snapshotOp =
  (kind: 'download' | 'meta') =>
  (req: SnapshotRequest): Operation => {
    const { feed, hour } = segments(req);
    const ops = FEED_EXPORT_OPERATIONS[feed.id];
    return hour === undefined ? ops[kind] : kind === 'download' ? ops.hourDownload : ops.hourMeta;
  };

/** ListExportSnapshots ↔ GET /feeds/S/export. */
export const listExportSnapshots = (ctx: CallContext, s: Services) =>
  unary<{ feed?: string; limit?: number; cursor?: string }, unknown>(
    ctx,
    (req) => FEED_EXPORT_OPERATIONS[feedOf(req.feed).id].list,
    async (_caller, req) => ({ value: exportListToProto(await s.exports.list(feedOf(req.feed), req.limit, req.cursor)) }),
  );

/** Where umbra's own download URLs are served: the base they are made absolute on (lib/public-url.ts). */
export interface DownloadLinks {
  /** UMBRA_PUBLIC_URL; undefined: derived from the call's :authority. */
  publicUrl: string | undefined;
  /** The port the HTTP server (which serves the download route) listens on. */
  httpPort: () => number;
  /** UMBRA_HOST, for a call whose :authority names no usable host. */
  listenHost: string;
}

/**
 * GetExportSnapshotURL ↔ GET /feeds/S/export/{date}[/{hour}]: the URL the 307 points to, absolute
 * like the Location (a client has no base to resolve a path against).
 */
export const getExportSnapshotUrl = (ctx: CallContext, s: Services, links: DownloadLinks) =>
  unary<SnapshotRequest, unknown>(ctx, snapshotOp('download'), async (_caller, req, _op, call) => {
    const { feed, date, hour } = segments(req);
    const url = await s.exports.download(feed, date, hour);
    const base = grpcBase({
      publicUrl: links.publicUrl,
      authority: call.getHost(),
      httpPort: links.httpPort(),
      listenHost: links.listenHost,
    });
    return { value: { url: absoluteUrl(base, url) } };
  });

/** GetExportSnapshotMeta ↔ GET /feeds/S/export/{date}[/{hour}]/meta. */
export const getExportSnapshotMeta = (ctx: CallContext, s: Services) =>
  unary<SnapshotRequest, unknown>(ctx, snapshotOp('meta'), async (_caller, req) => {
    const { feed, date, hour } = segments(req);
    return { value: exportMetaToProto(await s.exports.meta(feed, date, hour)) };
  });
