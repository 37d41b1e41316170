import type { operations } from './generated/openapi.js';
import type { Opened } from './types.js';

/** Feed ids, their URL segment and the unit of their stream's `timestamp` (the service's table). */
export const FEEDS = {
  proxies: { segment: 'proxies', unit: 's' },
  anonymizers: { segment: 'anonymizers', unit: 's' },
  torrents: { segment: 'torrents', unit: 's' },
  honeypot_http: { segment: 'helio/http', unit: 'ms' },
  honeypot_https: { segment: 'helio/https', unit: 'ms' },
  honeypot_dns: { segment: 'helio/dns', unit: 'ms' },
  honeypot_adb: { segment: 'helio/adb', unit: 'ms' },
  ja4t: { segment: 'ja4t', unit: 's' },
} as const satisfies Record<string, { segment: string; unit: 's' | 'ms' }>;

export type FeedId = keyof typeof FEEDS;

export function isFeedId(s: string): s is FeedId {
  return Object.hasOwn(FEEDS, s);
}

/** The typed record of a feed's stream line, with its enumerations kept open. */
export type FeedRecord<F extends FeedId> = Opened<operations[`feeds.${F}.stream`]['responses'][200]['content']['application/x-ndjson']>;

/** One page of a feed's snapshot list. */
export type SnapshotPage = Opened<operations['feeds.anonymizers.export.list']['responses'][200]['content']['application/json']>;
/** One snapshot of a list page. */
export type SnapshotItem = SnapshotPage['feeds'][number];
/** Metadata of one snapshot (size, rows, SHA-256, parquet schema). */
export type SnapshotMeta = Opened<operations['feeds.anonymizers.export.meta']['responses'][200]['content']['application/json']>;

/** `latest`, `YYYY-MM-DD` or `YYYY-MM-DD/H` (hour 0..23, padded or not). */
const SNAPSHOT_ID = /^(latest|\d{4}-\d{2}-\d{2})(?:\/(\d{1,2}))?$/;

/** The API path of a snapshot id, each segment encoded (an id comes from user input). */
export function snapshotPath(feed: FeedId, id: string): string {
  const m = SNAPSHOT_ID.exec(id);
  if (!m) throw new TypeError(`snapshot id must be latest, YYYY-MM-DD or YYYY-MM-DD/H, not ${JSON.stringify(id)}`);
  const hour = m[2] === undefined ? '' : `/${Number(m[2])}`;
  return `/feeds/${FEEDS[feed].segment}/export/${m[1]}${hour}`;
}
