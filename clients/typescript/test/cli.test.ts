import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUmbra, type UmbraUnderTest } from './umbra-server.ts';

/** The compiled bin, as `npm install @umbra/client` links it (scripts/run-tests.mjs builds it first). */
const BIN = join(import.meta.dirname, '../dist/cli.js');

function cli(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  p.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  p.stdin.end(input ?? '');
  return new Promise((resolve) => p.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

describe('umbra-client (the command line) against a real umbra server', () => {
  let u: UmbraUnderTest;
  let poorKey = '';
  const cleanups: Array<() => unknown> = [];
  const dir = mkdtempSync(join(tmpdir(), 'umbra-client-cli-'));
  before(async () => {
    u = await startUmbra({ after: (fn: () => unknown) => void cleanups.push(fn) } as never, (admin) => {
      admin('org', 'create', '--name', 'poor', '--credits', '0');
      poorKey = admin('key', 'create', '--org', 'poor', '--email', 'p@cli.test', '--scopes', 'BASIC').key;
    });
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = (args: string[], input?: string, key = u.demoKey) => cli(['--base-url', u.origin, ...args], { UMBRA_API_KEY: key }, input);

  it('should show the account as JSON or a table', async () => {
    const j = await run(['--json', 'account']);
    assert.equal(j.code, 0, j.stderr);
    assert.ok(JSON.parse(j.stdout).scopes.includes('BASIC'));
    const t = await run(['account']);
    assert.equal(t.code, 0);
    assert.match(t.stdout, /^name\s+email\s+organization/m);
    assert.match(t.stdout, /scopes: .*BASIC/);
  });

  it('should look addresses up from arguments and from stdin in batches, exit 1 when some were invalid', async () => {
    const a = await run(['--json', 'lookup', '8.8.8.8', '1.1.1.1']);
    assert.equal(a.code, 0, a.stderr);
    assert.deepEqual(
      JSON.parse(a.stdout).results.map((r: any) => r.ip),
      ['8.8.8.8', '1.1.1.1'],
    );
    const ips = Array.from({ length: 1500 }, (_, i) => `10.1.${i >> 8}.${i & 255}`);
    const s = await run(['--json', 'lookup'], `${ips.join('\n')}\nnot-an-ip\n`);
    assert.equal(s.code, 1, 'partly done: one input was invalid');
    const body = JSON.parse(s.stdout);
    assert.equal(body.results.length, 1501);
    assert.deepEqual(body.invalid, ['not-an-ip']);
    assert.equal(body.credits, 900 + 450);
    const t = await run(['lookup', '8.8.8.8']);
    assert.match(t.stdout, /^ip\s+asn\s+isp/m);
    assert.match(t.stdout, /8\.8\.8\.8\s+15169/);
  });

  it('should look a domain up', async () => {
    const d = await run(['--json', 'lookup', 'domain', 'example.com', '--limit', '3']);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(JSON.parse(d.stdout).data.domain, 'example.com');
  });

  it('should list, describe and download snapshots with the checksum verified', async () => {
    const l = await run(['--json', 'feeds', 'list', 'anonymizers']);
    assert.equal(l.code, 0, l.stderr);
    const [first] = JSON.parse(l.stdout);
    const m = await run(['--json', 'feeds', 'meta', 'anonymizers', first.id]);
    assert.equal(m.code, 0, m.stderr);
    const meta = JSON.parse(m.stdout);
    assert.equal(meta.checksum, first.checksum);
    const file = join(dir, 'snap.parquet');
    const d = await run(['--json', 'feeds', 'download', 'anonymizers', first.id, file]);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(JSON.parse(d.stdout).verified, true);
    assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), meta.checksum);
    u.storage.mode = 'corrupt';
    const bad = await run(['feeds', 'download', 'anonymizers', first.id, join(dir, 'bad.parquet')]);
    u.storage.mode = 'pass';
    assert.equal(bad.code, 7, 'checksum mismatch');
    assert.match(bad.stderr, /does not match its metadata/);
    const missing = await run(['feeds', 'meta', 'anonymizers', '2020-01-01']);
    assert.equal(missing.code, 5);
  });

  it('should stream NDJSON across the server closes, up to --max-events or --duration', async () => {
    const s = await run(['stream', 'honeypot_dns', '--max-events', '5']);
    assert.equal(s.code, 0, s.stderr);
    const lines = s.stdout.trim().split('\n');
    assert.equal(lines.length, 5);
    for (const l of lines) assert.equal(typeof JSON.parse(l).qname, 'string');
    const started = Date.now();
    const d = await run(['stream', 'proxies', '--duration', '3']);
    assert.equal(d.code, 0, d.stderr);
    assert.ok(Date.now() - started < 8000);
    assert.ok(d.stdout.trim().split('\n').length > 3);
    assert.match(d.stderr, /closed, reconnecting in 0 ms/, 'the server closed the stream (1.5 s lifetime) and it went on');
  });

  it('should tell failures apart by exit code', async () => {
    assert.equal((await run(['account'], undefined, '00000000-0000-4000-8000-000000000000')).code, 3);
    const p = await run(['--json', 'lookup', '8.8.8.8'], undefined, poorKey);
    assert.equal(p.code, 4);
    assert.equal(JSON.parse(p.stderr).status, 402);
    assert.equal((await run(['feeds', 'list', 'nosuchfeed'])).code, 2);
    assert.equal((await run(['frobnicate'])).code, 2);
    assert.equal((await cli(['--base-url', 'http://127.0.0.1:1', 'lookup', 'domain', 'x.com'], { UMBRA_API_KEY: 'k' })).code, 6);
  });
});
