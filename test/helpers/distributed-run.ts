import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../../src/storage/distributed/nats-connection.ts';
import { createRedisClient, redisReady } from '../../src/storage/distributed/redis-client.ts';
import { dropSchema } from './pg-schema.ts';
import { requireEngine, testEngines, uniqueTestName } from './engines.ts';
import type { TestS3 } from './s3-server.ts';

export interface DistributedRun {
  schema: string;
  redisPrefix: string;
  natsPrefix: string;
  /** The settings every node and CLI verb of this run shares: the UMBRA_CONFIG file's content. */
  settings: Record<string, string | number | boolean>;
  /** Drops the schema, deletes the run's Redis keys and JetStream streams (nodes stopped first). */
  cleanup(): Promise<void>;
}

/**
 * A distributed deployment's shared settings, isolated from every other run on the shared engines:
 * its own PostgreSQL schema, Redis key prefix and JetStream stream names, and fresh shared secrets.
 * Fails (never skips) when an engine cannot be reached.
 */
export async function distributedRun(name: string, s3: TestS3): Promise<DistributedRun> {
  await requireEngine('PostgreSQL', testEngines.databaseUrl);
  await requireEngine('Redis', testEngines.redisUrl);
  await requireEngine('NATS', testEngines.natsUrl);
  const unique = uniqueTestName(name);
  const schema = unique.toLowerCase();
  const redisPrefix = `${unique}:`;
  // Stream names are `<prefix>_FEED_<FEED>`; NATS allows 32 characters of prefix.
  const natsPrefix = unique
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .slice(-32);
  const settings = {
    UMBRA_STORAGE: 'distributed',
    DATABASE_URL: testEngines.databaseUrl,
    UMBRA_DB_SCHEMA: schema,
    REDIS_URL: testEngines.redisUrl,
    UMBRA_REDIS_PREFIX: redisPrefix,
    NATS_URL: testEngines.natsUrl,
    UMBRA_NATS_PREFIX: natsPrefix,
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    S3_FORCE_PATH_STYLE: true,
    UMBRA_SIGNING_KEYS: `k1:${randomBytes(24).toString('hex')}`,
    UMBRA_OPERATOR_TOKEN: randomBytes(24).toString('hex'),
    UMBRA_SIMULATOR_RATE: 0,
  };
  const cleanup = async () => {
    const failures: unknown[] = [];
    await dropSchema(schema).catch((e) => failures.push(e));
    const redis = createRedisClient(testEngines.redisUrl, { connectionName: 'umbra-test-cleanup' });
    try {
      await redisReady(redis);
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } catch (e) {
      failures.push(e);
    } finally {
      redis.disconnect();
    }
    try {
      const nc = await connectNats(testEngines.natsUrl, { name: 'umbra-test-cleanup' });
      try {
        const jsm = await jetstreamManager(nc);
        for await (const s of jsm.streams.list()) {
          if (s.config.name.startsWith(`${natsPrefix}_FEED_`)) await jsm.streams.delete(s.config.name);
        }
      } finally {
        await nc.close();
      }
    } catch (e) {
      failures.push(e);
    }
    if (failures.length > 0) throw new AggregateError(failures, `cleaning up the run ${unique} failed`);
  };
  return { schema, redisPrefix, natsPrefix, settings, cleanup };
}
