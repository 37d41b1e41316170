// Distributed-mode figures, each against its embedded counterpart measured in the same run:
//   1. GET /lookup/ip req/s of one distributed node vs one embedded node (same real dataset, same kind of
//      key, the same wrk request sequence over many distinct IPv4/IPv6 addresses), alternating rounds, with
//      each server's CPU µs per request from /proc, and two diagnosis nodes: distributed with its rate
//      buckets in process instead of Redis (what the shared buckets cost), and distributed with token
//      prefetch off (UMBRA_RATE_PREFETCH=0: a Redis take per request, as before prefetch);
//   2. credit and rate-limit decision latency in process: BlockCreditLedger.debit (sync fast path and
//      reserve path, PostgreSQL) vs BufferedCreditLedger over SQLite, RedisRateLimiter.take vs
//      MemoryRateLimiter.take, over many teams and keys;
//   3. ingestion records/s, IngestService over JetStream vs over the embedded file log;
//   4. fan-out across two nodes: records ingested on node A reach K NDJSON stream clients on node B.
// The bench starts and stops everything itself (s3rver, six umbra processes) on the machine's
// PostgreSQL, Redis and NATS (UMBRA_TEST_*_URL as for the tests), each isolated by a name of this run
// (schema, key prefix, stream prefix) and cleaned up afterwards; it fails at once, naming the engine,
// when one is unreachable. Load comes from wrk in a process of its own. The 1-minute load average is
// printed with every figure: the VM is shared. UMBRA_BENCH_PARTS=decisions,ingest,lookups,fanout runs
// some parts only; UMBRA_BENCH_CPU_PROF=<dir> makes every umbra process write a V8 CPU profile there.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { requireEngine, testEngines } from '../test/helpers/engines.ts';
import { sampleRecords } from '../test/helpers/feed-fixtures.ts';
import { startS3Server, type TestS3 } from '../test/helpers/s3-server.ts';
import { isPromise } from '../src/lib/maybe-promise.ts';
import { BlockCreditLedger } from '../src/modules/credits/block-credit-ledger.ts';
import { BufferedCreditLedger } from '../src/modules/credits/buffered-credit-ledger.ts';
import type { CreditLedger } from '../src/modules/credits/credit-ledger.ts';
import { FEEDS, type FeedDef } from '../src/modules/feeds/feed-catalog.ts';
import { RecordValidator } from '../src/modules/feeds/feed-records.ts';
import { type IngestItem, IngestService } from '../src/modules/feeds/ingest-service.ts';
import type { RateLimiter } from '../src/modules/ratelimit/rate-limiter.ts';
import { JetStreamFeedBus } from '../src/storage/distributed/jetstream-feed-bus.ts';
import { JetStreamFeedLog } from '../src/storage/distributed/jetstream-feed-log.ts';
import { connectNats } from '../src/storage/distributed/nats-connection.ts';
import { PgCreditBlocks } from '../src/storage/distributed/pg-credit-blocks.ts';
import { PgCreditLedger } from '../src/storage/distributed/pg-credit-ledger.ts';
import { migrate } from '../src/storage/distributed/pg-migrate.ts';
import { PgPool } from '../src/storage/distributed/pg-pool.ts';
import { createRedisClient, redisReady } from '../src/storage/distributed/redis-client.ts';
import { RedisRateLimiter } from '../src/storage/distributed/redis-rate-limiter.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { MemoryFeedBus } from '../src/storage/embedded/memory-feed-bus.ts';
import { MemoryRateLimiter } from '../src/storage/embedded/memory-rate-limiter.ts';
import { SqliteCreditLedger } from '../src/storage/embedded/sqlite-credit-ledger.ts';
import { openSqlite } from '../src/storage/embedded/sqlite-db.ts';
import { benchFanOut } from './feeds.bench.ts';
import type { WrkResult } from './wrk/wrk-result.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

const WRK = process.env.UMBRA_BENCH_WRK ?? '/usr/bin/wrk';
const WRK_SCRIPT = join(import.meta.dirname, 'wrk/lookup-many.lua');
const CONNECTIONS = 50;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: ArrayLike<number>, p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const load1 = () => loadavg()[0]!.toFixed(1);
const fix = (x: number, d = 2) => Number(x.toFixed(d));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- engines and the run's names

interface Engines {
  schema: string;
  redisPrefix: string;
  natsPrefix: string;
  s3: TestS3;
  admin: pg.Pool;
  redis: Redis;
  /** The environment of a distributed node of this run. */
  nodeEnv: Record<string, string>;
}

