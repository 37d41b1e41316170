import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { requireEngine, testEngines, uniqueTestName } from '../../../test/helpers/engines.ts';
import { dependencyFault, STATUS } from '../../errors.ts';
import { mulberry32 } from '../../lib/prng.ts';
import type { BucketRule } from '../../modules/ratelimit/buckets.ts';
import type { RateDecision } from '../../modules/ratelimit/rate-limiter.ts';
import { rateLimiterContract } from '../contract/rate-limiter.contract.ts';
import { streamSlotsContract } from '../contract/stream-slots.contract.ts';
import { MemoryRateLimiter } from '../embedded/memory-rate-limiter.ts';
import { createRedisClient, redisReady, RedisUnavailableError } from './redis-client.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import { PrefetchRateLimiter } from '../../modules/ratelimit/prefetch-rate-limiter.ts';
import { RedisStreamSlots } from './redis-stream-slots.ts';

const url = testEngines.redisUrl;
/** Clients of the shared engine, closed at the end. */
const clients: Redis[] = [];
let shared: Redis;

async function connect(to = url): Promise<Redis> {
  const client = createRedisClient(to, { connectionName: 'umbra-test' });
  clients.push(client);
  await redisReady(client);
  return client;
}

/** Every key under `prefix` (the test's own: the engine is shared with other runs and CI). */
async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function dropKeys(client: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix);
  if (keys.length > 0) await client.del(...keys);
}

/** A key prefix no other test run uses, whose keys are deleted when the test ends. */
function prefixFor(t: { after(fn: () => Promise<void>): void }, name: string): string {
  const prefix = `${uniqueTestName(name)}:`;
  t.after(() => dropKeys(shared, prefix));
  return prefix;
}

before(async () => {
  await requireEngine('Redis', url);
  shared = await connect();
});

after(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
});

rateLimiterContract('redis', async () => {
  const prefix = `${uniqueTestName('umbra_rl')}:`;
  return { limiter: new RedisRateLimiter(shared, { keyPrefix: prefix }), close: () => dropKeys(shared, prefix) };
});

streamSlotsContract('redis', async ({ clock, ttlMs }) => {
  const prefix = `${uniqueTestName('umbra_slots')}:`;
  return { slots: new RedisStreamSlots(shared, { keyPrefix: prefix, ttlMs, clock }), close: () => dropKeys(shared, prefix) };
});

