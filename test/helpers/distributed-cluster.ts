import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { readParquet } from './parquet-test-reader.ts';
import { PrivateNats, PrivatePostgres, PrivateRedis } from './private-engines.ts';
import { startS3Server, type TestS3 } from './s3-server.ts';
import { startServe, type ServeProcess } from './serve-process.ts';
import { ensureRealDataset } from './test-dataset.ts';
import { BIN } from './umbra-cli.ts';

export const OPERATOR_TOKEN = 'fault-test-operator-token-0123456789';

/** One `umbra serve` node of the cluster, and what tests ask it. */
export interface ClusterNode extends ServeProcess {
  name: string;
  dataDir: string;
  /** GET or POST under /api/v4 with a key. */
  api(path: string, key: string, init?: RequestInit): Promise<Response>;
  /** POST NDJSON to the operator ingestion endpoint of `feed`. */
  ingest(feed: string, body: RequestInit['body'], init?: RequestInit & { duplex?: 'half' }): Promise<Response>;
  /** Runs an export job through the node (POST /internal/v1/exports/run). */
  exportJob(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response>;
  /** The node's JSON log lines (stdout) parsed, those that parse. */
  logs(): Array<Record<string, unknown>>;
  /** kill -9, and wait until it is gone. */
  kill9(): Promise<void>;
}

export interface Cluster {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  nats: PrivateNats;
  s3: TestS3;
  schema: string;
  /** The environment every node and CLI verb of the cluster runs with. */
  env: Record<string, string>;
  /** An `umbra --json` verb with the cluster's environment. */
  cli(args: string[]): Promise<{ code: number; json: any; stderr: string }>;
  /** A team and a key with these scopes; `limits` raises buckets (bucket → rate = burst). */
  team(name: string, credits: number, scopes: string, limits?: Record<string, number>): Promise<{ orgId: string; key: string }>;
  startNode(t: TestContext, name: string, env?: Record<string, string>): Promise<ClusterNode>;
  /** A statement on the cluster's schema (a direct look at what the nodes recorded). */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

/**
 * PostgreSQL, Redis and NATS of the test's own (private-engines.ts), an in-process S3 (s3rver), the
 * schema migrated: a distributed deployment that fault tests may stop, kill and restart at will.
 * Nodes are real `umbra serve` processes (bin/umbra.js runs dist/: `npm run build` first).
 */
export async function startCluster(t: TestContext | { after(fn: () => unknown): void }): Promise<Cluster> {
  const started: Array<{ close(): Promise<void> | void }> = [];
  const dirs: string[] = [];
  let closed = false;
  const cleanup = async () => {
    if (closed) return;
    closed = true;
    for (const s of started.reverse()) await Promise.resolve(s.close()).catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  t.after(cleanup);
  const [pgServer, redis, nats, s3] = await Promise.all([
    PrivatePostgres.start(),
    PrivateRedis.start(),
    PrivateNats.start(),
    startS3Server('umbra-faults'),
  ]);
  started.push({ close: () => pgServer.destroy() }, { close: () => redis.destroy() }, { close: () => nats.destroy() }, s3);
  const dataset = await ensureRealDataset();
  const schema = 'umbra_faults';
  const env: Record<string, string> = {
    UMBRA_STORAGE: 'distributed',
    DATABASE_URL: pgServer.url,
    UMBRA_DB_SCHEMA: schema,
    REDIS_URL: redis.url,
    UMBRA_REDIS_PREFIX: 'faults:',
    NATS_URL: nats.url,
    UMBRA_NATS_PREFIX: 'FAULTS',
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    UMBRA_SIGNING_KEYS: 'k1:fault-test-signing-secret-0123456789',
    UMBRA_OPERATOR_TOKEN: OPERATOR_TOKEN,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    UMBRA_SIMULATOR_RATE: '0',
  };
  const cliDir = mkdtempSync(join(tmpdir(), 'umbra-faults-cli-'));
  dirs.push(cliDir);
  const cli = (args: string[]) =>
    new Promise<{ code: number; json: any; stderr: string }>((resolve, reject) => {
      const p = spawn(process.execPath, [BIN, '--json', '--data-dir', cliDir, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (b) => (stdout += b));
      p.stderr.on('data', (b) => (stderr += b));
      p.once('error', reject);
      p.once('exit', (code) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: code ?? -1, json, stderr });
      });
    });
  const migrated = await cli(['migrate']);
  if (migrated.code !== 0) throw new Error(`umbra migrate failed (${migrated.code}): ${migrated.stderr}`);
  const db = new pg.Pool({ connectionString: pgServer.url, max: 2, options: `-c search_path=${schema}` });
  // The pool outlives PostgreSQL restarts: a connection the server ended is dropped, not thrown.
  db.on('error', () => {});
  started.push({ close: () => db.end() });

