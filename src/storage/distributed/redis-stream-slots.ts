import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../lib/clock.ts';
import { DEFAULT_LEASE_TTL_MS, type StreamLease, type StreamSlots } from '../../modules/feeds/stream-slots.ts';
import { redisFault } from './redis-client.ts';

export interface RedisStreamSlotsOptions {
  /** Prepended to every key (`<prefix>streams:<orgId>`), e.g. `umbra:`. */
  keyPrefix: string;
  /** Lease lifetime without renewal (ms); 30 s by default. */
  ttlMs?: number;
  /**
   * Where lease times come from. By default Redis's own clock (TIME inside each script): one clock for
   * every node, so a node whose clock runs ahead cannot expire the leases of the others early. Tests pass
   * a manual clock to expire leases without waiting.
   */
  clock?: Clock;
}

/**
 * Scripts share a preamble: `now` is ARGV[1] when the caller gave a time, else the server's TIME. A
 * lease is live while its expiry (its score) is above now. The key's own PEXPIRE only collects a set
 * whose leases have all lapsed; it is a second past the newest expiry so that clocks a little apart
 * (an injected clock, the server's timer) never drop a live lease. Times go to commands formatted with
 * %d: Lua would write a number with 14 significant digits, in exponent form beyond that.
 */
const NOW = `
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
`;

/** KEYS[1] team; ARGV now, ttl, max, lease id. Drops lapsed leases, then adds this one if the team is below max. */
const ACQUIRE = `${NOW}
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[4])
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + 1000))
return 1
`;

/** KEYS[1] team; ARGV now, ttl, lease id. Extends a live lease; a lapsed one is removed and stays gone. */
const RENEW = `${NOW}
local ttl = tonumber(ARGV[2])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[3])
if not expiry then return 0 end
if tonumber(expiry) <= now then
  redis.call('ZREM', KEYS[1], ARGV[3])
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', string.format('%d', now + ttl), ARGV[3])
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + 1000))
return 1
`;

/** KEYS[1] team; ARGV now. Live leases, read only. */
const COUNT = `${NOW}
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%d', now), '+inf')
`;

interface LeaseCommands {
  umbraLeaseAcquire(key: string, now: string, ttlMs: number, max: number, id: string): Promise<number>;
  umbraLeaseRenew(key: string, now: string, ttlMs: number, id: string): Promise<number>;
  umbraLeaseCount(key: string, now: string): Promise<number>;
}

/**
 * The teams' stream slots in Redis: one sorted set per team, member = lease id, score = expiry (ms).
 * acquire, renew and count are one script each (atomic: ten nodes acquiring at once for a team with
 * one slot left grant one); release is one ZREM. A Redis that cannot be used rejects with
 * RedisUnavailableError (503 for an open; StreamService rides it out for renewals until the lease
 * would lapse).
 */
export class RedisStreamSlots implements StreamSlots {
  readonly ttlMs: number;
  private readonly redis: Redis & LeaseCommands;
  private readonly prefix: string;
  private readonly clock: Clock | undefined;

  constructor(client: Redis, options: RedisStreamSlotsOptions) {
    client.defineCommand('umbraLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    client.defineCommand('umbraLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    client.defineCommand('umbraLeaseCount', { numberOfKeys: 1, lua: COUNT, readOnly: true });
    this.redis = client as Redis & LeaseCommands;
    this.prefix = `${options.keyPrefix}streams:`;
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.clock = options.clock;
  }

  async acquire(orgId: string, max: number): Promise<StreamLease | undefined> {
    const lease = { id: randomUUID(), orgId };
    const granted = await this.redis.umbraLeaseAcquire(this.prefix + orgId, this.now(), this.ttlMs, max, lease.id).catch(redisFault);
    return granted === 1 ? lease : undefined;
  }

  async renew(lease: StreamLease): Promise<boolean> {
    return (await this.redis.umbraLeaseRenew(this.prefix + lease.orgId, this.now(), this.ttlMs, lease.id).catch(redisFault)) === 1;
  }

  async release(lease: StreamLease): Promise<void> {
    await this.redis.zrem(this.prefix + lease.orgId, lease.id).catch(redisFault);
  }

  async count(orgId: string): Promise<number> {
    return await this.redis.umbraLeaseCount(this.prefix + orgId, this.now()).catch(redisFault);
  }

  /** The time a script is told: the injected clock's, or '' for the server's own. */
  private now(): string {
    return this.clock ? String(this.clock.now()) : '';
  }
}
