import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { sampleRecords } from '../helpers/feed-fixtures.ts';
import { openStream } from '../helpers/stream-client.ts';
import { grpcClient } from '../helpers/grpc-client.ts';
import { restampDataset } from '../helpers/dataset-files.ts';
import { SEMI_SPACE_FLAG } from '../../src/lib/young-generation.ts';
import { BIN, umbraCli } from '../helpers/umbra-cli.ts';

/** Runs an `umbra` verb to completion, as an operator's script would. */
const umbra = (dataDir: string, ...args: string[]) => umbraCli(dataDir, args);

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('umbra serve (black box)', () => {
  it('should serve real lookups over a socket to keys made by the admin verbs, and obey them while running', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-bb-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));

    const org = umbra(dataDir, 'admin', 'org', 'create', '--name', 'Black Box', '--credits', '100');
    assert.equal(org.code, 0, org.stderr);
    const key = umbra(dataDir, 'admin', 'key', 'create', '--org', 'black box', '--email', 'ops@bb.test', '--scopes', 'BASIC');
    assert.equal(key.code, 0, key.stderr);
    assert.match(key.json.key, /^[0-9a-f-]{36}$/);
    assert.equal(umbra(dataDir, 'admin', 'key', 'create', '--org', 'Black Box', '--email', 'x@bb.test', '--scopes', 'BASIC,WRONG').code, 2);
    assert.equal(umbra(dataDir, 'admin', 'credits', 'add', '--org', 'nobody', '5').code, 2);

    // Started as `umbra serve` usually is: no node flags, and none from the test run's NODE_OPTIONS either.
    const { NODE_OPTIONS: _, ...env } = process.env;
    const server = spawn(process.execPath, [BIN, 'serve', '--demo', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...env, UMBRA_LOG_LEVEL: 'warn' },
    });
    const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
    t.after(() => server.kill('SIGKILL'));
    let base = '';
    let grpcPort = 0;
    let demoKey = '';
    const stderr: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const rl = createInterface({ input: server.stderr! });
      rl.on('line', (line) => {
        stderr.push(line);
        base ||= /serving (http:\/\/\S+\/api\/v4)/.exec(line)?.[1] ?? '';
        grpcPort ||= Number(/ExampleService on \S+:(\d+) \(plaintext/.exec(line)?.[1] ?? 0);
        demoKey ||= /demo API key \(every scope\): (\S+)/.exec(line)?.[1] ?? '';
        if (base && grpcPort && demoKey) resolve();
      });
      server.once('exit', () => reject(new Error(`server exited early:\n${stderr.join('\n')}`)));
    });
    // The operator learns how to give node the young generation umbra is tuned for.
    assert.ok(
      stderr.some((l) => l.includes("node runs with V8's default semi-spaces") && l.includes(`NODE_OPTIONS=${SEMI_SPACE_FLAG}`)),
      stderr.join('\n'),
    );
    const get = (path: string, k: string) => fetch(`${base}${path}`, { headers: { 'x-api-key': k } });

    const google = await get('/lookup/ip/8.8.8.8', key.json.key);
    assert.equal(google.status, 200);
    assert.equal(google.headers.get('x-credits-remaining'), '99');
    const body = (await google.json()) as any;
    assert.equal(body.network.asn, 15169);
    assert.match(body.network.isp, /google/i);
    assert.equal(body.location.country, 'US');

    const batch = await fetch(`${base}/lookup/ips`, {
      method: 'POST',
      headers: { 'x-api-key': key.json.key, 'content-type': 'application/json' },
      body: JSON.stringify({ ips: ['1.1.1.1', '2001:4860:4860::8888', '1.1.1.1', 'nope'] }),
    });
    assert.equal(batch.status, 200);
    assert.equal(batch.headers.get('x-credits-remaining'), '97');
    const results = ((await batch.json()) as any).results;
    assert.deepEqual(
      results.map((r: { network: { asn: number } }) => r.network.asn),
      [13335, 15169],
    );

    assert.equal((await get('/account/me', demoKey)).status, 200, 'the printed demo key works');
    // The gRPC mirror of the same process draws on the same balance (97 → 96).
    const grpc = grpcClient(grpcPort);
    const viaGrpc = await grpc.unary('LookupIP', { ip_address: '8.8.8.8' }, key.json.key);
    grpc.close();
    assert.equal(viaGrpc.value?.network.asn, 15169, viaGrpc.error?.details);
    assert.equal(viaGrpc.trailers['x-credits-remaining'], '96');

    // Admin changes made by another process while the server runs.
    assert.equal(umbra(dataDir, 'admin', 'credits', 'set', '--org', 'Black Box', '7').code, 0);
    const me = (await (await get('/account/me', key.json.key)).json()) as any;
    assert.equal(me.lookup_quota.credits, 7);
    assert.equal(umbra(dataDir, 'admin', 'key', 'revoke', key.json.id).code, 0);
    await until('revocation', 5000, async () => ((await get('/account/me', key.json.key)).status === 401 ? true : undefined));

    // Feeds: the demo simulator streams every feed; `umbra ingest` reaches the running server's streams.
    const port = Number(new URL(base).port);
    const sim = await openStream(port, '/api/v4/feeds/helio/adb/stream', demoKey);
    assert.equal(sim.status, 200);
    const [adb] = (await sim.records(1, 15_000)) as Array<{ timestamp: number; hash: string }>;
    assert.equal(String(adb!.timestamp).length, 13, 'honeypot timestamps are milliseconds');
    sim.close();
    const live = await openStream(port, '/api/v4/feeds/ja4t/stream', demoKey);
    const mine = { ...sampleRecords(Date.now()).ja4t, provider: 'BLACKBOX_TEST' };
    const file = join(dataDir, 'ja4t.ndjson');
    writeFileSync(file, `${JSON.stringify(mine)}\n{"ip":"nope"}\n`);
    const ingest = umbra(dataDir, 'ingest', 'ja4t', file, '--server', base.replace('/api/v4', ''));
    assert.equal(ingest.code, 1, `some records rejected: exit 1\n${ingest.stderr}`);
    assert.equal(ingest.json.accepted, 1);
    assert.deepEqual(
      ingest.json.errors.map((e: { record: number; field: string }) => [e.record, e.field]),
      [[2, 'ja4t']],
    );
    await until('the ingested record on the live stream', 10_000, async () =>
      live.lines.some((l) => l.includes('BLACKBOX_TEST')) ? true : undefined,
    );
    live.close();

    // Versioned data: the header names what `umbra data status` shows, for the files and the server.
    const root = base.replace('/api/v4', '');
    const versionOf = async (ip: string) => {
      const res = await get(`/lookup/ip/${ip}`, demoKey);
      return { version: res.headers.get('x-data-version') ?? '', network: ((await res.json()) as any).network };
    };
    const before = await versionOf('24.0.0.1');
    assert.equal(before.network.type, 'RESIDENTIAL');
    const status = umbra(dataDir, 'data', 'status', '--server', root);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.json.data_version, before.version);
    assert.equal(status.json.server.data_version, before.version);
    assert.match(before.version, /^dataset=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; asn=[\d.]+; dbip-city-mmdb=[\d.]+; lists=0:0$/);
    assert.equal(status.json.feeds.find((f: { feed: string }) => f.feed === 'ja4t').hours > 0, true);
    // An operator classes a range as hosting: the running server applies it within seconds.
    const hoster = join(dataDir, 'hoster.txt');
    writeFileSync(hoster, '# example hoster\n24.0.0.0/24\n');
    assert.equal(umbra(dataDir, 'data', 'import-list', 'DATACENTER', hoster, '--provider', 'EXAMPLE_HOSTER').code, 0);
    const listed = await until('the list in lookups', 10_000, async () => {
      const v = await versionOf('24.0.0.1');
      return v.network.type === 'DATACENTER' ? v : undefined;
    });
    assert.equal(listed.network.asn, before.network.asn, 'the owner stays');
    assert.match(listed.version, /; lists=1:[0-9a-f]{12}$/);
    assert.equal(umbra(dataDir, 'data', 'status', '--server', root).json.server.data_version, listed.version);
    // A rebuilt dataset file lands (renamed into place); SIGHUP swaps it in without a restart.
    const built = status.json.dataset.built_at as number;
    restampDataset(join(dataDir, 'ip-dataset.bin'), join(dataDir, 'ip-dataset.bin'), built + 86_400);
    server.kill('SIGHUP');
    const swapped = await until('the rebuilt dataset', 20_000, async () => {
      const v = await versionOf('8.8.8.8');
      return v.version !== listed.version ? v : undefined;
    });
    assert.equal(
      swapped.version,
      listed.version.replace(/^dataset=[^;]+/, `dataset=${new Date((built + 86_400) * 1000).toISOString().replace('.000Z', 'Z')}`),
    );
    assert.equal(swapped.network.asn, 15169);
    assert.equal((await versionOf('24.0.0.1')).network.type, 'DATACENTER', 'list overrides survive a dataset swap');

    server.kill('SIGTERM');
    assert.equal(await exited, 0, 'SIGTERM shuts down cleanly');
    const offline = umbra(dataDir, '--http-port', '1', 'data', 'status');
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(offline.json.server, null, 'no server runs on this data dir');
    assert.deepEqual(
      offline.json.lists.map((l: { kind: string; provider: string; cidrs: number }) => [l.kind, l.provider, l.cidrs]),
      [['DATACENTER', 'EXAMPLE_HOSTER', 1]],
    );
    assert.equal(offline.json.data_version, swapped.version);
    // Local mode (no server): the records land in the data dir's durable log.
    const local = umbra(dataDir, 'ingest', 'ja4t', file, '--local');
    assert.equal(local.code, 1, local.stderr);
    assert.equal(local.json.accepted, 1);
  });
});