async function setUpEngines(): Promise<Engines> {
  // A clear failure, naming the engine and its address, rather than a hang or a node that will not start.
  await requireEngine('PostgreSQL', testEngines.databaseUrl);
  await requireEngine('Redis', testEngines.redisUrl);
  await requireEngine('NATS', testEngines.natsUrl);
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const schema = `umbra_bench_${run}`;
  const redisPrefix = `umbra-bench-${run}:`;
  const natsPrefix = `UBENCH_${run}`;
  await migrate(testEngines.databaseUrl, { schema });
  const admin = new pg.Pool({ connectionString: testEngines.databaseUrl, max: 2 });
  const redis = createRedisClient(testEngines.redisUrl, { connectionName: `umbra bench ${run}` });
  await redisReady(redis);
  const s3 = await startS3Server(`umbra-bench-${process.pid}`);
  return {
    schema,
    redisPrefix,
    natsPrefix,
    s3,
    admin,
    redis,
    nodeEnv: {
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
      S3_FORCE_PATH_STYLE: 'true',
      UMBRA_SIGNING_KEYS: 'bench:distributed-bench-signing-key',
      UMBRA_OPERATOR_TOKEN: 'distributed-bench-operator-token',
      UMBRA_EXPORT_JOBS: 'off',
      UMBRA_SIMULATOR_RATE: '0',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

/** Drops the schema, this run's Redis keys and JetStream streams, stops s3rver; reports what failed, goes on. */
async function tearDownEngines(e: Engines): Promise<void> {
  const failures: string[] = [];
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
    }
  };
  await attempt('dropping the schema', () => e.admin.query(`DROP SCHEMA IF EXISTS "${e.schema}" CASCADE`));
  await attempt('closing the admin pool', () => e.admin.end());
  await attempt('deleting Redis keys', async () => {
    let cursor = '0';
    do {
      const [next, keys] = await e.redis.scan(cursor, 'MATCH', `${e.redisPrefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await e.redis.unlink(...keys);
    } while (cursor !== '0');
  });
  e.redis.disconnect();
  await attempt('deleting JetStream streams', async () => {
    const nc = await connectNats(testEngines.natsUrl, { name: 'umbra bench cleanup' });
    try {
      const jsm = await jetstreamManager(nc);
      const mine: string[] = [];
      for await (const name of jsm.streams.names()) if (name.startsWith(`${e.natsPrefix}_`)) mine.push(name);
      for (const name of mine) await jsm.streams.delete(name);
    } finally {
      await nc.close();
    }
  });
  await attempt('stopping s3rver', () => e.s3.close());
  if (failures.length > 0) console.error(`distributed bench cleanup: ${failures.join('; ')}`);
}

// ---------------------------------------------------------------- umbra nodes

interface Node {
  name: string;
  child: ChildProcess;
  lines: Interface;
  info: { port: number; key?: string; streamKey?: string };
}

async function startNode(name: string, env: Record<string, string>, args: string[] = []): Promise<Node> {
  // UMBRA_BENCH_CPU_PROF=<dir>: every node writes a V8 CPU profile there when it stops (for finding where the time goes).
  const prof = process.env.UMBRA_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UMBRA_BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, SEMI_SPACE_FLAG, '--import', 'tsx', 'bench/servers/umbra-node.ts', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`umbra node ${name} did not start within 180 s`)), 180_000);
    lines.once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`umbra node ${name} exited with ${code} before serving (its stderr is above)`));
    });
  });
  return { name, child, lines, info: JSON.parse(first) };
}

/** SIGTERM (a distributed node gives its credit blocks back), SIGKILL after 20 s. */
async function stopNode(n: Node): Promise<void> {
  if (n.child.exitCode !== null || n.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => n.child.once('exit', () => r()));
  n.child.kill('SIGTERM');
  const timer = setTimeout(() => n.child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** User + system CPU time of a process in ms, from /proc (Linux; undefined elsewhere). */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- 1. lookups with wrk

function wrk(port: number, key: string, seconds: number): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      WRK,
      ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s', '-s', WRK_SCRIPT, `http://127.0.0.1:${port}`, '--', key, '7'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c));
    child.stderr!.on('data', (c: Buffer) => (err += c));
    child.once('error', (e) => reject(new Error(`cannot run ${WRK}: ${e.message}`)));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) return reject(new Error(`wrk exited ${code}: ${err || out}`));
      resolve(JSON.parse(line) as WrkResult);
    });
  });
}

/**
 * Redis's own CPU (ms), script calls and the µs Redis spent running them, from INFO: the engine is
 * shared, so deltas include other users' commands (an upper bound on this run's part).
 */
