import type { Scope } from './modules/accounts/scopes.ts';
import { FEED_LIST, type FeedId } from './modules/feeds/feed-catalog.ts';
import type { BucketName } from './modules/ratelimit/buckets.ts';

/**
 * Credit cost rule. 'batch' is ceil(n × 0.9) over unique valid addresses, computed in lookup/batch.ts
 * once the body is known; the others are known before the handler runs.
 */
export type CostRule = { kind: 'free' } | { kind: 'fixed'; credits: number } | { kind: 'batch' };

export interface Operation {
  /** Dotted id, also the metrics label. */
  id: string;
  method: 'GET' | 'POST';
  /** Path relative to /api/v4, fastify syntax. */
  path: string;
  /** null: public (no key). */
  scope: Scope | null;
  /** null: not rate limited. */
  bucket: BucketName | null;
  cost: CostRule;
  /** Method of example.v1.ExampleService that mirrors it; null for HTTP-only operations. */
  grpc: string | null;
  summary: string;
  /** What a client needs to know to call it (the OpenAPI description): input, answer, billing, limits. */
  description: string;
}

const op = (o: Operation): Operation => o;

/** Every HTTP operation of /api/v4, declared once. Hooks read the row; routes never check scopes by hand. */
export const OPERATIONS = {
  accountMe: op({
    id: 'account.me',
    method: 'GET',
    path: '/account/me',
    scope: 'BASIC',
    bucket: 'account',
    cost: { kind: 'free' },
    grpc: 'GetAccountInfo',
    summary: 'The calling account, its scopes and remaining lookup credits',
    description:
      'Who the API key belongs to: the member, the team, the scopes of this key and the lookup credits the team has left with the ' +
      'seconds until they refill. Free; draws on the account rate bucket.',
  }),
  lookupIp: op({
    id: 'lookup.ip',
    method: 'GET',
    path: '/lookup/ip/:ip_address',
    scope: 'BASIC',
    bucket: 'lookup',
    cost: { kind: 'fixed', credits: 1 },
    grpc: 'LookupIP',
    summary: 'Network, location and intelligence for one IPv4 or IPv6 address',
    description:
      'Network (AS, ISP, type), location and intelligence (risk score, categories, providers, behaviour, devices) for one ' +
      'IPv4 or IPv6 address, IPv6 with raw or percent-encoded colons. `explain=true` adds `evidence`, the source of every value, ' +
      'at the same price. Costs 1 credit; an address that is not valid is a 400 and costs nothing.',
  }),
  lookupIps: op({
    id: 'lookup.ips',
    method: 'POST',
    path: '/lookup/ips',
    scope: 'BASIC',
    bucket: 'lookup',
    cost: { kind: 'batch' },
    grpc: 'LookupIPs',
    summary: 'Batch lookup of up to 1,000 addresses, billed ceil(n × 0.9) over unique valid addresses',
    description:
      'Looks up to 1,000 addresses in one request, as the single lookup would. Each address is answered once, in input order; ' +
      'addresses that are not valid are listed in `invalid`, unbilled. Costs ceil(n × 0.9) credits for n unique valid addresses.',
  }),
  lookupDomain: op({
    id: 'lookup.domain',
    method: 'GET',
    path: '/lookup/domain/:domain',
    scope: 'BASIC',
    bucket: 'domain',
    cost: { kind: 'fixed', credits: 1 },
    grpc: 'LookupDomain',
    summary: 'Honeypot intelligence collected for a domain',
    description:
      'What the honeypots saw of a domain (Unicode or Punycode) over 30 days: daily counts, top subdomains and ports, the most ' +
      'recent events with masked source addresses, and distributions by AS, country and hour. `limit` caps `recent_events`. ' +
      'Costs 1 credit.',
  }),
  health: op({
    id: 'health',
    method: 'GET',
    path: '/health',
    scope: null,
    bucket: null,
    cost: { kind: 'free' },
    grpc: null,
    summary: 'Health probe (no key)',
    description:
      'Whether this server can answer: 200 with `status: ok`, or 503 naming the problems. Needs no key and is not rate limited; ' +
      'also served at /health.',
  }),
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;
export const API_PREFIX = '/api/v4';

/** The live stream of every feed: its stream scope, the shared connection bucket, no credits. */
export const FEED_STREAM_OPERATIONS = Object.fromEntries(
  FEED_LIST.map((f) => [
    f.id,
    op({
      id: `feeds.${f.id}.stream`,
      method: 'GET',
      path: `/feeds/${f.segment}/stream`,
      scope: f.streamScope,
      bucket: 'stream',
      cost: { kind: 'free' },
      grpc: f.grpcStream,
      summary: `Live NDJSON stream of the ${f.id} feed (timestamps in Unix ${f.unit === 'ms' ? 'milliseconds' : 'seconds'})`,
      description:
        `Every ${f.id} record stored after the stream opens, one JSON object per line, as it is ingested; an empty line is a ` +
        'keepalive. The server closes the stream cleanly after its lifetime: reconnect at once. Free; each open stream counts ' +
        "against the team's concurrent-stream allowance and opening one draws on the stream bucket.",
    }),
  ]),
) as Record<FeedId, Operation>;

export type ExportOperationName = 'list' | 'download' | 'meta' | 'hourDownload' | 'hourMeta';

/**
 * The five export operations of every feed: the feed's export scope, the shared export bucket for list
 * and metadata, the download bucket for the two redirects, no credits. Hourly variants map to the same
 * gRPC methods, which take an optional hour.
 */
export const FEED_EXPORT_OPERATIONS = Object.fromEntries(
  FEED_LIST.map((f) => {
    const base = { scope: f.exportScope, cost: { kind: 'free' }, method: 'GET' } as const;
    const ops: Record<ExportOperationName, Operation> = {
      list: op({
        ...base,
        id: `feeds.${f.id}.export.list`,
        path: `/feeds/${f.segment}/export`,
        bucket: 'export',
        grpc: 'ListExportSnapshots',
        summary: `Parquet snapshots of the ${f.id} feed, newest first`,
        description:
          `The parquet snapshots of the ${f.id} feed, hourly ones of the current UTC date and daily ones before, newest first, ` +
          'with size, row count and checksum. `limit` sets the page size; `next_cursor` (absent on the last page) asks for the next.',
      }),
      download: op({
        ...base,
        id: `feeds.${f.id}.export.download`,
        path: `/feeds/${f.segment}/export/:date`,
        bucket: 'download',
        grpc: 'GetExportSnapshotURL',
        summary: `307 to a 24-hour download URL of a daily ${f.id} snapshot, or of the latest hourly one`,
        description:
          `Redirects (307) to a download URL of the daily ${f.id} snapshot of a date, or of the latest hourly snapshot for ` +
          "'latest'. The URL is valid 24 hours and needs no API key: send none to it. Free; draws on the download bucket.",
      }),
      meta: op({
        ...base,
        id: `feeds.${f.id}.export.meta`,
        path: `/feeds/${f.segment}/export/:date/meta`,
        bucket: 'export',
        grpc: 'GetExportSnapshotMeta',
        summary: `Checksum, size, rows and schema of a daily (or the latest hourly) ${f.id} snapshot`,
        description:
          `The metadata of the daily ${f.id} snapshot of a date (or of the latest hourly one for 'latest'): SHA-256 of the bytes ` +
          'the download serves, size, rows and the parquet schema.',
      }),
      hourDownload: op({
        ...base,
        id: `feeds.${f.id}.export.hour_download`,
        path: `/feeds/${f.segment}/export/:date/:hour`,
        bucket: 'download',
        grpc: 'GetExportSnapshotURL',
        summary: `307 to a 24-hour download URL of an hourly ${f.id} snapshot`,
        description:
          `Redirects (307) to a download URL of the hourly ${f.id} snapshot of a date and UTC hour. The URL is valid 24 hours ` +
          'and needs no API key: send none to it. Free; draws on the download bucket.',
      }),
      hourMeta: op({
        ...base,
        id: `feeds.${f.id}.export.hour_meta`,
        path: `/feeds/${f.segment}/export/:date/:hour/meta`,
        bucket: 'export',
        grpc: 'GetExportSnapshotMeta',
        summary: `Metadata of an hourly ${f.id} snapshot of the current UTC date`,
        description:
          `The metadata of the hourly ${f.id} snapshot of a date and UTC hour: SHA-256 of the bytes the download serves, size, ` +
          'rows and the parquet schema.',
      }),
    };
    return [f.id, ops];
  }),
) as Record<FeedId, Record<ExportOperationName, Operation>>;

/** Every operation, for registries and the HTTP/gRPC parity test. */
export const ALL_OPERATIONS: readonly Operation[] = [
  ...Object.values(OPERATIONS),
  ...Object.values(FEED_STREAM_OPERATIONS),
  ...Object.values(FEED_EXPORT_OPERATIONS).flatMap((o) => Object.values(o)),
];
