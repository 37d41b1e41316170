import { Type } from 'typebox';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

/** `T | null` as a JSON-schema type array: serialized by fast-json-stringify without anyOf overhead. */
const Nullable = <T extends 'string' | 'number'>(t: T, description?: string) =>
  Type.Unsafe<(T extends 'string' ? string : number) | null>(
    description === undefined ? { type: [t, 'null'] } : { type: [t, 'null'], description },
  );

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URN of the kind of problem, urn:umbra:problem:<code>, e.g. urn:umbra:problem:validation-error' }),
    title: Type.String({ description: 'short summary of the kind of problem' }),
    status: Type.Integer({ description: 'the HTTP status code' }),
    detail: Type.String({ description: 'what went wrong with this request, and what to do about it' }),
    error: Type.String({ description: 'the same text as detail, for clients that read only `error`' }),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), { description: 'validation failures: parameter or member → messages' }),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details; validation failures add `errors` (field → messages).' },
);

export const Network = Type.Object({
  asn: Type.Integer({ description: 'AS number; 0 when the IP is not in BGP. May exceed int32.' }),
  isp: Type.String(),
  type: Type.String({
    description:
      'MOBILE, SATELLITE, IN_FLIGHT_WIFI, RESIDENTIAL, CORPORATE, ACADEMIC, DATACENTER, GOVERNMENT (open list); UNKNOWN when in no ' +
      'announced range',
  }),
  org: Nullable('string'),
  domain: Nullable('string'),
  abuse_email: Nullable('string'),
  abuse_phone: Nullable('string'),
  bogon: Type.Optional(
    Type.Boolean({
      description:
        'true for reserved space (IANA special-purpose blocks, multicast, IPv6 outside 2000::/3) and for space in no announced or ' +
        'delegated range: no public host has such an address, and it is at no place (location.precision "none")',
    }),
  ),
  anycast: Type.Optional(
    Type.Boolean({
      description:
        'true in a known anycast network (public DNS resolvers, root servers, anycast CDNs): the address answers from many sites, so ' +
        'its location is at most a country',
    }),
  ),
});

export const Location = Type.Object({
  country: Type.String({ description: 'ISO 3166-1 alpha-2; empty when unknown' }),
  state: Type.String(),
  city: Type.String(),
  timezone: Type.String({ description: 'IANA time zone' }),
  latitude: Nullable('number'),
  longitude: Nullable('number'),
  geo_hash: Type.String(),
  precision: Type.Optional(
    Type.String({
      description:
        'how much of the place the data supports (open list): city, region, country, or none (reserved, unrouted or unknown space); ' +
        'members finer than the precision are empty or null',
    }),
  ),
  accuracy_radius_km: Type.Optional(
    Nullable(
      'number',
      'nominal radius in km around latitude/longitude that a city answer stands for (50: a metropolitan area; the geo source has no ' +
        'per-range radius); null when the answer is no point (precision region, country or none)',
    ),
  ),
});

export const Intelligence = Type.Object({
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  behavior: Type.Array(Type.String()),
  categories: Type.Array(Type.String()),
  devices: Type.Array(Type.Object({ os: Type.String(), version: Type.String(), last_seen: Type.Integer() })),
  providers: Type.Array(Type.Object({ provider: Type.String(), type: Type.String(), last_seen: Type.Integer() })),
});

