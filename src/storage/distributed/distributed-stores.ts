import type { NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../../lib/clock.ts';
import type { Config, DistributedConfig } from '../../config.ts';
import { BlockCreditLedger } from '../../modules/credits/block-credit-ledger.ts';
import type { AdminStores, FeedStores, StoreLog, Stores } from '../stores.ts';
import { JetStreamFeedBus } from './jetstream-feed-bus.ts';
import { JetStreamFeedLog } from './jetstream-feed-log.ts';
import { connectNats } from './nats-connection.ts';
import { PgAccountStore } from './pg-account-store.ts';
import { PgIngestKeyStore } from './pg-ingest-key-store.ts';
import { PgCreditBlocks } from './pg-credit-blocks.ts';
import { PgCreditLedger } from './pg-credit-ledger.ts';
import { PgIntelListStore } from './pg-intel-list-store.ts';
import { PgJobLock } from './pg-job-lock.ts';
import { PgLimitStore } from './pg-limit-store.ts';
import { migrate } from './pg-migrate.ts';
import { PgOverlayStore } from './pg-overlay-store.ts';
import { PgPool } from './pg-pool.ts';
import { PgSnapshotCatalog } from './pg-snapshot-catalog.ts';
import { createRedisClient, redisReady } from './redis-client.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import { PrefetchRateLimiter } from '../../modules/ratelimit/prefetch-rate-limiter.ts';
import type { RateLimiter } from '../../modules/ratelimit/rate-limiter.ts';
import { RedisStreamSlots } from './redis-stream-slots.ts';
import { S3ObjectStore } from './s3-object-store.ts';

/** A dead node's credit block goes back to its team this long after its last report (s). */
const CREDIT_LEASE_S = 30;
/** How often export objects released by a replace or delete are looked at (ms). */
const SWEEP_MS = 3_600_000;
/** A team unused this long on a node gives that node's block back (ms). */
const CREDIT_IDLE_RETURN_MS = 2_000;

const distributed = (config: Config): DistributedConfig => {
  if (!config.distributed) throw new Error('distributed mode without its engines configured');
  return config.distributed;
};

/** Tokens held unspent longer than this are dropped (ms): a node's share of a bucket stays fresh. */
const RATE_HOLD_MS = 1_000;

/** Redis's buckets, behind this node's chunks of them unless prefetch is off. */
const rateLimiter = (redis: RateLimiter, prefetch: number): RateLimiter =>
  prefetch > 0 ? new PrefetchRateLimiter(redis, { chunkFraction: prefetch, holdMs: RATE_HOLD_MS }) : redis;

/** The credit ledger over PostgreSQL's block reservations, as this node's. */
const blockLedger = (d: DistributedConfig, db: PgPool, clock: Clock) =>
  new BlockCreditLedger(new PgCreditLedger(db), new PgCreditBlocks(db), {
    nodeId: d.nodeId,
    nowMs: () => clock.now(),
    blockSize: d.creditBlock,
    leaseSeconds: CREDIT_LEASE_S,
    idleReturnMs: CREDIT_IDLE_RETURN_MS,
  });

const pgPool = (d: DistributedConfig, log: StoreLog, name: string) =>
  new PgPool(d.databaseUrl, {
    schema: d.dbSchema,
    applicationName: `umbra ${name} ${d.nodeId}`,
    onIdleError: (err) => log.warn({ err: err.message }, 'PostgreSQL dropped an idle connection'),
    onUnavailable: (reason) => log.warn({ reason }, 'PostgreSQL unavailable: requests that need it answer 503'),
    onRecovered: (ms) => log.info({ unavailable_ms: ms }, 'PostgreSQL available again'),
  });

async function feedStores(d: DistributedConfig, log: StoreLog): Promise<Omit<FeedStores, 'ingestKeys'> & { feedLog: JetStreamFeedLog }> {
  const nc = await connectNats(d.natsUrl, { name: `umbra@${d.nodeId}` });
  watchNats(nc, log);
  const feedLog = new JetStreamFeedLog(nc, { prefix: `${d.natsPrefix}_FEED`, replicas: d.natsReplicas });
  try {
    await feedLog.ensureStreams();
  } catch (e) {
    await nc.close();
    throw e;
  }
  const bus = new JetStreamFeedBus(feedLog);
  return {
    feedLog,
    bus,
    close: async () => {
      await bus.close();
      await feedLog.close();
      await nc.drain().catch((e: Error) => log.warn({ err: e.message }, 'NATS connection did not drain'));
    },
  };
}

/**
 * Distributed mode: every state a node shares with the others lives in the engines (PostgreSQL for
 * accounts, credits, lists, overlays and the catalog; Redis for rate buckets and stream slots; JetStream
 * for the feed log and its delivery; S3 for export files), so a node is stateless and any node answers
 * any request. The schema must exist (`umbra migrate`).
 */
export async function createDistributedStores(config: Config, clock: Clock, log: StoreLog): Promise<Stores> {
  const d = distributed(config);
  const db = pgPool(d, log, 'node');
  const redis = createRedisClient(d.redisUrl, {
    connectionName: `umbra@${d.nodeId}`,
    onError: onceEvery(30_000, (err: Error) =>
      log.warn({ err: err.message }, 'Redis unavailable: rate limits and stream opens answer 503'),
    ),
  });
  // Commands before the first connection fail at once (no offline queue): wait for it, but a node
  // still starts while Redis is down, answers 503 where it is needed and recovers when it is back.
  await redisReady(redis).catch((e: Error) => log.warn({ err: e.message }, 'Redis not reachable at start; retrying in the background'));
  const feeds = await feedStores(d, log).catch(async (e) => {
    redis.disconnect();
    await db.close();
    throw e;
  });
  const ledger = blockLedger(d, db, clock);
  ledger.flushEvery(config.creditsFlushMs, {
    onFailing: (err, credits) =>
      log.warn({ err: err.message, unsent_credits: credits }, 'credit charges cannot be recorded yet; they are kept and retried'),
    onRecovered: (ms) => log.info({ failing_ms: ms }, 'credit charges recorded again'),
  });
  const objects = new S3ObjectStore({
    bucket: d.s3.bucket,
    region: d.s3.region,
    endpoint: d.s3.endpoint,
    publicEndpoint: d.s3.publicEndpoint,
    forcePathStyle: d.s3.forcePathStyle,
    credentials: d.s3.credentials,
    keyPrefix: d.s3.prefix,
    clock,
  });
  // Bytes no snapshot names any more go once every URL issued for them has expired (s3-object-store.ts).
  const sweep = setInterval(() => {
    objects
      .sweepReleased()
      .catch((e: Error) => log.warn({ err: e.message }, 'sweeping released export objects failed; retried in an hour'));
  }, SWEEP_MS).unref();
  const signingKeys = config.signingKeys;
  if (!signingKeys) throw new Error('distributed mode needs UMBRA_SIGNING_KEYS');
  return {
    accounts: new PgAccountStore(db),
    limits: new PgLimitStore(db),
    ledger,
    limiter: rateLimiter(new RedisRateLimiter(redis, { keyPrefix: d.redisPrefix }), d.ratePrefetch),
    feedLog: feeds.feedLog,
    ingestKeys: new PgIngestKeyStore(db),
    bus: feeds.bus,
    slots: new RedisStreamSlots(redis, { keyPrefix: d.redisPrefix }),
    objects,
    snapshots: new PgSnapshotCatalog(db),
    lists: new PgIntelListStore(db),
    overlays: new PgOverlayStore(db),
    signingKeys,
    jobLock: new PgJobLock(db, d.dbSchema),
    vitals: () => ({ unsentCredits: ledger.unsentCredits, databaseUnavailable: db.problems().length > 0 ? 1 : 0 }),
    health: async () => [
      ...db.problems(),
      ...(redis.status === 'ready' ? [] : [`Redis: ${redis.status}`]),
      ...(await feeds.bus.health()),
      ...ledger.problems(),
    ],
    close: async () => {
      clearInterval(sweep);
      ledger.stopFlushing();
      await feeds.close();
      // This node's unspent credits go back to their teams now rather than when the leases end.
      await ledger
        .releaseAll()
        .catch((e: Error) =>
          log.error({ err: e.message, teams: ledger.unsentByTeam() }, 'credit blocks could not be given back; their leases return them'),
        );
      redis.disconnect();
      objects.close();
      await db.close();
    },
  };
}

/**
 * The account verbs' stores (`umbra admin`): PostgreSQL alone, so that teams, keys, credits and limits
 * can be administered while NATS, Redis or S3 are down (revoking a key must never wait on the feed log).
 */
export function createDistributedAdminStores(config: Config, clock: Clock, log: StoreLog): AdminStores {
  const d = distributed(config);
  const db = pgPool(d, log, 'cli');
  // No flush loop: an operator's credit verbs write at once, and this process reserves no block.
  const ledger = blockLedger(d, db, clock);
  return {
    accounts: new PgAccountStore(db),
    limits: new PgLimitStore(db),
    ledger,
    overlays: new PgOverlayStore(db),
    close: () => db.close(),
  };
}

/** Creates or upgrades the PostgreSQL schema (`umbra migrate`); returns the migrations it applied. */
export async function migrateDistributed(config: Config, progress: (line: string) => void): Promise<string[]> {
  const d = distributed(config);
  return (await migrate(d.databaseUrl, { schema: d.dbSchema, log: progress })).applied;
}

/** The list store alone (`umbra data import-list` and friends). */
export function createDistributedListStore(config: Config) {
  const db = pgPool(distributed(config), { warn: () => {}, info: () => {}, error: () => {} }, 'cli');
  return { store: new PgIntelListStore(db), close: () => db.close() };
}

/** The feed log and bus alone (`umbra ingest` straight to JetStream). */
export async function createDistributedFeedStores(config: Config, log: StoreLog): Promise<FeedStores> {
  const d = distributed(config);
  const db = pgPool(d, log, 'cli');
  try {
    const feeds = await feedStores(d, log);
    return {
      ...feeds,
      ingestKeys: new PgIngestKeyStore(db),
      close: async () => {
        await feeds.close();
        await db.close();
      },
    };
  } catch (e) {
    await db.close();
    throw e;
  }
}

/**
 * Says when the connection to NATS is lost and when it is back, as PostgreSQL's and Redis's outages
 * are said: meanwhile ingestion and stream opens answer 503 and /health names the feed bus.
 */
function watchNats(nc: NatsConnection, log: StoreLog): void {
  let downSince: number | undefined;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' && downSince === undefined) {
        downSince = Date.now();
        log.warn({}, 'NATS unreachable: ingestion and stream opens answer 503; reconnecting');
      } else if (s.type === 'reconnect' && downSince !== undefined) {
        log.info({ unavailable_ms: Date.now() - downSince }, 'NATS available again');
        downSince = undefined;
      }
    }
  })();
}

/** A warning that repeats while an engine stays down is said once per interval. */
function onceEvery<A extends unknown[]>(ms: number, fn: (...args: A) => void): (...args: A) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (...args: A) => {
    const now = Date.now();
    if (now - last < ms) return;
    last = now;
    fn(...args);
  };
}