describe('RedisRateLimiter', () => {
  it('should decide exactly as the in-process limiter over a long random sequence of takes', async (t) => {
    const redis = new RedisRateLimiter(shared, { keyPrefix: prefixFor(t, 'umbra_rl_diff') });
    const memory = new MemoryRateLimiter();
    const random = mulberry32(20261122);
    const rules: BucketRule[] = [
      { rate: 100, burst: 200 },
      { rate: 10, burst: 10 },
      { rate: 0.5, burst: 20 },
      { rate: 2, burst: 60 },
      { rate: 0.1, burst: 120 },
      { rate: 3, burst: 7 },
      { rate: 0.7, burst: 3 },
    ];
    let now = 1_700_000_000_000;
    for (let i = 0; i < 3_000; i++) {
      // Bursts at one instant, small steps, the odd long pause, and takes stamped up to half a second
      // early (nodes whose clocks are behind); costs of batches, some above the burst.
      const r = random();
      now += r < 0.4 ? 0 : r < 0.85 ? Math.floor(random() * 400) : r < 0.95 ? -Math.floor(random() * 500) : Math.floor(random() * 60_000);
      const k = Math.floor(random() * rules.length);
      const rule = rules[k]!;
      const cost = random() < 0.9 ? 1 : random() < 0.9 ? 1 + Math.floor(random() * 5) : rule.burst + 1;
      const want = memory.take(`team:${k}`, rule, now, cost);
      const got = await redis.take(`team:${k}`, rule, now, cost);
      assert.deepEqual(got, want, `take ${i}: key ${k} at ${now}, cost ${cost}`);
    }
  });

  it('should admit across three nodes sharing a bucket exactly what one node would (300 concurrent takes, capacity 100)', async (t) => {
    const prefix = prefixFor(t, 'umbra_rl_nodes');
    const nodes = await Promise.all([connect(), connect(), connect()]);
    const limiters = nodes.map((c) => new RedisRateLimiter(c, { keyPrefix: prefix }));
    const rule = { rate: 1, burst: 100 };
    const now = 1_700_000_000_000;
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % 3]!.take('org_x:lookup', rule, now)));
    const allowed = decisions.filter((d) => d.allowed);
    assert.equal(allowed.length, 100);
    assert.deepEqual(
      allowed.map((d) => d.remaining).sort((a, b) => a - b),
      [...Array(100).keys()],
      'each admitted take saw the bucket one token lower: none was counted twice or lost',
    );
    const one = new MemoryRateLimiter();
    const alone = Array.from({ length: 300 }, () => one.take('org_x:lookup', rule, now)).filter((d) => d.allowed).length;
    assert.equal(allowed.length, alone);
  });

  it("should, behind each node's prefetch, admit at most the bucket and at least 90 % of it, asking Redis once per chunk", async (t) => {
    const prefix = prefixFor(t, 'umbra_rl_prefetch');
    const nodes = await Promise.all([connect(), connect(), connect()]);
    let takes = 0;
    const limiters = nodes.map((c) => {
      const redis = new RedisRateLimiter(c, { keyPrefix: prefix });
      const counted = {
        take: (...a: Parameters<RedisRateLimiter['take']>) => {
          takes++;
          return redis.take(...a);
        },
      };
      return new PrefetchRateLimiter(counted, { chunkFraction: 0.02, holdMs: 1_000 });
    });
    const rule = { rate: 1, burst: 5_000 };
    const now = 1_700_000_000_000;
    const decisions = await Promise.all(Array.from({ length: 9_000 }, (_, i) => limiters[i % 3]!.take('org_x:lookup', rule, now)));
    const admitted = decisions.filter((d) => d.allowed).length;
    t.diagnostic(`${admitted} of 9,000 admitted against a burst of 5,000; ${takes} takes reached Redis`);
    assert.ok(admitted <= 5_000 && admitted >= 4_500, `admitted ${admitted}`);
    assert.ok(takes < 9_000 / 10, `${takes} takes reached Redis`);
  });

  it('should let a bucket key expire once the bucket would be full again, and keep no key for a full bucket', async (t) => {
    const prefix = prefixFor(t, 'umbra_rl_ttl');
    const limiter = new RedisRateLimiter(shared, { keyPrefix: prefix });
    const rule = { rate: 2, burst: 60 };
    await limiter.take('t:a', rule, 1_000);
    // One token at 2/s: full again in 500 ms; the key lives that long plus a second.
    const pttl = await shared.pttl(`${prefix}rate:t:a`);
    assert.ok(pttl > 1_000 && pttl <= 1_500, `pttl ${pttl}`);
    for (let i = 0; i < 10; i++) await limiter.take('t:a', rule, 1_000);
    const longer = await shared.pttl(`${prefix}rate:t:a`);
    assert.ok(longer > 6_000 && longer <= 6_500, `pttl ${longer}`);
    // Refilled to the brim by the time of the next take, which leaves it full: nothing worth keeping.
    await limiter.take('t:a', rule, 1_000_000, 0);
    assert.equal(await shared.exists(`${prefix}rate:t:a`), 0);
  });

  it('should measure take() throughput and latency from one process (a figure, not an assertion)', async (t) => {
    const prefix = prefixFor(t, 'umbra_rl_bench');
    const limiter = new RedisRateLimiter(shared, { keyPrefix: prefix });
    const rule = { rate: 100, burst: 200 };
    const run = async (total: number, concurrency: number) => {
      const latencies = new Float64Array(total);
      let next = 0;
      let allowed = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let i = next++; i < total; i = next++) {
            const t0 = performance.now();
            const d: RateDecision = await limiter.take(`org_${i % 2_000}:lookup`, rule, 1_700_000_000_000);
            latencies[i] = performance.now() - t0;
            if (d.allowed) allowed++;
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      latencies.sort();
      const at = (q: number) => latencies[Math.min(total - 1, Math.floor(q * total))]!.toFixed(3);
      return { allowed, perSecond: Math.round(total / seconds), p50: at(0.5), p99: at(0.99) };
    };
    for (const [total, inFlight] of [
      [2_000, 1],
      [20_000, 32],
      [20_000, 256],
    ] as const) {
      await dropKeys(shared, prefix);
      const r = await run(total, inFlight);
      // 2,000 keys of burst 200, at most ten takes each at one instant: every take passes.
      assert.equal(r.allowed, total);
      t.diagnostic(`${total} takes over 2k keys, ${inFlight} in flight: ${r.perSecond} takes/s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
    }
  });
});

describe('RedisStreamSlots', () => {
  it('should share one allowance between nodes: 30 concurrent acquires from three nodes with max 5 grant 5', async (t) => {
    const prefix = prefixFor(t, 'umbra_slots_nodes');
    const nodes = await Promise.all([connect(), connect(), connect()]);
    const slots = nodes.map((c) => new RedisStreamSlots(c, { keyPrefix: prefix }));
    const grants = await Promise.all(Array.from({ length: 30 }, (_, i) => slots[i % 3]!.acquire('org_a', 5)));
    assert.equal(grants.filter(Boolean).length, 5);
    assert.equal(await slots[0]!.count('org_a'), 5);
  });

  it("should time leases by Redis's own clock when given none: one clock for every node", async (t) => {
    const prefix = prefixFor(t, 'umbra_slots_time');
    const slots = new RedisStreamSlots(shared, { keyPrefix: prefix, ttlMs: 600 });
    const a = await slots.acquire('org_a', 2);
    const b = await slots.acquire('org_a', 2);
    assert.ok(a && b);
    assert.equal(await slots.acquire('org_a', 2), undefined);
    const [seconds, micros] = await shared.time();
    const score = Number(await shared.zscore(`${prefix}streams:org_a`, a.id));
    const serverNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    assert.ok(score > serverNow && score <= serverNow + 600, `expiry ${score - serverNow} ms after the server's now`);
    await sleep(300);
    assert.equal(await slots.renew(a), true);
    await sleep(400);
    assert.equal(await slots.count('org_a'), 1, 'the renewed lease lives on, the other lapsed');
    assert.equal(await slots.renew(b), false);
    await slots.release(a);
    assert.equal(await slots.count('org_a'), 0);
    assert.deepEqual(await keysUnder(shared, prefix), [], "a team's set goes with its last lease");
  });
});