async function redisCounters(redis: Redis): Promise<{ cpuMs: number; scripts: number; scriptUs: number }> {
  const info = (await redis.info('cpu')) + (await redis.info('commandstats'));
  const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
  return {
    cpuMs: (num(/used_cpu_sys:([\d.]+)/) + num(/used_cpu_user:([\d.]+)/)) * 1000,
    scripts: num(/cmdstat_evalsha:calls=(\d+)/) + num(/cmdstat_eval:calls=(\d+)/),
    scriptUs: num(/cmdstat_evalsha:calls=\d+,usec=(\d+)/) + num(/cmdstat_eval:calls=\d+,usec=(\d+)/),
  };
}

/** Credit block rows written in this run's schema so far (each a reservation, top-up or report). */
async function blockWrites(e: Engines): Promise<number> {
  const r = await e.admin.query<{ n: string }>(
    'SELECT coalesce(n_tup_upd + n_tup_ins, 0) AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2',
    [e.schema, 'credit_blocks'],
  );
  return Number(r.rows[0]?.n ?? 0);
}

interface Round {
  rps: number;
  cpuUs: number;
  /** The server's CPU time over the round's wall time: 100 % is one core saturated. */
  busyPct: number;
  p50Ms: number;
  p99Ms: number;
  load: string;
  redisCpuUs?: number;
  scriptsPerReq?: number;
  /** µs Redis spent in the take script per call (its commandstats). */
  scriptUsPerCall?: number;
  blockWritesPer1k?: number;
}

async function lookupRound(n: Node, seconds: number, e?: Engines): Promise<Round> {
  const key = n.info.key!;
  const cpu0 = cpuMs(n.child.pid);
  const r0 = e && (await redisCounters(e.redis));
  const b0 = e && (await blockWrites(e));
  const w0 = performance.now();
  const r = await wrk(n.info.port, key, seconds);
  const wallMs = performance.now() - w0;
  const cpu1 = cpuMs(n.child.pid);
  const r1 = e && (await redisCounters(e.redis));
  const b1 = e && (await blockWrites(e));
  const errors = r.status + r.connect + r.read + r.write + r.timeout;
  if (errors > 0) throw new Error(`${n.name}: wrk saw ${errors} errors (${JSON.stringify(r)})`);
  return {
    rps: r.requests / (r.us / 1e6),
    cpuUs: ((cpu1! - cpu0!) * 1000) / r.requests,
    busyPct: ((cpu1! - cpu0!) / wallMs) * 100,
    p50Ms: r.p50 / 1000,
    p99Ms: r.p99 / 1000,
    load: load1(),
    // Redis stats (a shared engine, so an upper bound on this node's part); PostgreSQL stats are a
    // cumulative view the server updates about once a second, so they are rough per round.
    redisCpuUs: r0 && r1 ? ((r1.cpuMs - r0.cpuMs) * 1000) / r.requests : undefined,
    scriptsPerReq: r0 && r1 ? (r1.scripts - r0.scripts) / r.requests : undefined,
    scriptUsPerCall: r0 && r1 && r1.scripts > r0.scripts ? (r1.scriptUs - r0.scriptUs) / (r1.scripts - r0.scripts) : undefined,
    blockWritesPer1k: b0 !== undefined && b1 !== undefined ? ((b1 - b0) * 1000) / r.requests : undefined,
  };
}

const perRound = (rs: Round[]) => rs.map((r) => `${Math.round(r.rps)} (load ${r.load})`).join(' / ');

