import { type AddressAllowList, LOOPBACK_ONLY, parseAllowList } from './lib/address-allow-list.ts';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { defaultConnectionLimits, softOpenFileLimit } from './lib/connection-limit.ts';

const port = z.coerce.number().int().min(0).max(65535);

const PUBLIC_URL_FORM =
  'must be an absolute http:// or https:// URL without query or fragment, such as https://intel.example.com or https://example.com/umbra';

/**
 * The public base URL: absolute http(s), no credentials, query or fragment (paths are appended to it).
 * Normalised to origin and path without a trailing slash, so `${base}/downloads` is right for
 * `https://intel.example.com/` and for a prefix (`https://example.com/umbra/`) alike.
 */
const allowList = z.string().transform((text, ctx) => {
  const list = parseAllowList(text);
  if (typeof list === 'string') {
    ctx.addIssue({ code: 'custom', message: list });
    return z.NEVER;
  }
  return list;
});

const publicUrl = z.string().transform((text, ctx) => {
  const issue = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return issue(`${PUBLIC_URL_FORM}; got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return issue(`${PUBLIC_URL_FORM}; got the scheme ${url.protocol}`);
  // `?` or `#` alone leave search and hash empty, so the text is checked too.
  if (url.search || url.hash || /[?#]/.test(text)) return issue(`${PUBLIC_URL_FORM}; got ${JSON.stringify(text)}`);
  if (url.username || url.password) return issue('must not carry a user name or password');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
});
const ms = (max: number) => z.coerce.number().int().min(0).max(max);

/** Every setting, from UMBRA_* environment variables (or CLI flags that override them). */
const ConfigSchema = z.object({
  UMBRA_HTTP_PORT: port.default(8080),
  UMBRA_GRPC_PORT: port.default(50051),
  /** PEM files for gRPC over TLS (production); both or neither. Unset: plaintext, for local use. */
  UMBRA_GRPC_TLS_CERT: z.string().min(1).optional(),
  UMBRA_GRPC_TLS_KEY: z.string().min(1).optional(),
  /** 127.0.0.1 by default: the demo prints a key with every scope. Set 0.0.0.0 to serve other hosts. */
  UMBRA_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * The base URL clients reach umbra's HTTP port at (behind a proxy: the proxy's), with any path prefix:
   * download URLs umbra signs itself are made absolute on it. Unset: derived per request (docs/deploy.md#public-url).
   */
  UMBRA_PUBLIC_URL: publicUrl.optional(),
  /** Who may reach /metrics and /internal/* (operator routes also need the token): the machine itself unless set. */
  UMBRA_ADMIN_ALLOW: allowList.optional(),
  UMBRA_DATA_DIR: z.string().min(1).default('./data'),
  UMBRA_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** embedded: one process on its data dir. distributed: stateless nodes on PostgreSQL, Redis, NATS JetStream and S3. */
  UMBRA_STORAGE: z.enum(['embedded', 'distributed']).default('embedded'),
  /** Distributed mode: the PostgreSQL database (accounts, keys, credits, lists, overlays, the snapshot catalog). */
  DATABASE_URL: z.string().url().optional(),
  /** The PostgreSQL schema umbra's tables live in (`umbra migrate` creates it). */
  UMBRA_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('public'),
  /** Distributed mode: Redis (rate buckets, the concurrent-stream allowance). */
  REDIS_URL: z.string().url().optional(),
  /** Prefix of every Redis key umbra writes, so one Redis can serve several deployments. */
  UMBRA_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,64}$/)
    .default('umbra:'),
  /** Distributed mode: NATS with JetStream (the feed log and live delivery to every node). */
  NATS_URL: z.string().min(1).optional(),
  /** Prefix of the JetStream stream names and subjects (one stream per feed). */
  UMBRA_NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .default('UMBRA'),
  /** Copies JetStream keeps of each feed stream (a JetStream cluster of at least that many servers). */
  UMBRA_NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Distributed mode: S3-compatible object storage for the export files. Endpoint unset: AWS S3 itself. */
  S3_ENDPOINT: z.string().url().optional(),
  S3_BUCKET: z.string().min(3).max(63).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Credentials; unset: the AWS SDK's own chain (AWS_ACCESS_KEY_ID, instance roles, ...). */
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Path-style URLs (http://host/bucket/key), which most self-hosted S3 servers need. */
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  /** The S3 endpoint customers reach, when nodes use another (an internal name): download URLs are signed for it. */
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  /** Prefix of every object key umbra writes in the bucket. */
  S3_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_.-]+\/)*$/, 'must be empty or end with /')
    .default(''),
  /**
   * How customers download export files: `store` (a presigned URL of the object store itself, 24 h) or
   * `umbra` (umbra's own signed URL, served by the node: for buckets customers cannot reach).
   */
  UMBRA_DOWNLOADS: z.enum(['store', 'umbra']).default('store'),
  /** This node's name in credit blocks and connection names; unique per running node (default: host name, pid, random). */
  UMBRA_NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .optional(),
  /** Credits a node reserves from a team's balance at a time (distributed mode; docs/deploy.md#credits). */
  UMBRA_CREDIT_BLOCK: z.coerce.number().int().min(1).max(1_000_000).default(200),
  /** Distributed rate limits: a node takes this fraction of a bucket's burst from Redis at a time (0: every request asks Redis). */
  UMBRA_RATE_PREFETCH: z.coerce.number().min(0).max(0.1).default(0.02),
  /** How long a verified key is trusted before the store is asked again (admin changes apply within it). */
  UMBRA_KEY_CACHE_MS: ms(5000).default(1000),
  /** How often per-team limit overrides are re-read (admin changes apply within it). */
  UMBRA_LIMITS_REFRESH_MS: ms(5000).default(2000),
  /** How often buffered credit charges are written to the store (at most this much is lost on a crash). */
  UMBRA_CREDITS_FLUSH_MS: z.coerce.number().int().min(1).max(1000).default(20),
  UMBRA_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
  /**
   * HTTP connections served at once (idle ones are closed to make room, then new ones refused with a
   * 503). Default: derived from the soft open-file limit (http/connection-limit.ts).
   */
  UMBRA_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(10_000_000).optional(),
  /** The same for the gRPC port (new connections beyond it are closed). Default: derived likewise. */
  UMBRA_GRPC_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(10_000_000).optional(),
  /** A request's line and headers must arrive within this long of the connection or the previous answer (slow clients get a 408). */
  UMBRA_HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  /** The whole request, body included, must arrive within this long (0: no limit). The answer may take longer. */
  UMBRA_HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(120_000),
  /** An idle kept-alive connection is closed after this long (longer than a load balancer's usual 60 s). */
  UMBRA_HTTP_KEEPALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(72_000),
  /** A gRPC connection without calls for this long is closed (GOAWAY). */
  UMBRA_GRPC_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(24 * 3_600_000)
    .default(300_000),
  /** Seconds in-flight requests get to finish after SIGTERM. */
  UMBRA_SHUTDOWN_GRACE_S: z.coerce.number().int().min(0).max(600).default(25),
  /** An empty keepalive line after this long without output on a stream (about 15 s in production). */
  UMBRA_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(5).max(300_000).default(15_000),
  /** Streams are closed cleanly after this long (30 minutes in production). */
  UMBRA_STREAM_LIFETIME_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(24 * 3_600_000)
    .default(30 * 60_000),
  /** Records a stream consumer may fall behind before it is disconnected. */
  UMBRA_STREAM_BUFFER: z.coerce.number().int().min(1).max(10_000_000).default(20_000),
  /** Token for the operator ingestion endpoint; when unset, one is generated into the data dir. */
  UMBRA_OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Secrets that sign download URLs and list cursors: `id:secret,id:secret`, current first. Older ones
   * stay accepted, so a rotation does not break URLs already issued. Generated into the data dir when unset.
   */
  UMBRA_SIGNING_KEYS: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]{1,32}:[^,:]{16,}(,[A-Za-z0-9_-]{1,32}:[^,:]{16,})*$/,
      'must be id:secret pairs separated by commas, secrets of at least 16 characters',
    )
    .optional(),
  /** Run the hourly snapshot and daily rollup jobs in this process (off for nodes that only serve). */
  UMBRA_EXPORT_JOBS: z.enum(['on', 'off']).default('on'),
  /**
   * Seconds between export passes after one failed or found another node holding the export lock:
   * the longest the hour of a node that died mid-job waits for another node to take it over.
   */
  UMBRA_EXPORT_RETRY_S: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * Free space (MiB) kept on the data dir's disk: ingestion is refused (507) before it would go below,
   * so SQLite, the export jobs and the log's own bookkeeping still have room; /health reports it.
   */
  UMBRA_DISK_RESERVE_MB: z.coerce.number().int().min(0).max(1_048_576).default(256),
  /** Simulator speed in demo mode: 1 = a record per feed at least every 5 s; 0 turns it off. */
  UMBRA_SIMULATOR_RATE: z.coerce.number().min(0).max(10_000).default(1),
  /**
   * MiB the intelligence index may hold for feed observations (docs/intelligence.md#memory-budget):
   * 256 MiB keeps about 5.6 million single-sighting addresses, close to what the Map-based index held
   * in Node's whole default 4 GiB heap before it ran out; the least informative are evicted beyond it.
   */
  UMBRA_INTEL_MEMORY_MB: z.coerce.number().int().min(4).max(65_536).default(256),
});