  const team: Cluster['team'] = async (name, credits, scopes, limits = {}) => {
    const org = await cli(['admin', 'org', 'create', '--name', name, '--credits', String(credits)]);
    if (org.code !== 0) throw new Error(`org create: ${org.stderr}`);
    for (const [bucket, rate] of Object.entries(limits)) {
      const set = await cli(['admin', 'limits', 'set', '--org', name, '--bucket', bucket, '--rate', String(rate), '--burst', String(rate)]);
      if (set.code !== 0) throw new Error(`limits set: ${set.stderr}`);
    }
    const key = await cli(['admin', 'key', 'create', '--org', name, '--email', `ops@${name}.test`, '--scopes', scopes]);
    if (key.code !== 0) throw new Error(`key create: ${key.stderr}`);
    return { orgId: org.json.id as string, key: key.json.key as string };
  };

  const startNode: Cluster['startNode'] = async (tc, name, extra = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), `umbra-faults-${name}-`));
    dirs.push(dataDir);
    symlinkSync(dataset, join(dataDir, 'ip-dataset.bin'));
    const proc = await startServe(tc, dataDir, [], { ...env, UMBRA_NODE_ID: name, ...extra });
    const base = proc.origin;
    const node: ClusterNode = {
      ...proc,
      name,
      dataDir,
      api: (path, key, init = {}) => fetch(`${base}/api/v4${path}`, { ...init, headers: { 'x-api-key': key, ...init.headers } }),
      ingest: (feed, body, init = {}) =>
        fetch(`${base}/internal/v1/ingest/${feed}`, {
          method: 'POST',
          body,
          ...init,
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/x-ndjson', ...init.headers },
        }),
      exportJob: (body, signal) =>
        fetch(`${base}/internal/v1/exports/run`, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
          signal,
        }),
      logs: () =>
        proc.stdout.flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
      kill9: async () => {
        if (proc.proc.exitCode !== null || proc.proc.signalCode !== null) return;
        proc.proc.kill('SIGKILL');
        await proc.exited;
      },
    };
    return node;
  };

  return {
    pg: pgServer,
    redis,
    nats,
    s3,
    schema,
    env,
    cli,
    team,
    startNode,
    sql: async (text, values) => (await db.query(text, values)).rows,
    close: cleanup,
  };
}

