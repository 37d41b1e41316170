import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { startServe } from '../helpers/serve-process.ts';
import { umbraCli } from '../helpers/umbra-cli.ts';

const LOCKER = join(import.meta.dirname, '../helpers/hold-db-lock.ts');

/** Another process holding umbra.db's lock for `seconds`; resolves once it holds it. */
async function holdLock(t: TestContext, dataDir: string, mode: 'write', seconds: number): Promise<{ released: Promise<void> }> {
  const p = spawn(process.execPath, ['--import', 'tsx', LOCKER, join(dataDir, 'umbra.db'), mode, String(seconds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => void p.kill('SIGKILL'));
  const lines = createInterface({ input: p.stdout! });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (l) => (l === 'locked' ? resolve() : l === 'released' ? release() : undefined));
    p.once('exit', (code) => (code === 0 ? release() : reject(new Error(`locker exited ${code}`))));
  });
  return { released };
}

const timed = async (f: () => Promise<Response>) => {
  const start = performance.now();
  const res = await f();
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - start, res };
};

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

describe('The embedded database locked by another process', () => {
  it('should keep serving lookups, health and account info without a stall while another process holds the write lock, and lose no charge', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-lock-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    assert.equal(umbraCli(dataDir, ['admin', 'org', 'create', '--name', 'Lock', '--credits', '100000']).code, 0);
    assert.equal(
      umbraCli(dataDir, ['admin', 'limits', 'set', '--org', 'Lock', '--bucket', 'lookup', '--rate', '100000', '--burst', '100000']).code,
      0,
    );
    // /account/me is asked every 50 lookups: on a fast machine more often than its default 10/s.
    assert.equal(
      umbraCli(dataDir, ['admin', 'limits', 'set', '--org', 'Lock', '--bucket', 'account', '--rate', '100000', '--burst', '100000']).code,
      0,
    );
    const warm = umbraCli(dataDir, ['admin', 'key', 'create', '--org', 'Lock', '--email', 'a@lock.test', '--scopes', 'BASIC']).json
      .key as string;
    const cold = umbraCli(dataDir, ['admin', 'key', 'create', '--org', 'Lock', '--email', 'b@lock.test', '--scopes', 'BASIC']).json
      .key as string;
    const server = await startServe(t, dataDir);
    const api = (path: string, key?: string) => fetch(`${server.origin}/api/v4${path}`, { headers: key ? { 'x-api-key': key } : {} });
    let charged = 0;
    let n = 0;
    const lookup = async () => {
      const r = await timed(() => api(`/lookup/ip/8.8.${(n >>> 8) & 255}.${n++ & 255}`, warm));
      if (r.status === 200) charged++;
      return r;
    };
    assert.equal((await lookup()).status, 200);

    // 1. Another writer's transaction: reads go on, writes (the credit flush) must wait.
    const writer = await holdLock(t, dataDir, 'write', 6);
    const lat: number[] = [];
    const slow: number[] = [];
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      const r = await lookup();
      assert.equal(r.status, 200);
      lat.push(r.ms);
      if (lat.length % 50 === 0) {
        for (const path of ['/health', '/account/me']) {
          const other = await timed(() => (path === '/health' ? fetch(`${server.origin}/health`) : api(path, warm)));
          slow.push(other.ms);
          if (path === '/account/me') assert.equal(other.status, 200);
        }
      }
    }
    await writer.released;
    assert.ok(lat.length > 100, `lookups kept flowing: ${lat.length} in 5 s`);
    assert.ok(p99(lat) < 250, `lookup p99 ${p99(lat).toFixed(1)} ms while another process held the write lock`);
    assert.ok(Math.max(...slow) < 2_000, `health and account/me answered within 2 s (max ${Math.max(...slow).toFixed(0)} ms)`);
    t.diagnostic(`write lock held 6 s: ${lat.length} lookups, p99 ${p99(lat).toFixed(2)} ms, max ${Math.max(...lat).toFixed(2)} ms`);

    // 2. What needs the database only to read (a key never seen, the team's balance) is served during
    // another writer's transaction too: readers never wait for a writer.
    const again = await holdLock(t, dataDir, 'write', 4);
    const c = await timed(() => api('/account/me', cold));
    assert.equal(c.status, 200);
    assert.ok(c.ms < 2_000, `a key never seen before was verified in ${c.ms.toFixed(0)} ms`);
    await again.released;

    // 3. Back to normal by itself: every charge reached the database.
    let me: { lookup_quota: { credits: number } } | undefined;
    for (let i = 0; i < 50; i++) {
      const r = await api('/account/me', cold);
      if (r.status === 200) {
        me = (await r.json()) as typeof me;
        if (me!.lookup_quota.credits === 100_000 - charged) break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(me?.lookup_quota.credits, 100_000 - charged, 'balance = start - every lookup served');
    const logged = server.stdout.join('\n');
    assert.match(logged, /embedded database unavailable/);
    assert.match(logged, /credit charges cannot be written yet/);
    // The database itself agrees once the server stops.
    server.proc.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const shown = umbraCli(dataDir, ['admin', 'org', 'show', 'Lock']);
    assert.equal(shown.json.credits.balance, 100_000 - charged);
  });
});