async function benchLookups(
  embedded: Node,
  distributed: Node,
  viaMemory: Node,
  viaPrefetch: Node,
  e: Engines,
  seconds = 6,
  rounds = 5,
): Promise<Record<string, number | string>> {
  for (const n of [embedded, distributed, viaMemory, viaPrefetch]) {
    const res = await fetch(`http://127.0.0.1:${n.info.port}/api/v4/lookup/ip/8.8.8.8`, { headers: { 'x-api-key': n.info.key! } });
    if (res.status !== 200) throw new Error(`${n.name} answered a lookup with ${res.status}: ${await res.text()}`);
  }
  // Warm-up (JIT, key caches, credit blocks), then alternating measured rounds.
  for (const n of [embedded, distributed, viaMemory, viaPrefetch]) await wrk(n.info.port, n.info.key!, 4);
  const E: Round[] = [];
  const D: Round[] = [];
  const M: Round[] = [];
  const P: Round[] = [];
  for (let round = 0; round < rounds; round++) {
    E.push(await lookupRound(embedded, seconds));
    D.push(await lookupRound(distributed, seconds, e));
    M.push(await lookupRound(viaMemory, seconds, e));
    P.push(await lookupRound(viaPrefetch, seconds, e));
  }
  const ratio = (num: Round[]) => fix(median(num.map((r, i) => r.rps / E[i]!.rps)), 3);
  const med = (rs: Round[], f: (r: Round) => number | undefined, d = 1) => fix(median(rs.map((r) => f(r) ?? Number.NaN)), d);
  return {
    'lookups: rounds': `${rounds} x ${seconds} s, wrk -t1 -c${CONNECTIONS}, medians`,
    'embedded node req/s (rounds, load)': `${Math.round(median(E.map((r) => r.rps)))}: ${perRound(E)}`,
    'distributed node req/s (rounds, load)': `${Math.round(median(D.map((r) => r.rps)))}: ${perRound(D)}`,
    'distributed / embedded ratio (target >= 0.7)': ratio(D),
    'embedded server CPU us/request, busy %': `${med(E, (r) => r.cpuUs)}, ${med(E, (r) => r.busyPct, 0)} %`,
    'distributed server CPU us/request, busy %': `${med(D, (r) => r.cpuUs)}, ${med(D, (r) => r.busyPct, 0)} %`,
    'distributed: Redis CPU us/request (shared)': med(D, (r) => r.redisCpuUs),
    'distributed: Redis scripts/request (shared)': med(D, (r) => r.scriptsPerReq, 3),
    'distributed: us in Redis per take script': med(D, (r) => r.scriptUsPerCall),
    'distributed: credit block writes/1k requests': med(D, (r) => r.blockWritesPer1k, 2),
    'embedded p50 / p99 ms': `${med(E, (r) => r.p50Ms, 2)} / ${med(E, (r) => r.p99Ms, 2)}`,
    'distributed p50 / p99 ms': `${med(D, (r) => r.p50Ms, 2)} / ${med(D, (r) => r.p99Ms, 2)}`,
    'diagnosis, buckets in process: req/s (rounds)': `${Math.round(median(M.map((r) => r.rps)))}: ${perRound(M)}`,
    'diagnosis, buckets in process: ratio': ratio(M),
    'diagnosis, buckets in process: CPU us/request, busy %': `${med(M, (r) => r.cpuUs)}, ${med(M, (r) => r.busyPct, 0)} %`,
    'diagnosis, prefetch off (a Redis take per request): req/s': `${Math.round(median(P.map((r) => r.rps)))}: ${perRound(P)}`,
    'diagnosis, prefetch off: ratio': ratio(P),
    'diagnosis, prefetch off: CPU us/request, busy %': `${med(P, (r) => r.cpuUs)}, ${med(P, (r) => r.busyPct, 0)} %`,
    'diagnosis, prefetch off: Redis scripts/request': med(P, (r) => r.scriptsPerReq, 3),
  };
}

// ---------------------------------------------------------------- 2. decision latency in process

/** Times each call (µs): a synchronous answer and an awaited one are kept apart. */
class Timings {
  readonly sync: number[] = [];
  readonly async: number[] = [];
  summary(xs: number[]): string {
    return xs.length === 0 ? 'none' : `${fix(pct(xs, 50))} / ${fix(pct(xs, 99))} us (${xs.length} calls)`;
  }
}

const TEAMS = 1_000;
const DEBITS = 300_000;

async function debitRun(ledger: CreditLedger, teams: string[], t: Timings): Promise<void> {
  const nowSec = Math.floor(Date.now() / 1000);
  for (let i = 0; i < DEBITS; i++) {
    const t0 = performance.now();
    const r = ledger.debit(teams[i % teams.length]!, 1, nowSec);
    if (isPromise(r)) {
      const v = await r;
      t.async.push((performance.now() - t0) * 1000);
      if (!v.ok) throw new Error('a bench debit was refused');
    } else {
      t.sync.push((performance.now() - t0) * 1000);
      if (!r.ok) throw new Error('a bench debit was refused');
    }
  }
}

