import { Type, type TSchema } from 'typebox';
import { VARIANTS } from '../providers/provider-registry.ts';

/**
 * JSON Schemas of the records of each feed (docs/feeds.md). They validate ingestion
 * and document the stream lines. Unknown top-level members are refused so a sensor's typo is named,
 * not silently dropped; IP syntax, domain syntax and the adb hash are checked in feed-records.ts.
 */
const Provider = Type.String({ pattern: '^[A-Z0-9][A-Z0-9_.-]{0,63}$', description: 'upper-case provider tag, e.g. BRIGHTDATA' });
const Variant = Type.Union(
  VARIANTS.map((v) => Type.Literal(v)),
  { description: "the provider's product line of this sighting; ingestion sets it from a tag such as SMARTPROXY_MOBILE" },
);
const Category = Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,63}$', description: 'upper-case category value, e.g. RESIDENTIAL_PROXY' });
const Country = Type.String({ pattern: '^([A-Z]{2})?$', description: 'ISO 3166-1 alpha-2, empty when unknown' });
const Asn = Type.Integer({ minimum: 0, maximum: 4294967295, description: 'AS number (may exceed int32)' });
const Ip = Type.String({ minLength: 2, maxLength: 45, description: 'IPv4 or IPv6 address' });
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Text = (max: number) => Type.String({ maxLength: max });
const Base64 = (max: number) => Type.String({ maxLength: max, pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'base64' });

// Disjoint ranges (years 2000..2100) so a record in the wrong unit is caught and named at ingestion.
export const SECONDS_RANGE = { minimum: 946_684_800, maximum: 4_102_444_800 } as const;
export const MILLIS_RANGE = { minimum: 946_684_800_000, maximum: 4_102_444_800_000 } as const;
const Seconds = Type.Integer({ ...SECONDS_RANGE, description: 'Unix seconds' });
const Millis = Type.Integer({ ...MILLIS_RANGE, description: 'Unix milliseconds' });

const strict = { additionalProperties: false } as const;

/** Present only on records umbra's demo simulator made up (ingest-service.ts sets it; ingestion refuses it from clients). */
const Simulated = Type.Optional(
  Type.Literal(true, { description: "true on records umbra's demo simulator made up; never set by a sensor" }),
);

/** What a proxies, anonymizers or ja4t record says of its address (or range), after what locates it. */
const Sighting = {
  provider: Provider,
  variant: Type.Optional(Variant),
  type: Category,
  timestamp: Seconds,
  country_code: Country,
  asn: Asn,
  simulated: Simulated,
};

const Meta = Type.Object(
  {
    proxy_ip: Text(64),
    server: Text(256),
    pool_id: Type.Union([Type.Integer(), Text(128)]),
    provider: Text(128),
  },
  { ...strict, description: 'honeypot tunnel metadata' },
);

const HoneypotHead = {
  timestamp: Millis,
  tunnel_id: Type.Integer({ minimum: 0 }),
  domain: Type.String({ minLength: 1, maxLength: 253 }),
  port: Port,
  protocol: Text(16),
  meta: Meta,
  /** Extra member (records may carry more members than the contract lists): the attacker's address, for domain and IP intelligence. */
  source_ip: Type.Optional(Ip),
  simulated: Simulated,
};

export const FEED_SCHEMAS = {
  proxies: Type.Object(
    {
      ip: Ip,
      ...Sighting,
    },
    strict,
  ),
  anonymizers: Type.Object(
    {
      range_start: Ip,
      range_end: Ip,
      ...Sighting,
    },
    strict,
  ),
  torrents: Type.Object(
    {
      info_hash: Type.String({ pattern: '^[0-9a-fA-F]{40}$', description: 'BitTorrent v1 info hash, 40 hex' }),
      name: Text(1024),
      magnet_uri: Type.String({ maxLength: 8192, pattern: '^magnet:\\?' }),
      total_size: Type.Integer({ minimum: 0 }),
      piece_length: Type.Integer({ minimum: 1 }),
      file_count: Type.Integer({ minimum: 0 }),
      files: Type.Array(Type.Object({ path: Text(4096), length: Type.Integer({ minimum: 0 }) }, strict), { maxItems: 100_000 }),
      peers: Type.Array(Type.Object({ ip: Ip, port: Port, source: Text(512), encrypted: Type.Boolean() }, strict), { maxItems: 10_000 }),
      timestamp: Seconds,
      simulated: Simulated,
    },
    strict,
  ),
  honeypot_http: Type.Object(
    {
      ...HoneypotHead,
      details: Type.Object(
        { method: Text(32), uri: Text(16_384), version: Text(16), headers: Type.Record(Type.String(), Type.String()) },
        strict,
      ),
      raw: Text(1_048_576),
    },
    strict,
  ),
  honeypot_https: Type.Object(
    {
      ...HoneypotHead,
      details: Type.Union([Type.Object({}, { description: 'parsed TLS ClientHello with its ja4' }), Type.Null()]),
      raw: Type.Optional(Base64(262_144)),
    },
    strict,
  ),
  honeypot_dns: Type.Object(
    {
      ...HoneypotHead,
      // The contract lists no protocol for dns records; a sensor may still send one.
      protocol: Type.Optional(Text(16)),
      port: Type.Union([Type.Literal(53), Type.Literal(853), Type.Literal(5353)]),
      qname: Type.String({ minLength: 1, maxLength: 253 }),
      qtype: Type.String({ pattern: '^[A-Z0-9]{1,10}$' }),
      source_ip: Ip,
    },
    strict,
  ),
  honeypot_adb: Type.Object(
    {
      session: Type.String({ minLength: 1, maxLength: 128 }),
      sequential_id: Type.Integer({ minimum: 0 }),
      command: Base64(1_048_576),
      hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'hex SHA-256 of the raw command bytes' }),
      timestamp: Millis,
      source_ip: Type.Optional(Ip),
      simulated: Simulated,
    },
    strict,
  ),
  ja4t: Type.Object(
    {
      ip: Ip,
      ja4t: Type.String({ pattern: '^[0-9]{1,5}_[0-9-]{1,96}_[0-9]{1,5}_[0-9]{1,3}$', description: 'JA4T: window_options_mss_wscale' }),
      ...Sighting,
    },
    strict,
  ),
} satisfies Record<string, TSchema>;