const EvidenceSource = Type.Object(
  {
    source: Type.String({ description: '`feed`, `list` or `overlay`' }),
    feed: Type.Optional(Type.String({ description: 'feed id (source feed)' })),
    kind: Type.Optional(Type.String({ description: 'list kind (source list)' })),
    provider: Type.Optional(Type.String({ description: 'list provider (source list)' })),
    version: Type.Optional(Type.String({ description: 'list version: content hash prefix (source list)' })),
    format: Type.Optional(Type.String({ description: 'detected list format (source list)' })),
    imported_at: Type.Optional(Type.Integer({ description: 'Unix s of the list import' })),
    published_at: Type.Optional(
      Type.Integer({ description: "Unix s of the publisher's own time for the list (source list); the list ages from it" }),
    ),
    published_from: Type.Optional(
      Type.String({
        description:
          "where published_at comes from (source list): `content` (the file's header), `option` (given at import), " +
          "`file-date` (the file's modification time) or `import` (none known: the import time)",
      }),
    ),
    state: Type.Optional(
      Type.String({ description: "the list's age by its kind's rule (source list): `current` (full strength) or `stale` (weaker)" }),
    ),
    strength: Type.Optional(Type.Number({ description: 'the factor, 0 to 1, the list membership carries into risk_score (source list)' })),
    action: Type.Optional(Type.String({ description: '`allow` or `deny` (source overlay)' })),
    cidr: Type.Optional(Type.String({ description: 'overlay range (source overlay)' })),
    created_at: Type.Optional(Type.Integer({ description: 'Unix s (source overlay)' })),
    first_seen: Type.Optional(Type.Integer({ description: 'Unix s (source list: its published_at)' })),
    last_seen: Type.Optional(Type.Integer({ description: 'Unix s (source list: its published_at)' })),
    count: Type.Optional(Type.Integer({ description: 'observations in the 90 day window' })),
    simulated: Type.Optional(
      Type.Boolean({ description: "true when umbra's demo simulator made the feed's records up (source feed); absent for real data" }),
    ),
  },
  { description: 'where one signal comes from' },
);
const RiskPart = Type.Object({ value: Type.Number(), from: Type.Union([Type.String(), Type.Null()]) });

/** `?explain=true` only; see docs/intelligence.md. */
export const Evidence = Type.Object(
  {
    network: Type.Optional(
      Type.Object(
        {
          type: Type.String({ description: "the answer's network.type" }),
          source: Type.String({
            description:
              '`asn` (a curated ASN group), `name` (a keyword of the registered name), `list` (an imported network list) or `none` (UNKNOWN: nothing is known)',
          }),
          reason: Type.String({ description: 'in words: the group and where its knowledge comes from, the keyword, or the list' }),
        },
        { description: 'where network.type came from' },
      ),
    ),
    categories: Type.Array(Type.Object({ category: Type.String(), sources: Type.Array(EvidenceSource) })),
    providers: Type.Array(Type.Object({ provider: Type.String(), type: Type.String(), sources: Type.Array(EvidenceSource) })),
    behavior: Type.Array(Type.Object({ behavior: Type.String(), sources: Type.Array(EvidenceSource) })),
    devices: Type.Array(Type.Object({ os: Type.String(), version: Type.String(), sources: Type.Array(EvidenceSource) })),
    risk: Type.Object(
      {
        score: Type.Integer(),
        prior: Type.Object(
          { value: Type.Number(), from: Type.Union([Type.String(), Type.Null()]) },
          { description: 'what the network type alone gives; `from` is the network type (null: no prior, e.g. a verified service)' },
        ),
        category: RiskPart,
        behavior: RiskPart,
        volume: Type.Object(
          { value: Type.Number(), observations: Type.Integer() },
          { description: 'volume factor (0.55..1) and the requests behind the behaviours, each counted once' },
        ),
        diversity: Type.Object(
          { value: Type.Number(), behaviors: Type.Integer() },
          { description: 'diversity factor (1..1.45) and the distinct behaviours that weigh' },
        ),
        shared: Type.Object(
          { value: Type.Number(), from: Type.Union([Type.String(), Type.Null()]) },
          { description: 'shared-address factor (0.6 or 1); `from` says why the address is shared: a category, MOBILE or CGNAT' },
        ),
        evidence: Type.Number({ description: 'behavior × volume × diversity × shared, at most 100' }),
        benign_cap: Type.Boolean(),
      },
      {
        description: 'the parts of risk_score: round(prior + (1 − prior/100) × (max(category, evidence) + 0.25 × min(category, evidence)))',
      },
    ),
  },
  { description: 'why: the source of every category, provider and behaviour, and the parts of the risk score (explain=true)' },
);

export const IpResult = Type.Object(
  {
    ip: Type.String(),
    network: Network,
    location: Location,
    intelligence: Intelligence,
    embedded_ipv4: Type.Optional(
      Type.Object(
        {
          ip: Type.String({ description: 'the IPv4 address the IPv6 address carries' }),
          via: Type.String({
            description: '6to4 (2002::/16), teredo (2001::/32, the client address) or nat64 (64:ff9b::/96); an open list',
          }),
        },
        { description: 'only for 6to4, Teredo and NAT64 addresses: network and location are those of this IPv4 address' },
      ),
    ),
    evidence: Type.Optional(Evidence),
  },
  { $id: 'IpResult' },
);