async function benchDecisions(e: Engines, rounds = 2): Promise<Record<string, number | string>> {
  const teams = Array.from({ length: TEAMS }, (_, i) => `org_bench_${i}`);
  const nowSec = Math.floor(Date.now() / 1000);
  const plan = { allotment: 1e12, periodSeconds: 30 * 86_400 };
  // PostgreSQL: the node's pool settings (schema of this run); the teams as a deployment has them.
  const db = new PgPool(testEngines.databaseUrl, { schema: e.schema, applicationName: 'umbra bench ledger' });
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-ledger-'));
  const sqlite = openSqlite(join(dir, 'umbra.db'));
  const pgLedger = new PgCreditLedger(db);
  const sqliteLedger = new SqliteCreditLedger(sqlite);
  const insertOrg = sqlite.prepare(
    'INSERT INTO orgs (id, name, credit_allotment, reset_period_s, max_streams, created_at) VALUES (?, ?, 0, 1, 1, 0)',
  );
  for (const id of teams) {
    await db.query('INSERT INTO orgs (id, name, credit_allotment, reset_period_s, max_streams, created_at) VALUES ($1, $1, 0, 1, 1, 0)', [
      id,
    ]);
    await pgLedger.open(id, plan, nowSec);
    insertOrg.run(id, id);
    await sqliteLedger.open(id, plan, nowSec);
  }
  const blockT = new Timings();
  const bufferedT = new Timings();
  const loads: string[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // Fresh ledgers, as a node that starts: each team's first debit loads (embedded) or reserves (blocks).
      const buffered = new BufferedCreditLedger(sqliteLedger, Date.now);
      await debitRun(buffered, teams, bufferedT);
      await buffered.flush();
      const blocks = new BlockCreditLedger(pgLedger, new PgCreditBlocks(db), {
        nodeId: `bench-${round}`,
        nowMs: Date.now,
        blockSize: 200, // UMBRA_CREDIT_BLOCK's default: the 201st debit of a team reserves again
        leaseSeconds: 30,
        idleReturnMs: 2_000,
      });
      await debitRun(blocks, teams, blockT);
      await blocks.releaseAll();
      loads.push(load1());
    }
  } finally {
    await db.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }

  // Rate buckets: 10,000 keys of the lookup bucket's default rule.
  const keys = Array.from({ length: 10_000 }, (_, i) => `org_bench_${i % TEAMS}:k${i}`);
  const rule = { rate: 100, burst: 200 };
  const memory = new MemoryRateLimiter();
  const redis = new RedisRateLimiter(e.redis, { keyPrefix: e.redisPrefix });
  const memT = new Timings();
  const redisSeq = new Timings();
  const redisConc = new Timings();
  let concPerSec = 0;
  let redisCpuUs = 0;
  let scriptUs = 0;
  let clientCpuUs = 0;
  const timeTakes = async (limiter: RateLimiter, n: number, t: Timings) => {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const d = limiter.take(keys[i % keys.length]!, rule, Date.now());
      if (isPromise(d)) {
        await d;
        t.async.push((performance.now() - t0) * 1000);
      } else t.sync.push((performance.now() - t0) * 1000);
    }
  };
  /** `window` takes in flight at once (as many connections' requests would be), each timed from call to answer. */
  const concurrent = async (n: number, window: number) => {
    let next = 0;
    const t0 = performance.now();
    const c0 = await redisCounters(e.redis);
    const own0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: window }, async () => {
        while (next < n) {
          const i = next++;
          const s = performance.now();
          await redis.take(keys[i % keys.length]!, rule, Date.now());
          redisConc.async.push((performance.now() - s) * 1000);
        }
      }),
    );
    const own = process.cpuUsage(own0);
    const c1 = await redisCounters(e.redis);
    concPerSec = n / ((performance.now() - t0) / 1000);
    redisCpuUs = ((c1.cpuMs - c0.cpuMs) * 1000) / n;
    scriptUs = c1.scripts > c0.scripts ? (c1.scriptUs - c0.scriptUs) / (c1.scripts - c0.scripts) : Number.NaN;
    clientCpuUs = (own.user + own.system) / n;
  };
  await timeTakes(memory, 20_000, new Timings()); // warm-up
  await timeTakes(redis, 2_000, new Timings());
  for (let round = 0; round < rounds; round++) {
    await timeTakes(memory, 200_000, memT);
    await timeTakes(redis, 20_000, redisSeq);
    await concurrent(100_000, CONNECTIONS);
    loads.push(load1());
  }
  const fast = (t: Timings) => t.summary(t.sync);
  return {
    'decisions: teams / bucket keys / rounds / load': `${TEAMS} / ${keys.length} / ${rounds} / ${loads.join(', ')}`,
    'embedded credits: debit in memory p50 / p99': fast(bufferedT),
    'embedded credits: first debit of a team (SQLite)': bufferedT.summary(bufferedT.async),
    'blocks: debit from the block (sync) p50 / p99': fast(blockT),
    'blocks: debit that reserves (PostgreSQL) p50 / p99': blockT.summary(blockT.async),
    'embedded bucket take p50 / p99': fast(memT),
    'Redis bucket take, one in flight p50 / p99': redisSeq.summary(redisSeq.async),
    [`Redis bucket take, ${CONNECTIONS} in flight p50 / p99`]: redisConc.summary(redisConc.async),
    [`Redis takes/s, ${CONNECTIONS} in flight (one client)`]: Math.round(concPerSec),
    'Redis CPU us/take (shared engine)': fix(redisCpuUs),
    'us in Redis per take script (commandstats)': fix(scriptUs),
    'client (ioredis + limiter) CPU us/take': fix(clientCpuUs),
  };
}

// ---------------------------------------------------------------- 3. ingestion

const INGEST_RECORDS = 100_000;
const INGEST_BATCH = 5_000;