export interface Config {
  httpPort: number;
  grpcPort: number;
  /** Absolute paths of the gRPC TLS certificate chain and key; undefined: plaintext. */
  grpcTls: { certFile: string; keyFile: string } | undefined;
  host: string;
  /** UMBRA_PUBLIC_URL normalised (no trailing slash); undefined: derived from each request. */
  publicUrl: string | undefined;
  /** Client addresses that may reach /metrics and /internal/* (UMBRA_ADMIN_ALLOW). */
  adminAllow: AddressAllowList;
  /** Absolute path. */
  dataDir: string;
  logLevel: z.infer<typeof ConfigSchema>['UMBRA_LOG_LEVEL'];
  storage: 'embedded' | 'distributed';
  /** The engines of distributed mode; undefined in embedded mode. */
  distributed: DistributedConfig | undefined;
  keyCacheMs: number;
  limitsRefreshMs: number;
  bodyLimitBytes: number;
  /** The connection edge of both ports (http/connection-limit.ts, http/edge-answers.ts). */
  edge: EdgeConfig;
  creditsFlushMs: number;
  shutdownGraceSeconds: number;
  streamKeepaliveMs: number;
  streamLifetimeMs: number;
  streamBuffer: number;
  operatorToken: string | undefined;
  simulatorRate: number;
  signingKeys: Array<{ id: string; secret: string }> | undefined;
  exportJobs: boolean;
  /** UMBRA_EXPORT_RETRY_S in ms. */
  exportRetryMs: number;
  /** Bytes kept free on the data dir's disk (UMBRA_DISK_RESERVE_MB). */
  diskReserveBytes: number;
  /** Bytes the intelligence index may hold for feed observations (UMBRA_INTEL_MEMORY_MB). */
  intelMemoryBytes: number;
  /** Derived: the SQLite file and the IP dataset file under dataDir. */
  sqliteFile: string;
  datasetFile: string;
  /** The durable feed record log. */
  feedLogDir: string;
  /** Imported IP range lists (umbra data import-list). */
  listsDir: string;
  operatorTokenFile: string;
  signingKeysFile: string;
}

