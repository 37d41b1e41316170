import type { Redis } from 'ioredis';
import type { BucketRule } from '../../modules/ratelimit/buckets.ts';
import type { RateDecision, RateLimiter } from '../../modules/ratelimit/rate-limiter.ts';
import { bucketDecision } from '../../modules/ratelimit/token-bucket.ts';
import { redisFault } from './redis-client.ts';

export interface RedisRateLimiterOptions {
  /** Prepended to every key this limiter writes (`<prefix>rate:<bucket key>`), e.g. `umbra:`. */
  keyPrefix: string;
}

/**
 * takeToken (token-bucket.ts) as one Lua script: refill, take, store, all atomic on the server, so the
 * nodes of a cluster share each bucket exactly. The bucket is one string, "<tokens> <stamp>", tokens at
 * full precision (%.17g), and the arithmetic is done in the same order on the same doubles as in JS, so
 * a bucket decides as the in-process one would; the decision's rounding is bucketDecision's, in JS, from
 * the tokens left. (One GET and one SET: a hash with HMGET, HSET and PEXPIRE cost Redis half again as much.)
 * A bucket that would be full again carries no information: its key expires then (plus a second, so a
 * take in flight never finds it gone a moment early), and a take that leaves it full deletes it.
 * KEYS[1] bucket; ARGV rate, burst, now (ms), cost. Returns {allowed (0|1), tokens left}.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local tokens = burst
local stamp = ARGV[3]
local held = redis.call('GET', KEYS[1])
if held then
  local sep = string.find(held, ' ', 1, true)
  local last = tonumber(string.sub(held, sep + 1))
  tokens = math.min(burst, tonumber(string.sub(held, 1, sep - 1)) + math.max(0, now - last) / 1000 * rate)
  if last > now then stamp = string.sub(held, sep + 1) end
end
local allowed = 0
if tokens >= cost then
  allowed = 1
  tokens = tokens - cost
end
local left = string.format('%.17g', tokens)
local fullInMs = math.ceil((burst - tokens) / rate * 1000)
if fullInMs > 0 then
  redis.call('SET', KEYS[1], left .. ' ' .. stamp, 'PX', string.format('%d', math.min(fullInMs, 1e12) + 1000))
else
  redis.call('DEL', KEYS[1])
end
return {allowed, left}
`;

interface TakeCommand {
  umbraRateTake(key: string, rate: number, burst: number, nowMs: number, cost: number): Promise<[number, string]>;
}

/**
 * Token buckets shared by every node, in Redis: one script per take (EVALSHA, auto-pipelined with the
 * other commands of the moment). Time is the caller's `nowMs`, as for every RateLimiter: the nodes'
 * clocks agree to within milliseconds (NTP) against buckets that refill over seconds, and a node
 * behind the others never refills an interval twice (see takeToken). A Redis that cannot be used
 * rejects with RedisUnavailableError (503).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis & TakeCommand;
  private readonly prefix: string;

  constructor(client: Redis, options: RedisRateLimiterOptions) {
    client.defineCommand('umbraRateTake', { numberOfKeys: 1, lua: TAKE });
    this.redis = client as Redis & TakeCommand;
    this.prefix = `${options.keyPrefix}rate:`;
  }

  async take(key: string, rule: BucketRule, nowMs: number, cost = 1): Promise<RateDecision> {
    let reply: [number, string];
    try {
      reply = await this.redis.umbraRateTake(this.prefix + key, rule.rate, rule.burst, nowMs, cost);
    } catch (e) {
      redisFault(e);
    }
    return bucketDecision(rule, Number(reply[1]), reply[0] === 1, cost);
  }
}