/** Realistic records of a feed (feed-fixtures' sample, with a distinct address each), as NDJSON items in batches of 5,000. */
function ingestItems(feed: FeedDef, nowMs: number): IngestItem[][] {
  const sample = sampleRecords(nowMs)[feed.id];
  const field = 'source_ip' in sample ? 'source_ip' : 'ip';
  const batches: IngestItem[][] = [];
  for (let b = 0; b < INGEST_RECORDS / INGEST_BATCH; b++) {
    const items: IngestItem[] = [];
    for (let j = 0; j < INGEST_BATCH; j++) {
      const i = b * INGEST_BATCH + j;
      const ip = `${1 + (i % 223)}.${(i >> 8) & 255}.${(i >> 16) & 255}.${(i & 127) + 1}`;
      items.push({ n: i + 1, text: JSON.stringify({ ...sample, [field]: ip }) });
    }
    batches.push(items);
  }
  return batches;
}

/**
 * The batches as a request body brings them: the event loop turns between two. (Handed over as one
 * synchronous iterable, IngestService validates up to 40,000 records without yielding; on a loaded VM
 * that can pass the JetStream appender's 2 s ack deadline, which then fails the append before its acks
 * are read: see the README's distributed-mode notes.)
 */
async function* arriving(batches: IngestItem[][]): AsyncIterable<IngestItem[]> {
  for (const b of batches) {
    await new Promise((r) => setImmediate(r));
    yield b;
  }
}

