import type { Scope } from '../accounts/scopes.ts';
import { FEED_SCHEMAS } from './feed-schemas.ts';
import type { TSchema } from 'typebox';

export const FEED_IDS = [
  'proxies',
  'anonymizers',
  'torrents',
  'honeypot_http',
  'honeypot_https',
  'honeypot_dns',
  'honeypot_adb',
  'ja4t',
] as const;
export type FeedId = (typeof FEED_IDS)[number];

/**
 * Scalar parquet column types the export writer knows, by their DuckDB names (what `DESCRIBE` shows a
 * reader). ASNs are UBIGINT: they exceed int32. `TIMESTAMP WITH TIME ZONE` is parquet's
 * TIMESTAMP(MICROS, isAdjustedToUTC=true), made from the record's integer in the feed's unit.
 */
export type ScalarType = 'VARCHAR' | 'BIGINT' | 'INTEGER' | 'UBIGINT' | 'BOOLEAN' | 'BLOB' | 'JSON' | 'TIMESTAMP WITH TIME ZONE';
/** A scalar, or a nested type in DuckDB's spelling: parquet STRUCT groups, LIST (`T[]`) and MAP groups. */
export type ColumnType = ScalarType | `STRUCT(${string})` | `${ScalarType | `STRUCT(${string})`}[]` | `MAP(${ScalarType}, ${string})`;

export interface ParquetColumn {
  name: string;
  type: ColumnType;
  /** The record member it comes from; BLOB columns come from base64 members, JSON columns are serialized. */
  from: string;
}

/** A STRUCT of these members, in this order (the record's, so a row reads like the stream line). */
const struct = (members: Record<string, ColumnType>): `STRUCT(${string})` =>
  `STRUCT(${Object.entries(members)
    .map(([k, t]) => `${k} ${t}`)
    .join(', ')})`;
const listOf = <T extends ScalarType | `STRUCT(${string})`>(t: T): `${T}[]` => `${t}[]`;
const mapOf = <K extends ScalarType>(k: K, v: ColumnType): `MAP(${K}, ${string})` => `MAP(${k}, ${v})`;

export interface FeedDef {
  id: FeedId;
  /** URL segment S of /feeds/S/...; may hold a slash (helio/http). */
  segment: string;
  exportScope: Scope;
  streamScope: Scope;
  /** Unit of the record's `timestamp`: milliseconds for the four honeypot feeds, seconds otherwise. */
  unit: 's' | 'ms';
  grpcStream: string;
  /** JSON Schema of one record (validation at ingestion, OpenAPI docs of the stream). */
  schema: TSchema;
  /**
   * Columns of the feed's parquet export, in order: the columns the contract names, exactly as it
   * names them, then every other member of the record (nested ones as STRUCT, LIST and MAP), so an
   * export holds everything a stream line does (docs/feeds.md lists them).
   */
  parquet: ParquetColumn[];
  /** Flat feeds may also be ingested as CSV with these columns as the header. */
  csv: boolean;
  /** Members holding IP addresses, canonicalised at ingestion (RFC 5952, IPv4-mapped → IPv4). */
  ipFields: string[];
  /** Honeypot feeds whose events feed domain intelligence. */
  domainEvents: boolean;
}

const col = (name: string, type: ColumnType, from = name): ParquetColumn => ({ name, type, from });
const honeypotHead = [col('timestamp', 'BIGINT'), col('tunnel_id', 'BIGINT'), col('domain', 'VARCHAR'), col('port', 'INTEGER')];
/** pool_id is an integer or a string in records: JSON keeps which (7 stays 7, "7" stays "7"). */
const honeypotMeta = col('meta', struct({ proxy_ip: 'VARCHAR', server: 'VARCHAR', pool_id: 'JSON', provider: 'VARCHAR' }));

