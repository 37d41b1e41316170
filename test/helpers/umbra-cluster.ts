import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { distributedRun, type DistributedRun } from './distributed-run.ts';
import { freePort, HAPROXY_TEMPLATE, haproxyBinary, renderHaproxyConfig, startHaproxy, type Haproxy } from './haproxy.ts';
import { startS3Server } from './s3-server.ts';
import { startServe, type ServeProcess } from './serve-process.ts';
import { ensureRealDataset } from './test-dataset.ts';
import { umbraCliAsync } from './umbra-cli.ts';

/** The nodes' stream keepalive (15 s in production), short so that a stream closed behind HAProxy ends soon. */
export const KEEPALIVE_MS = 2_000;

const DEPLOY_DOC = join(import.meta.dirname, '../../docs/deploy.md');

/** Waits for cond (polled every `everyMs`), failing with `what` after `ms`; resolves with its value. */
export async function until<T>(what: string, cond: () => Promise<T | undefined | false>, ms = 10_000, everyMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(everyMs);
  }
}

/** Runs tasks with at most `n` in flight. */
export async function pool<T>(tasks: Array<() => Promise<T>>, n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

/** One counter of a node's /metrics: the sum of the series whose labels include every given pair. */
export async function counter(origin: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

export interface Node extends ServeProcess {
  name: string;
  grpcPort: number;
  dataDir: string;
}

export interface Cluster {
  run: DistributedRun;
  nodes: Node[];
  lb: Haproxy;
  /** HAProxy's HTTP frontend (`http://127.0.0.1:PORT`) and gRPC frontend port. */
  lbOrigin: string;
  lbGrpcPort: number;
  /** An `umbra --json` verb from an operator's machine: the shared configuration, a data dir of its own. */
  cli(args: string[], dataDir?: string): Promise<{ code: number; json: any; stderr: string }>;
  operatorToken: string;
  /** Where presigned download URLs point: the bucket's own URL. */
  bucketEndpoint: string;
}

/**
 * Three `umbra serve` processes in distributed mode on one UMBRA_CONFIG file (each with its own
 * UMBRA_NODE_ID, the third serving downloads itself), the schema made by `umbra migrate` from the three
 * nodes' configurations at once, and HAProxy in front with deploy/haproxy.cfg.
 */
export async function startCluster(t: TestContext): Promise<Cluster> {
  // Before anything is started: without HAProxy the test fails at once.
  haproxyBinary();
  const dir = mkdtempSync(join(tmpdir(), 'umbra-multinode-'));
  const s3 = await startS3Server('umbra-multinode');
  const run = await distributedRun('umbra_mn', s3);
  const procs: Node[] = [];
  let lb: Haproxy | undefined;
  t.after(async () => {
    await lb?.stop();
    for (const n of procs) n.proc.kill('SIGKILL');
    await Promise.all(procs.map((n) => n.exited));
    try {
      await run.cleanup();
    } finally {
      await s3.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  const configFile = join(dir, 'umbra.json');
  writeFileSync(configFile, JSON.stringify(run.settings, null, 2));
  // A node's own settings over the shared file; CLI verbs keep their default node id (one per process).
  const envOf = (nodeId: string | undefined, extra: Record<string, string> = {}) => ({
    UMBRA_CONFIG: configFile,
    ...(nodeId === undefined ? {} : { UMBRA_NODE_ID: nodeId }),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    UMBRA_STREAM_KEEPALIVE_MS: String(KEEPALIVE_MS),
    ...extra,
  });
  const names = ['n1', 'n2', 'n3'];
  const dataset = await ensureRealDataset();
  const dirs = names.map((name) => {
    const d = join(dir, name);
    mkdirSync(d);
    symlinkSync(dataset, join(d, 'ip-dataset.bin'));
    return d;
  });
  const cliDir = join(dir, 'operator');
  mkdirSync(cliDir);

  // Every node may run the migration as it is deployed: three at once leave one schema, applied once.
  const migrations = await Promise.all(names.map((n, i) => umbraCliAsync(dirs[i]!, ['migrate'], envOf(n))));
  for (const m of migrations) assert.equal(m.code, 0, m.stderr);
  const applied = migrations.map((m) => (m.json.applied as string[]).length);
  assert.equal(applied.filter((n) => n > 0).length, 1, `one run applied the migrations, the others found nothing to do: ${applied}`);
  assert.equal(migrations[0]!.json.schema, run.schema);

  const started = await Promise.all(
    names.map((name, i) => startServe(t, dirs[i]!, [], envOf(name, name === 'n3' ? { UMBRA_DOWNLOADS: 'umbra' } : {}))),
  );
  for (const [i, s] of started.entries()) {
    const grpcPort = Number((await s.line(/gRPC example\.v1\.ExampleService on [^ ]+:(\d+) /))[1]);
    procs.push({ ...s, name: names[i]!, grpcPort, dataDir: dirs[i]! });
  }
  for (const n of procs) await until(`${n.name} healthy`, async () => (await fetch(`${n.origin}/health`)).status === 200, 30_000, 200);

  // The configuration docs/deploy.md shows operators is the one tested here.
  const template = readFileSync(HAPROXY_TEMPLATE, 'utf8');
  assert.ok(readFileSync(DEPLOY_DOC, 'utf8').includes(template.trimEnd()), 'docs/deploy.md shows deploy/haproxy.cfg as it is');
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const config = renderHaproxyConfig(
    template,
    { httpBind: `127.0.0.1:${httpPort}`, grpcBind: `127.0.0.1:${grpcPort}`, statsSocket: join(dir, 'haproxy.sock') },
    procs.map((n) => ({ name: n.name, host: '127.0.0.1', httpPort: n.port, grpcPort: n.grpcPort })),
  );
  lb = await startHaproxy(dir, config);
  const lbOrigin = `http://127.0.0.1:${httpPort}`;
  const proxy = lb;
  await until('HAProxy to answer with every node in rotation', async () => {
    const state = await proxy.servers();
    return (await fetch(`${lbOrigin}/health`)).status === 200 && [...state.values()].every((b) => [...b.values()].every(Boolean));
  });
  const settings = run.settings as Record<string, string>;
  return {
    run,
    nodes: procs,
    lb,
    lbOrigin,
    lbGrpcPort: grpcPort,
    cli: (args, dataDir = cliDir) => umbraCliAsync(dataDir, args, envOf(undefined)),
    operatorToken: settings.UMBRA_OPERATOR_TOKEN!,
    bucketEndpoint: `${s3.endpoint}/${s3.bucket}/`,
  };
}

/** A team with `credits`, its lookup bucket set as given, and one key of the scopes the checks need. */
export async function team(c: Cluster, name: string, credits: number, lookup: { rate: number; burst: number }) {
  const org = await c.cli(['admin', 'org', 'create', '--name', name, '--credits', String(credits)]);
  assert.equal(org.code, 0, org.stderr);
  const [limits, key] = await Promise.all([
    c.cli(['admin', 'limits', 'set', '--org', name, '--bucket', 'lookup', '--rate', String(lookup.rate), '--burst', String(lookup.burst)]),
    c.cli(['admin', 'key', 'create', '--org', name, '--email', `ops@${name}.test`, '--scopes', 'BASIC,PROXY_FEEDS,PROXY_FIREHOSE']),
  ]);
  assert.equal(limits.code, 0, limits.stderr);
  assert.equal(key.code, 0, key.stderr);
  return { orgId: org.json.id as string, key: key.json.key as string };
}

export const get = (origin: string, path: string, key: string) => fetch(`${origin}/api/v4${path}`, { headers: { 'x-api-key': key } });

/** Proxy sightings stamped at the given seconds, each a distinct address. */
export const sightings = (stamps: number[], from = 0) =>
  stamps.map((timestamp, i) => ({
    ip: `198.51.100.${(from + i) % 250}`,
    provider: 'BRIGHTDATA',
    type: 'RESIDENTIAL_PROXY',
    timestamp,
    country_code: 'US',
    asn: 16276,
  }));

export async function ingest(c: Cluster, origin: string, records: object[]) {
  const res = await fetch(`${origin}/internal/v1/ingest/proxies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.operatorToken}`, 'content-type': 'application/x-ndjson' },
    body: records.map((r) => JSON.stringify(r)).join('\n'),
  });
  const body = (await res.json()) as { accepted: number };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.accepted, records.length);
}

/** n distinct addresses, IPv4 and IPv6, from `seed` on. */
export const addresses = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => {
    const k = seed + i;
    return k % 10 === 0
      ? `2001:4860:${(k >>> 8).toString(16)}:${(k & 255).toString(16)}::1`
      : `${11 + (k % 200)}.${(k >>> 8) & 255}.${k & 255}.${(k * 7) & 255}`;
  });