async function benchIngest(e: Engines, rounds = 3): Promise<Record<string, number | string>> {
  const now = Date.now();
  const validator = new RecordValidator(() => now);
  const quiet = { warn: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-ingest-'));
  const nc = await connectNats(testEngines.natsUrl, { name: 'umbra bench ingest' });
  const jsLog = new JetStreamFeedLog(nc, { prefix: `${e.natsPrefix}_ING` });
  const jsBus = new JetStreamFeedBus(jsLog);
  const out: Record<string, number | string> = {};
  try {
    await jsLog.ensureStreams();
    for (const feed of [FEEDS.proxies, FEEDS.honeypot_http]) {
      const batches = ingestItems(feed, now);
      const bytes = batches.reduce((n, b) => n + b.reduce((m, it) => m + ('text' in it ? it.text.length + 1 : 0), 0), 0);
      const file: number[] = [];
      const js: number[] = [];
      const loads: string[] = [];
      const time = async (service: IngestService) => {
        const t0 = performance.now();
        const s = await service.ingest(feed, arriving(batches));
        if (s.accepted !== INGEST_RECORDS)
          throw new Error(`${feed.id}: accepted ${s.accepted} of ${INGEST_RECORDS} (${JSON.stringify(s.errors[0])})`);
        return INGEST_RECORDS / ((performance.now() - t0) / 1000);
      };
      for (let round = 0; round < rounds; round++) {
        const fileLog = new FileFeedLog(join(dir, `feeds-${feed.id}-${round}`));
        file.push(await time(new IngestService(fileLog, new MemoryFeedBus(), validator, quiet)));
        await fileLog.close();
        js.push(await time(new IngestService(jsLog, jsBus, validator, quiet)));
        loads.push(load1());
      }
      const r = (xs: number[]) => xs.map(Math.round).join(' / ');
      out[`ingest ${feed.id} (${Math.round(bytes / INGEST_RECORDS)} B/record): file log records/s`] =
        `${Math.round(median(file))} (${r(file)})`;
      out[`ingest ${feed.id}: JetStream records/s`] = `${Math.round(median(js))} (${r(js)}; load ${loads.join(', ')})`;
      out[`ingest ${feed.id}: JetStream / file log ratio`] = fix(median(js.map((x, i) => x / file[i]!)), 3);
    }
  } finally {
    await jsBus.close();
    await jsLog.close();
    await nc.drain();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

// ---------------------------------------------------------------- 4. fan-out across nodes

const FAN_CLIENTS = 100;
const FAN_RATE = 5_500;

/**
 * K NDJSON consumers of the proxies stream. Each counts lines in the raw bytes; four of them (first,
 * last and two between: a node writes to its subscribers in turn) also decode every line and note when
 * record `seq` (its address a.b.c.7) arrived.
 */
function consumers(port: number, key: string, n: number) {
  const arrivals: Array<[number, number]> = [];
  const closers: Array<() => void> = [];
  const sampled = new Set([0, Math.floor(n / 3), Math.floor((2 * n) / 3), n - 1]);
  let delivered = 0;
  let chunks = 0;
  const reqs = Array.from(
    { length: n },
    (_, c) =>
      new Promise<void>((ready, fail) => {
        const path = '/api/v4/feeds/proxies/stream';
        const req = request({ host: '127.0.0.1', port, path, headers: { 'x-api-key': key }, agent: false }, (res) => {
          if (res.statusCode !== 200) return fail(new Error(`stream answered ${res.statusCode}`));
          let rest = '';
          res.on('data', (chunk: Buffer) => {
            chunks++;
            if (!sampled.has(c)) {
              for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) delivered++;
              return;
            }
            const at = performance.timeOrigin + performance.now();
            const text = rest + chunk.toString('utf8');
            let start = 0;
            for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
              delivered++;
              if (nl > start) {
                const [a, b, cc] = (JSON.parse(text.slice(start, nl)) as { ip: string }).ip.split('.').map(Number);
                arrivals.push([((a! - 1) << 16) | (b! << 8) | cc!, at]);
              }
              start = nl + 1;
            }
            rest = text.slice(start);
          });
          ready();
        });
        req.on('error', fail);
        req.end();
        closers.push(() => req.destroy());
      }),
  );
  return {
    ready: Promise.all(reqs),
    delivered: () => delivered,
    chunks: () => chunks,
    arrivals,
    close: () => {
      for (const f of closers) f();
    },
  };
}

interface FanRound {
  perSecond: number;
  delivered: number;
  expected: number;
  p50: number;
  p99: number;
  load: string;
  /** CPU of the ingesting node, the node holding the clients and nats-server, ms per 1,000 records ingested; busy % of wall time. */
  cpu: string;
  /** Records per chunk the clients read (how the node batches its writes). */
  perChunk: number;
}

/** The pid of the NATS server the bench uses (the machine's shared engine), from /proc; undefined when not found. */
function natsServerPid(): number | undefined {
  const port = new URL(testEngines.natsUrl).port || '4222';
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!args[0]?.endsWith('nats-server')) continue;
      const p =
        args.indexOf('-p') >= 0 ? args[args.indexOf('-p') + 1] : args.indexOf('--port') >= 0 ? args[args.indexOf('--port') + 1] : '4222';
      if (p === port) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

async function fanRound(ingestOn: Node, clientsOn: Node, key: string, seconds: number): Promise<FanRound> {
  const c = consumers(clientsOn.info.port, key, FAN_CLIENTS);
  await c.ready;
  await sleep(500);
  const nats = natsServerPid();
  const pids = [ingestOn.child.pid, ...(clientsOn === ingestOn ? [] : [clientsOn.child.pid]), nats];
  const cpu0 = pids.map(cpuMs);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  ingestOn.child.stdin!.write(`ingest ${FAN_RATE} ${seconds}\n`);
  const done = JSON.parse(await new Promise<string>((resolve) => ingestOn.lines.once('line', resolve))) as {
    published: number;
    rejected: number;
    appendedAt: number[];
  };
  if (done.rejected > 0) throw new Error(`${ingestOn.name} rejected ${done.rejected} bench records`);
  const expected = done.published * FAN_CLIENTS;
  const deadline = Date.now() + 10_000;
  while (c.delivered() < expected && Date.now() < deadline) await sleep(20);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = pids.map(cpuMs);
  const own = process.cpuUsage(own0);
  c.close();
  const latencies = c.arrivals.map(([seq, at]) => at - done.appendedAt[seq]!);
  const names = clientsOn === ingestOn ? ['node', 'nats'] : ['A', 'B', 'nats'];
  const cpu = pids
    .map((pid, i) => {
      if (pid === undefined || cpu0[i] === undefined || cpu1[i] === undefined) return `${names[i]} n/a`;
      const ms = cpu1[i]! - cpu0[i]!;
      return `${names[i]} ${fix((ms * 1000) / done.published, 1)} ms/1k ${Math.round(ms / (elapsed * 10))} %`;
    })
    .join(', ');
  const clientsMs = (own.user + own.system) / 1000;
  return {
    perSecond: Math.round(c.delivered() / elapsed),
    delivered: c.delivered(),
    expected,
    p50: fix(pct(latencies, 50)),
    p99: fix(pct(latencies, 99)),
    load: load1(),
    cpu: `${cpu}, clients ${Math.round(clientsMs / (elapsed * 10))} %`,
    perChunk: fix(c.delivered() / c.chunks(), 1),
  };
}

async function benchFanOutAcross(a: Node, b: Node, embedded: Node, seconds = 6, rounds = 2): Promise<Record<string, number | string>> {
  const E: FanRound[] = [];
  const D: FanRound[] = [];
  // Warm-up (JIT, B's JetStream consumer and its first pulls), not counted.
  await fanRound(embedded, embedded, embedded.info.streamKey!, 2);
  await fanRound(a, b, a.info.streamKey!, 2);
  for (let round = 0; round < rounds; round++) {
    E.push(await fanRound(embedded, embedded, embedded.info.streamKey!, seconds));
    // Node B has no key of its own: it verifies node A's in PostgreSQL, as any node of a deployment does.
    D.push(await fanRound(a, b, a.info.streamKey!, seconds));
  }
  const show = (rs: FanRound[]) =>
    rs
      .map(
        (r) =>
          `${r.perSecond}/s, ${r.delivered}/${r.expected}, p50 ${r.p50} p99 ${r.p99} ms, ${r.perChunk} records/read, CPU ${r.cpu} (load ${r.load})`,
      )
      .join('; ');
  return {
    'fan-out: clients / records/s ingested / rounds': `${FAN_CLIENTS} / ${FAN_RATE} / ${rounds} x ${seconds} s`,
    'embedded node, ingest and clients on it: delivered/s': Math.round(median(E.map((r) => r.perSecond))),
    'embedded: append-to-delivery p50 / p99 ms': `${median(E.map((r) => r.p50))} / ${median(E.map((r) => r.p99))}`,
    'embedded rounds': show(E),
    'two nodes, ingest on A, clients on B: delivered/s': Math.round(median(D.map((r) => r.perSecond))),
    'two nodes: append-to-delivery p50 / p99 ms': `${median(D.map((r) => r.p50))} / ${median(D.map((r) => r.p99))}`,
    'two nodes rounds': show(D),
    'two nodes / embedded delivered ratio': fix(median(D.map((r, i) => r.perSecond / E[i]!.perSecond)), 3),
  };
}

// ---------------------------------------------------------------- the suite

export async function benchDistributed(): Promise<Record<string, number | string>> {
  // UMBRA_BENCH_PARTS=decisions,ingest,lookups,fanout (default: all), to look into one part alone.
  const parts = new Set((process.env.UMBRA_BENCH_PARTS ?? 'decisions,ingest,lookups,fanout').split(','));
  const e = await setUpEngines();
  const nodes: Node[] = [];
  const out: Record<string, number | string> = {};
  try {
    if (parts.has('decisions')) Object.assign(out, await benchDecisions(e));
    if (parts.has('ingest')) Object.assign(out, await benchIngest(e));
    if (parts.has('lookups') || parts.has('fanout')) {
      // One at a time: each loads the dataset (and the first may build it into the cache).
      const embedded = await startNode('embedded', { UMBRA_STORAGE: 'embedded' }, ['--setup']);
      nodes.push(embedded);
      const a = await startNode('A', { ...e.nodeEnv, UMBRA_NODE_ID: 'bench-a' }, ['--setup']);
      nodes.push(a);
      if (parts.has('lookups')) Object.assign(out, await lookupsOnNodes(e, embedded, a, nodes));
      if (parts.has('fanout')) {
        const b = await startNode('B', { ...e.nodeEnv, UMBRA_NODE_ID: 'bench-b' });
        nodes.push(b);
        Object.assign(out, await benchFanOutAcross(a, b, embedded));
      }
    }
  } finally {
    for (const n of nodes) await stopNode(n);
    await tearDownEngines(e);
  }
  if (parts.has('fanout')) {
    // The feeds bench's embedded fan-out (records published straight to the bus, no ingestion), for the README's figure.
    const feeds = await benchFanOut();
    out['feeds bench, embedded fan-out: delivered/s'] =
      `${feeds['umbra delivered events/s, 100 consumers (target >= 500,000)']} (load ${load1()})`;
    out['feeds bench, embedded: p50 / p99 ms'] = feeds['umbra publish-to-delivery p50 / p99 ms (target p99 < 50)']!;
  }
  return out;
}

/**
 * The lookup nodes serve lookups only (A, which made the team, does the fan-out's ingestion later), so
 * a CPU profile of each (UMBRA_BENCH_CPU_PROF) holds its start and the lookup load alone.
 */
async function lookupsOnNodes(e: Engines, embedded: Node, a: Node, nodes: Node[]): Promise<Record<string, number | string>> {
  const d = await startNode('D', { ...e.nodeEnv, UMBRA_NODE_ID: 'bench-d' });
  nodes.push(d);
  const viaMemory = await startNode('M', { ...e.nodeEnv, UMBRA_NODE_ID: 'bench-m' }, ['--memory-limiter']);
  nodes.push(viaMemory);
  const viaPrefetch = await startNode('P', { ...e.nodeEnv, UMBRA_NODE_ID: 'bench-p', UMBRA_RATE_PREFETCH: '0' });
  nodes.push(viaPrefetch);
  for (const n of [d, viaMemory, viaPrefetch]) n.info.key = a.info.key;
  const out = await benchLookups(embedded, d, viaMemory, viaPrefetch, e);
  for (const n of [d, viaMemory, viaPrefetch]) await stopNode(n);
  return out;
}