/** The one feed catalog: routing, scopes, validation, streams and exports all read it. Adding a feed is one entry. */
export const FEEDS: Record<FeedId, FeedDef> = {
  proxies: {
    id: 'proxies',
    segment: 'proxies',
    exportScope: 'PROXY_FEEDS',
    streamScope: 'PROXY_FIREHOSE',
    unit: 's',
    grpcStream: 'StreamProxies',
    schema: FEED_SCHEMAS.proxies,
    parquet: [
      col('ip', 'VARCHAR'),
      col('provider', 'VARCHAR'),
      col('type', 'VARCHAR'),
      col('timestamp', 'BIGINT'),
      col('country_code', 'VARCHAR'),
      col('asn', 'UBIGINT'),
      col('variant', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: true,
    ipFields: ['ip'],
    domainEvents: false,
  },
  anonymizers: {
    id: 'anonymizers',
    segment: 'anonymizers',
    exportScope: 'ANONYMIZERS_FEED',
    streamScope: 'ANONYMIZERS_STREAM',
    unit: 's',
    grpcStream: 'StreamAnonymizers',
    schema: FEED_SCHEMAS.anonymizers,
    parquet: [
      col('range_start', 'VARCHAR'),
      col('range_end', 'VARCHAR'),
      col('provider', 'VARCHAR'),
      col('type', 'VARCHAR'),
      col('country_code', 'VARCHAR'),
      col('asn', 'UBIGINT'),
      col('timestamp', 'BIGINT'),
      col('variant', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: true,
    ipFields: ['range_start', 'range_end'],
    domainEvents: false,
  },
  torrents: {
    id: 'torrents',
    segment: 'torrents',
    exportScope: 'TORRENTS_FEED',
    streamScope: 'TORRENTS_STREAM',
    unit: 's',
    grpcStream: 'StreamTorrents',
    schema: FEED_SCHEMAS.torrents,
    parquet: [
      col('info_hash', 'VARCHAR'),
      col('name', 'VARCHAR'),
      col('magnet_uri', 'VARCHAR'),
      col('total_size', 'BIGINT'),
      col('piece_length', 'BIGINT'),
      col('file_count', 'BIGINT'),
      col('timestamp', 'BIGINT'),
      col('files', listOf(struct({ path: 'VARCHAR', length: 'BIGINT' }))),
      col('peers', listOf(struct({ ip: 'VARCHAR', port: 'INTEGER', source: 'VARCHAR', encrypted: 'BOOLEAN' }))),
      col('simulated', 'BOOLEAN'),
    ],
    csv: false,
    ipFields: [],
    domainEvents: false,
  },
  honeypot_http: {
    id: 'honeypot_http',
    segment: 'helio/http',
    exportScope: 'HONEYPOT_HTTP_FEED',
    streamScope: 'HONEYPOT_HTTP_STREAM',
    unit: 'ms',
    grpcStream: 'StreamHoneypotHTTP',
    schema: FEED_SCHEMAS.honeypot_http,
    parquet: [
      ...honeypotHead,
      col('method', 'VARCHAR', 'details.method'),
      col('uri', 'VARCHAR', 'details.uri'),
      col('version', 'VARCHAR', 'details.version'),
      col('raw', 'VARCHAR'),
      col('protocol', 'VARCHAR'),
      honeypotMeta,
      col('headers', mapOf('VARCHAR', 'VARCHAR'), 'details.headers'),
      col('source_ip', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: false,
    ipFields: ['source_ip'],
    domainEvents: true,
  },
  honeypot_https: {
    id: 'honeypot_https',
    segment: 'helio/https',
    exportScope: 'HONEYPOT_HTTPS_FEED',
    streamScope: 'HONEYPOT_HTTPS_STREAM',
    unit: 'ms',
    grpcStream: 'StreamHoneypotHTTPS',
    schema: FEED_SCHEMAS.honeypot_https,
    parquet: [
      ...honeypotHead,
      col('details', 'JSON'),
      col('raw', 'BLOB'),
      col('protocol', 'VARCHAR'),
      honeypotMeta,
      col('source_ip', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: false,
    ipFields: ['source_ip'],
    domainEvents: true,
  },
  honeypot_dns: {
    id: 'honeypot_dns',
    segment: 'helio/dns',
    exportScope: 'HONEYPOT_DNS_FEED',
    streamScope: 'HONEYPOT_DNS_STREAM',
    unit: 'ms',
    grpcStream: 'StreamHoneypotDNS',
    schema: FEED_SCHEMAS.honeypot_dns,
    parquet: [
      ...honeypotHead,
      col('protocol', 'VARCHAR'),
      honeypotMeta,
      col('qname', 'VARCHAR'),
      col('qtype', 'VARCHAR'),
      col('source_ip', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: false,
    ipFields: ['source_ip'],
    domainEvents: true,
  },
  honeypot_adb: {
    id: 'honeypot_adb',
    segment: 'helio/adb',
    exportScope: 'HONEYPOT_ADB_FEED',
    streamScope: 'HONEYPOT_ADB_STREAM',
    unit: 'ms',
    grpcStream: 'StreamHoneypotADB',
    schema: FEED_SCHEMAS.honeypot_adb,
    parquet: [
      col('session', 'VARCHAR'),
      col('sequential_id', 'BIGINT'),
      col('command', 'BLOB'),
      col('hash', 'VARCHAR'),
      col('timestamp', 'TIMESTAMP WITH TIME ZONE'),
      col('source_ip', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: false,
    ipFields: ['source_ip'],
    domainEvents: false,
  },
  ja4t: {
    id: 'ja4t',
    segment: 'ja4t',
    exportScope: 'JA4T_FEED',
    streamScope: 'JA4T_STREAM',
    unit: 's',
    grpcStream: 'StreamJA4T',
    schema: FEED_SCHEMAS.ja4t,
    parquet: [
      col('ip', 'VARCHAR'),
      col('ja4t', 'VARCHAR'),
      col('provider', 'VARCHAR'),
      col('type', 'VARCHAR'),
      col('timestamp', 'BIGINT'),
      col('country_code', 'VARCHAR'),
      col('asn', 'UBIGINT'),
      col('variant', 'VARCHAR'),
      col('simulated', 'BOOLEAN'),
    ],
    csv: true,
    ipFields: ['ip'],
    domainEvents: false,
  },
};

export const FEED_LIST: readonly FeedDef[] = FEED_IDS.map((id) => FEEDS[id]);

export const isFeedId = (s: string): s is FeedId => (FEED_IDS as readonly string[]).includes(s);

/** A feed by id or URL segment (`honeypot_http` or `helio/http`), for the CLI and the ingest endpoint. */
export function findFeed(name: string): FeedDef | undefined {
  const n = name.trim().toLowerCase();
  return isFeedId(n) ? FEEDS[n] : FEED_LIST.find((f) => f.segment === n);
}

/** A record's timestamp in milliseconds, whatever the feed's unit. */
export const recordTimeMs = (feed: FeedDef, record: { timestamp: number }): number =>
  feed.unit === 'ms' ? record.timestamp : record.timestamp * 1000;
