import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { OWNER_FILE } from '../../src/storage/embedded/data-dir-lock.ts';
import { sampleRecords } from '../helpers/feed-fixtures.ts';
import { startServe } from '../helpers/serve-process.ts';
import { openStream } from '../helpers/stream-client.ts';
import { BIN, umbraCli } from '../helpers/umbra-cli.ts';

async function dataDirWithDataset(t: { after(fn: () => void): void }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-owner-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(await ensureRealDataset(), join(dir, 'ip-dataset.bin'));
  return dir;
}

/** Runs `umbra serve` expecting it to refuse to start: exit code and stderr. */
function serveRefused(dataDir: string, args: string[]): { code: number | null; stderr: string; ms: number } {
  const started = Date.now();
  const r = spawnSync(process.execPath, [BIN, 'serve', '--data-dir', dataDir, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off' },
  });
  return { code: r.status, stderr: r.stderr, ms: Date.now() - started };
}

describe('One server per data dir', () => {
  it('should refuse a second server naming the first, route CLI verbs to the running one, and free the dir when it dies', async (t) => {
    const dataDir = await dataDirWithDataset(t);
    const first = await startServe(t, dataDir, ['--demo']);
    const key = (await first.line(/demo API key \(every scope\): (\S+)/))[1]!;

    const second = serveRefused(dataDir, ['--http-port', '0', '--grpc-port', '0']);
    assert.equal(second.code, 2, second.stderr);
    const lines = second.stderr.trim().split('\n');
    assert.equal(lines.length, 1, second.stderr);
    assert.match(
      lines[0]!,
      new RegExp(
        `^umbra: the data dir .* is in use by umbra serve \\(pid ${first.proc.pid}, ${first.origin}, gRPC 127\\.0\\.0\\.1:\\d+, since ` +
          `.*\\); run one server per data dir`,
      ),
    );

    // `umbra ingest` finds the running server from the data dir (its port is not the default one).
    const stream = await openStream(first.port, '/api/v4/feeds/proxies/stream', key);
    const file = join(dataDir, 'proxies.ndjson');
    const sentAt = Date.now();
    writeFileSync(file, `${JSON.stringify({ ...sampleRecords(sentAt).proxies, provider: 'OWNER_TEST' })}\n`);
    const sent = umbraCli(dataDir, ['ingest', 'proxies', file, '--idempotency-key', 'owner-test-1']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stderr, new RegExp(`sending to ${first.origin}`));
    const [record] = (await stream.records(1, 10_000)) as Array<{ provider: string }>;
    assert.equal(record!.provider, 'OWNER_TEST', 'the running server published it at once');
    // Sent again under its key (a script that lost the answer): the server's first answer, nothing stored.
    const resent = umbraCli(dataDir, ['ingest', 'proxies', file, '--idempotency-key', 'owner-test-1']);
    assert.equal(resent.code, 0, resent.stderr);
    assert.deepEqual([resent.json.accepted, resent.json.replayed], [1, true]);
    assert.equal(umbraCli(dataDir, ['ingest', 'proxies', file, '--idempotency-key', 'has space']).code, 2, 'a bad key is refused');
    stream.close();
    const local = umbraCli(dataDir, ['ingest', 'proxies', file, '--local']);
    assert.equal(local.code, 2);
    assert.match(local.stderr, /a server runs on this data dir: umbra serve \(pid \d+.*records must go through it/);
    const status = umbraCli(dataDir, ['data', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.json.server.url, first.origin);

    // Export jobs run in the server that owns the data dir, never in a second process beside it.
    // An hour before the first record, not before now: across an hour boundary both would fall in one hour.
    const hourAgo = sentAt - 3_600_000;
    const late = join(dataDir, 'late.ndjson');
    writeFileSync(late, `${JSON.stringify({ ...sampleRecords(hourAgo).proxies, provider: 'OWNER_HOURLY' })}\n`);
    assert.equal(umbraCli(dataDir, ['ingest', 'proxies', late]).code, 0);
    const iso = new Date(hourAgo).toISOString();
    const job = umbraCli(dataDir, ['exports', 'run-hourly', '--feed', 'proxies', '--date', iso.slice(0, 10), '--hour', iso.slice(11, 13)]);
    assert.equal(job.code, 0, job.stderr);
    assert.match(job.stderr, new RegExp(`asking the server at ${first.origin}`));
    assert.deepEqual(
      job.json.map((x: { feed: string; id: string; rows: number }) => [x.feed, x.id, x.rows]),
      [['proxies', `${iso.slice(0, 10)}/${Number(iso.slice(11, 13))}`, 1]],
    );
    const bad = umbraCli(dataDir, ['exports', 'run-hourly', '--feed', 'proxies', '--date', iso.slice(0, 10), '--hour', '24']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /hour/);

    // kill -9: the kernel frees the data dir; the next server starts at once.
    first.proc.kill('SIGKILL');
    await first.exited;
    assert.equal(umbraCli(dataDir, ['data', 'status']).json.server, null);
    // Without a server, `--local` keeps the same keys in the data dir: the key the server stored is known.
    const offline = umbraCli(dataDir, ['ingest', 'proxies', file, '--local', '--idempotency-key', 'owner-test-1']);
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(offline.json.replayed, true);
    const third = await startServe(t, dataDir);
    assert.ok(third.port > 0);
  });

  it('should end with one line and exit code 2, leaving nothing running, when the HTTP or gRPC port is taken', async (t) => {
    const taken = await startServe(t, await dataDirWithDataset(t));
    const grpcPort = Number((await taken.line(/ExampleService on \S+:(\d+)/))[1]);
    for (const [args, what, port] of [
      [['--http-port', String(taken.port), '--grpc-port', '0'], 'HTTP', taken.port],
      [['--http-port', '0', '--grpc-port', String(grpcPort)], 'gRPC', grpcPort],
    ] as const) {
      const dir = await dataDirWithDataset(t);
      const r = serveRefused(dir, [...args]);
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('umbra:'));
      assert.deepEqual(lines, [
        `umbra: cannot listen for ${what} on 127.0.0.1:${port}: the port is in use by another program; choose another port with ` +
          `--${what.toLowerCase()}-port (UMBRA_${what.toUpperCase()}_PORT)`,
      ]);
      assert.doesNotMatch(r.stderr, /serving|\n\s+at /, 'never said it serves, no stack trace');
      assert.equal(existsSync(join(dir, OWNER_FILE)), false, 'the data dir was released');
    }
  });
});