/** The address of proxies record number `i` (distinct for i below 2^24): a record's identity in these tests. */
export const recordIp = (i: number): string => `45.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;

/** Proxies records `from` … `from + count - 1` as NDJSON, all stamped `timestampS` (their export hour). */
export function proxiesNdjson(from: number, count: number, timestampS: number): string {
  let out = '';
  for (let i = from; i < from + count; i++)
    out += `{"ip":"${recordIp(i)}","provider":"BRIGHTDATA","type":"RESIDENTIAL_PROXY","timestamp":${timestampS},"country_code":"US","asn":16276}\n`;
  return out;
}

/** What one request answered, and how long it took (ms); a request that failed to answer has status 0. */
export interface Timed {
  status: number;
  ms: number;
  headers: Headers | undefined;
  /** The JSON body, or the text when it is not JSON. */
  body: any;
}

export async function timed(f: () => Promise<Response>): Promise<Timed> {
  const start = performance.now();
  try {
    const res = await f();
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a parquet file, NDJSON): kept as text.
    }
    return { status: res.status, ms: performance.now() - start, headers: res.headers, body };
  } catch (e) {
    return { status: 0, ms: performance.now() - start, headers: undefined, body: (e as Error).message };
  }
}

/** Calls `f` every `everyMs` until `done` says yes; returns the last value and the ms it took. Throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  f: () => Promise<T>,
  done: (v: T) => boolean,
  { everyMs = 100, timeoutMs = 30_000 } = {},
): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  for (;;) {
    const value = await f();
    if (done(value)) return { value, ms: performance.now() - start };
    if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** One snapshot as the list operation shows it. */
export interface ListedSnapshot {
  id: string;
  kind: 'hourly' | 'daily';
  date: string;
  hour?: number;
  size_bytes: number;
  row_count: number;
  checksum: string;
  download_path: string;
}

/** The proxies snapshots a node lists now (newest first, up to 100). */
export async function listSnapshots(node: ClusterNode, key: string): Promise<{ status: number; items: ListedSnapshot[] }> {
  const r = await timed(() => node.api('/feeds/proxies/export?limit=100', key));
  return { status: r.status, items: r.status === 200 ? (r.body.feeds as ListedSnapshot[]) : [] };
}

/** Downloads a listed snapshot as a customer would (the 307 followed) and tells whether its bytes are the ones listed. */
export async function downloadSnapshot(
  node: ClusterNode,
  key: string,
  s: ListedSnapshot,
): Promise<{ ok: boolean; why: string; bytes?: Buffer }> {
  let res: Response;
  try {
    res = await fetch(`${node.origin}${s.download_path}`, { headers: { 'x-api-key': key } });
  } catch (e) {
    return { ok: false, why: `download failed: ${(e as Error).message}` };
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) return { ok: false, why: `download answered ${res.status}: ${bytes.toString('utf8', 0, 300)}` };
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== s.checksum || bytes.length !== s.size_bytes)
    return { ok: false, why: `bytes differ from the listing: sha256 ${sha} (${bytes.length} B), listed ${s.checksum} (${s.size_bytes} B)` };
  return { ok: true, why: '', bytes };
}

/** The record addresses in a snapshot's parquet file, in file order. */
export async function snapshotIps(bytes: Buffer): Promise<string[]> {
  const { rows } = await readParquet(new Uint8Array(bytes));
  const text = new TextDecoder();
  return rows.map((r) => (typeof r.ip === 'string' ? r.ip : text.decode(r.ip as Uint8Array)));
}

/** The listed snapshot `id` (`YYYY-MM-DD` or `YYYY-MM-DD/HH`) of a node, downloaded and checked; throws when absent or wrong. */
export async function exportedIps(node: ClusterNode, key: string, id: string): Promise<{ ips: string[]; snapshot: ListedSnapshot }> {
  const { status, items } = await listSnapshots(node, key);
  const snapshot = items.find((s) => s.id === id);
  if (!snapshot) throw new Error(`snapshot ${id} not listed (list answered ${status}: ${items.map((s) => s.id).join(', ')})`);
  const got = await downloadSnapshot(node, key, snapshot);
  if (!got.ok) throw new Error(`snapshot ${id}: ${got.why}`);
  return { ips: await snapshotIps(got.bytes!), snapshot };
}

/** The id of an hour's snapshot. */
export const hourId = (hourStartMs: number): string =>
  `${new Date(hourStartMs).toISOString().slice(0, 10)}/${new Date(hourStartMs).getUTCHours()}`;