export const BatchResult = Type.Object({
  results: Type.Array(Type.Ref('IpResult')),
  invalid: Type.Array(Type.String(), { description: 'Rejected inputs, each once, in input order (not billed)' }),
});

export const AccountInfo = Type.Object({
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  organization: Type.Object({ id: Type.String(), name: Type.String(), relation: Type.String() }),
  scopes: Type.Array(Type.String()),
  lookup_quota: Type.Object({ credits: Type.Integer(), resets_in: Type.Integer({ description: 'seconds' }) }),
});

export const DomainResult = Type.Object({
  type: Type.Literal('domain'),
  data: Type.Object({
    domain: Type.String(),
    status: Type.String({ description: 'ok, dormant or unknown' }),
    stats: Type.Object({ events_24h: Type.Integer(), total_events_30d: Type.Integer() }),
    time_series: Type.Array(Type.Object({ date: Type.String(), events: Type.Integer() })),
    top_subdomains: Type.Array(Type.Object({ subdomain: Type.String(), count: Type.Integer() })),
    top_ports: Type.Array(Type.Object({ port: Type.Integer(), count: Type.Integer() })),
    recent_events: Type.Array(
      Type.Object({
        timestamp: Type.Integer(),
        source_ip_masked: Type.String(),
        target_subdomain: Type.String(),
        port: Type.Integer(),
        simulated: Type.Optional(
          Type.Literal(true, { description: "present (true) only on events umbra's demo simulator made up; absent on real ones" }),
        ),
      }),
    ),
    unique_ips: Type.Optional(
      Type.Integer({ description: 'distinct source IPs in the 30-day window (exact up to 128 a day, else an estimate within about 5%)' }),
    ),
    activity_stats: Type.Optional(
      Type.Object(
        { first_seen: Type.Integer(), last_seen: Type.Integer() },
        { description: 'Unix seconds of the first and last event ever seen' },
      ),
    ),
    hour_dow_heatmap: Type.Optional(
      Type.Array(Type.Array(Type.Integer()), { description: '[weekday][UTC hour] counts over 30 days; weekday 0 is Monday' }),
    ),
    top_asn: Type.Optional(Type.Array(Type.Object({ asn: Type.Integer(), count: Type.Integer() }))),
    geo_distribution: Type.Optional(Type.Array(Type.Object({ country: Type.String(), count: Type.Integer() }))),
  }),
});

export const Health = Type.Object({
  status: Type.String(),
  version: Type.String({ description: "umbra's version (package.json), as `umbra --version` prints it" }),
  problems: Type.Optional(Type.Array(Type.String())),
  exports: Type.Optional(
    Type.Object(
      { snapshots: Type.Integer(), last_job_at: Type.Union([Type.Integer(), Type.Null()]) },
      { description: 'parquet snapshots that exist, and when the last export job finished (Unix s)' },
    ),
  ),
});

/** What each error status means for a client, as the OpenAPI document says it. */
const ERROR_MEANING: Record<number, string> = {
  400: 'The request is not valid: `detail` says why and `errors` names each bad parameter or member.',
  401: 'No API key, or one that is not valid or was revoked.',
  402: 'The team has not enough lookup credits left for this request; nothing was charged.',
  403: "The key lacks the scope this operation needs (GET /account/me lists the key's scopes).",
  404: 'Nothing exists under this name (the snapshot, the date or the hour).',
  413: 'The request body is larger than this server accepts.',
  415: 'The body is not Content-Type: application/json.',
  429: "The team's rate bucket (or its concurrent-stream allowance) is used up; retry after Retry-After seconds.",
  503: 'A store or engine the server depends on is unavailable (or the server is at its connection limit); retry after Retry-After seconds.',
};

/**
 * Error responses an operation may give, for the OpenAPI document: RFC 9457 problem details, served as
 * application/problem+json (the error handler sets that media type; these schemas never serialize a reply).
 */
export const errorResponses = (codes: number[]): Record<number, unknown> =>
  Object.fromEntries(
    codes.map((c) => [
      c,
      { description: ERROR_MEANING[c] ?? 'A problem', content: { [PROBLEM_CONTENT_TYPE]: { schema: Type.Ref('Problem') } } },
    ]),
  );