/** A port nothing listens on now. */
async function sparePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A private, throwaway redis-server this test may kill, stop and restart. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const failed = once(child, 'error').then(([e]) => {
    throw new Error(`redis-server could not be started: ${(e as Error).message}`);
  });
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      await Promise.race([requireEngine('private redis-server', `redis://127.0.0.1:${port}`), failed]);
      return child;
    } catch (e) {
      if (Date.now() > deadline || child.exitCode !== null) throw e;
      await sleep(20);
    }
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

/** What a call rejected with, and after how long. */
async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

function assertUnavailable(f: { error: unknown; ms: number }, within: number, what: string): void {
  assert.ok(f.error instanceof RedisUnavailableError, `${what}: ${String(f.error)}`);
  assert.ok(f.ms < within, `${what} failed after ${f.ms.toFixed(0)} ms`);
  const fault = dependencyFault(f.error);
  assert.equal(fault?.code, 'UNAVAILABLE', what);
  assert.equal(STATUS[fault.code].http, 503);
}

describe('Redis backends when Redis fails', () => {
  const servers: ChildProcess[] = [];
  after(() => Promise.all(servers.map(kill)));

  it('should fail takes and acquires within 2 s while Redis is down or hung, and work again on the same client once it is back', async (t) => {
    const port = await sparePort();
    const client = createRedisClient(`redis://127.0.0.1:${port}`, { connectionName: 'umbra-fault-test' });
    clients.push(client);
    const limiter = new RedisRateLimiter(client, { keyPrefix: 'umbra_fault:' });
    const slots = new RedisStreamSlots(client, { keyPrefix: 'umbra_fault:' });
    const rule = { rate: 1, burst: 100 };
    const take = () => limiter.take('org_a:lookup', rule, Date.now());

    // Never reachable yet: no queueing, an answer at once.
    assertUnavailable(await failure(take), 2_000, 'take before Redis ever answered');
    assertUnavailable(await failure(() => slots.acquire('org_a', 3)), 2_000, 'acquire before Redis ever answered');

    const eventuallyWorks = async (what: string) => {
      const started = performance.now();
      for (;;) {
        try {
          assert.equal((await take()).allowed, true);
          assert.ok(await slots.acquire('org_a', 100));
          return performance.now() - started;
        } catch (e) {
          if (performance.now() - started > 5_000) throw new Error(`${what}: still failing after 5 s: ${String(e)}`);
          await sleep(25);
        }
      }
    };
    servers.push(await startRedis(port));
    await eventuallyWorks('first start');

    // Killed with commands in flight: each settles (answered, or failed as unavailable) within 2 s.
    const inFlight = Array.from({ length: 50 }, () => failure(take));
    await kill(servers.pop()!);
    for (const f of await Promise.all(inFlight)) {
      assert.ok(f.ms < 2_000, `in flight for ${f.ms.toFixed(0)} ms`);
      if (f.error !== undefined) assertUnavailable(f, 2_000, 'take in flight at the kill');
    }
    assertUnavailable(await failure(take), 2_000, 'take while Redis is down');
    assertUnavailable(await failure(() => slots.acquire('org_a', 3)), 2_000, 'acquire while Redis is down');

    // Back on the same port, with the same client: the client reconnects by itself.
    const server = await startRedis(port);
    servers.push(server);
    const recoveredMs = await eventuallyWorks('restart');
    assert.ok(recoveredMs < 3_000, `working again ${recoveredMs.toFixed(0)} ms after Redis was back`);
    t.diagnostic(`working again ${recoveredMs.toFixed(0)} ms after Redis was back on its port`);

    // Hung (stopped, as a partitioned or swapping server would look): the command timeout answers.
    server.kill('SIGSTOP');
    try {
      assertUnavailable(await failure(take), 2_000, 'take while Redis hangs');
      assertUnavailable(await failure(() => slots.count('org_a')), 2_000, 'count while Redis hangs');
    } finally {
      server.kill('SIGCONT');
    }
    await eventuallyWorks('resumed');
  });
});
