import { resolve } from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
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
  UMBRA_DATA_DIR: z.string().min(1).default('./data'),
  UMBRA_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  UMBRA_STORAGE: z.enum(['embedded']).default('embedded'),
  /** How long a verified key is trusted before the store is asked again (admin changes apply within it). */
  UMBRA_KEY_CACHE_MS: ms(5000).default(1000),
  /** How often per-team limit overrides are re-read (admin changes apply within it). */
  UMBRA_LIMITS_REFRESH_MS: ms(5000).default(2000),
  /** How often buffered credit charges are written to the store (at most this much is lost on a crash). */
  UMBRA_CREDITS_FLUSH_MS: z.coerce.number().int().min(1).max(1000).default(20),
  UMBRA_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(256 * 1024),
  /** Seconds in-flight requests get to finish after SIGTERM. */
  UMBRA_SHUTDOWN_GRACE_S: z.coerce.number().int().min(0).max(600).default(25),
  /** An empty keepalive line after this long without output on a stream (service.md: about 15 s). */
  UMBRA_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(5).max(300_000).default(15_000),
  /** Streams are closed cleanly after this long (service.md: 30 minutes). */
  UMBRA_STREAM_LIFETIME_MS: z.coerce.number().int().min(10).max(24 * 3_600_000).default(30 * 60_000),
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
    .regex(/^[A-Za-z0-9_-]{1,32}:[^,:]{16,}(,[A-Za-z0-9_-]{1,32}:[^,:]{16,})*$/, 'must be id:secret pairs separated by commas, secrets of at least 16 characters')
    .optional(),
  /** Run the hourly snapshot and daily rollup jobs in this process (off for nodes that only serve). */
  UMBRA_EXPORT_JOBS: z.enum(['on', 'off']).default('on'),
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
  /** Absolute path. */
  dataDir: string;
  logLevel: z.infer<typeof ConfigSchema>['UMBRA_LOG_LEVEL'];
  storage: 'embedded';
  keyCacheMs: number;
  limitsRefreshMs: number;
  bodyLimitBytes: number;
  creditsFlushMs: number;
  shutdownGraceSeconds: number;
  streamKeepaliveMs: number;
  streamLifetimeMs: number;
  streamBuffer: number;
  operatorToken: string | undefined;
  simulatorRate: number;
  signingKeys: Array<{ id: string; secret: string }> | undefined;
  exportJobs: boolean;
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

export class ConfigError extends Error {}

/** Parses once at start-up; fails fast with every problem named. */
export function parseConfig(env: Record<string, string | undefined>, overrides: Record<string, string | undefined> = {}): Config {
  const merged = { ...env };
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
  return {
    httpPort: c.UMBRA_HTTP_PORT,
    grpcPort: c.UMBRA_GRPC_PORT,
    grpcTls: c.UMBRA_GRPC_TLS_CERT && c.UMBRA_GRPC_TLS_KEY ? { certFile: resolve(c.UMBRA_GRPC_TLS_CERT), keyFile: resolve(c.UMBRA_GRPC_TLS_KEY) } : undefined,
    host: c.UMBRA_HOST,
    dataDir,
    logLevel: c.UMBRA_LOG_LEVEL,
    storage: c.UMBRA_STORAGE,
    keyCacheMs: c.UMBRA_KEY_CACHE_MS,
    limitsRefreshMs: c.UMBRA_LIMITS_REFRESH_MS,
    bodyLimitBytes: c.UMBRA_BODY_LIMIT_BYTES,
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
    intelMemoryBytes: c.UMBRA_INTEL_MEMORY_MB * 2 ** 20,
    sqliteFile: resolve(dataDir, 'umbra.db'),
    datasetFile: resolve(dataDir, 'ip-dataset.bin'),
    feedLogDir: resolve(dataDir, 'feeds'),
    listsDir: resolve(dataDir, 'lists'),
    operatorTokenFile: resolve(dataDir, 'operator-token'),
    signingKeysFile: resolve(dataDir, 'signing-keys'),
  };
}