export interface DistributedConfig {
  databaseUrl: string;
  dbSchema: string;
  redisUrl: string;
  redisPrefix: string;
  natsUrl: string;
  natsPrefix: string;
  natsReplicas: number;
  s3: {
    endpoint: string | undefined;
    publicEndpoint: string | undefined;
    bucket: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    forcePathStyle: boolean;
    prefix: string;
  };
  downloads: 'store' | 'umbra';
  nodeId: string;
  creditBlock: number;
  /** UMBRA_RATE_PREFETCH: the share of a bucket's burst a node takes from Redis at a time; 0 = none. */
  ratePrefetch: number;
}

export interface EdgeConfig {
  maxConnections: number;
  grpcMaxConnections: number;
  headersTimeoutMs: number;
  /** 0: none. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  grpcIdleTimeoutMs: number;
}

export class ConfigError extends Error {}

function readProcLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The settings of `UMBRA_CONFIG`, a JSON file of the same names as the environment variables (an
 * operator's one file for every node): strings, numbers and booleans; the environment overrides it.
 */
function readConfigFile(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`invalid configuration:\n  UMBRA_CONFIG: cannot read ${path}: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`invalid configuration:\n  UMBRA_CONFIG: ${path} must hold one JSON object of settings`);
  const out: Record<string, string> = {};
  const known = new Set(Object.keys(ConfigSchema.shape));
  for (const [k, v] of Object.entries(parsed)) {
    if (!known.has(k)) throw new ConfigError(`invalid configuration:\n  UMBRA_CONFIG: ${path}: unknown setting ${k}`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw new ConfigError(`invalid configuration:\n  UMBRA_CONFIG: ${path}: ${k} must be a string, number or boolean`);
    out[k] = String(v);
  }
  return out;
}

/** Distributed mode needs every engine and shared secrets: nodes generate nothing of their own. */
function distributedConfig(c: z.infer<typeof ConfigSchema>): DistributedConfig {
  const missing = (
    [
      ['DATABASE_URL', c.DATABASE_URL],
      ['REDIS_URL', c.REDIS_URL],
      ['NATS_URL', c.NATS_URL],
      ['S3_BUCKET', c.S3_BUCKET],
      ['UMBRA_SIGNING_KEYS', c.UMBRA_SIGNING_KEYS],
      ['UMBRA_OPERATOR_TOKEN', c.UMBRA_OPERATOR_TOKEN],
    ] as const
  )
    .filter(([, v]) => v === undefined)
    .map(([k]) => `${k}: required when UMBRA_STORAGE=distributed`);
  if ((c.S3_ACCESS_KEY_ID === undefined) !== (c.S3_SECRET_ACCESS_KEY === undefined))
    missing.push('S3_ACCESS_KEY_ID: set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither');
  if (missing.length > 0) throw new ConfigError(`invalid configuration:\n  ${missing.join('\n  ')}`);
  return {
    databaseUrl: c.DATABASE_URL!,
    dbSchema: c.UMBRA_DB_SCHEMA,
    redisUrl: c.REDIS_URL!,
    redisPrefix: c.UMBRA_REDIS_PREFIX,
    natsUrl: c.NATS_URL!,
    natsPrefix: c.UMBRA_NATS_PREFIX,
    natsReplicas: c.UMBRA_NATS_REPLICAS,
    s3: {
      endpoint: c.S3_ENDPOINT,
      publicEndpoint: c.S3_PUBLIC_ENDPOINT,
      bucket: c.S3_BUCKET!,
      region: c.S3_REGION,
      credentials:
        c.S3_ACCESS_KEY_ID && c.S3_SECRET_ACCESS_KEY
          ? { accessKeyId: c.S3_ACCESS_KEY_ID, secretAccessKey: c.S3_SECRET_ACCESS_KEY }
          : undefined,
      forcePathStyle: c.S3_FORCE_PATH_STYLE === 'true',
      prefix: c.S3_PREFIX,
    },
    downloads: c.UMBRA_DOWNLOADS,
    // Random too: containers sharing a host name (host networking) often share a pid (1) as well, and
    // two nodes of one name would spend one credit block as if each held it alone.
    nodeId: c.UMBRA_NODE_ID ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    creditBlock: c.UMBRA_CREDIT_BLOCK,
    ratePrefetch: c.UMBRA_RATE_PREFETCH,
  };
}

/** Parses once at start-up; fails fast with every problem named. */
export function parseConfig(env: Record<string, string | undefined>, overrides: Record<string, string | undefined> = {}): Config {
  const file = overrides.UMBRA_CONFIG ?? env.UMBRA_CONFIG;
  const merged: Record<string, string | undefined> = file ? { ...readConfigFile(file), ...env } : { ...env };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) merged[k] = v;
  const parsed = ConfigSchema.refine((c) => (c.UMBRA_GRPC_TLS_CERT === undefined) === (c.UMBRA_GRPC_TLS_KEY === undefined), {
    message: 'set both UMBRA_GRPC_TLS_CERT and UMBRA_GRPC_TLS_KEY, or neither',
    path: ['UMBRA_GRPC_TLS_CERT'],
  }).safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const c = parsed.data;
  const dataDir = resolve(c.UMBRA_DATA_DIR);
  if (c.UMBRA_HTTP_REQUEST_TIMEOUT_MS > 0 && c.UMBRA_HTTP_HEADERS_TIMEOUT_MS > c.UMBRA_HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration:\n  UMBRA_HTTP_HEADERS_TIMEOUT_MS: must not exceed UMBRA_HTTP_REQUEST_TIMEOUT_MS');
  }
  const derived =
    c.UMBRA_MAX_CONNECTIONS === undefined || c.UMBRA_GRPC_MAX_CONNECTIONS === undefined
      ? defaultConnectionLimits(softOpenFileLimit(readProcLimits()))
      : undefined;
  return {
    httpPort: c.UMBRA_HTTP_PORT,
    grpcPort: c.UMBRA_GRPC_PORT,
    grpcTls:
      c.UMBRA_GRPC_TLS_CERT && c.UMBRA_GRPC_TLS_KEY
        ? { certFile: resolve(c.UMBRA_GRPC_TLS_CERT), keyFile: resolve(c.UMBRA_GRPC_TLS_KEY) }
        : undefined,
    host: c.UMBRA_HOST,
    publicUrl: c.UMBRA_PUBLIC_URL,
    adminAllow: c.UMBRA_ADMIN_ALLOW ?? (parseAllowList(LOOPBACK_ONLY) as AddressAllowList),
    dataDir,
    logLevel: c.UMBRA_LOG_LEVEL,
    storage: c.UMBRA_STORAGE,
    distributed: c.UMBRA_STORAGE === 'distributed' ? distributedConfig(c) : undefined,
    keyCacheMs: c.UMBRA_KEY_CACHE_MS,
    limitsRefreshMs: c.UMBRA_LIMITS_REFRESH_MS,
    bodyLimitBytes: c.UMBRA_BODY_LIMIT_BYTES,
    edge: {
      maxConnections: c.UMBRA_MAX_CONNECTIONS ?? derived!.http,
      grpcMaxConnections: c.UMBRA_GRPC_MAX_CONNECTIONS ?? derived!.grpc,
      headersTimeoutMs: c.UMBRA_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.UMBRA_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.UMBRA_HTTP_KEEPALIVE_TIMEOUT_MS,
      grpcIdleTimeoutMs: c.UMBRA_GRPC_IDLE_TIMEOUT_MS,
    },
    creditsFlushMs: c.UMBRA_CREDITS_FLUSH_MS,
    shutdownGraceSeconds: c.UMBRA_SHUTDOWN_GRACE_S,
    streamKeepaliveMs: c.UMBRA_STREAM_KEEPALIVE_MS,
    streamLifetimeMs: c.UMBRA_STREAM_LIFETIME_MS,
    streamBuffer: c.UMBRA_STREAM_BUFFER,
    operatorToken: c.UMBRA_OPERATOR_TOKEN,
    simulatorRate: c.UMBRA_SIMULATOR_RATE,
    signingKeys: c.UMBRA_SIGNING_KEYS?.split(',').map((pair) => {
      const i = pair.indexOf(':');
      return { id: pair.slice(0, i), secret: pair.slice(i + 1) };
    }),
    exportJobs: c.UMBRA_EXPORT_JOBS === 'on',
    exportRetryMs: c.UMBRA_EXPORT_RETRY_S * 1000,
    diskReserveBytes: c.UMBRA_DISK_RESERVE_MB * 1024 * 1024,
    intelMemoryBytes: c.UMBRA_INTEL_MEMORY_MB * 2 ** 20,
    sqliteFile: resolve(dataDir, 'umbra.db'),
    datasetFile: resolve(dataDir, 'ip-dataset.bin'),
    feedLogDir: resolve(dataDir, 'feeds'),
    listsDir: resolve(dataDir, 'lists'),
    operatorTokenFile: resolve(dataDir, 'operator-token'),
    signingKeysFile: resolve(dataDir, 'signing-keys'),
  };
}
