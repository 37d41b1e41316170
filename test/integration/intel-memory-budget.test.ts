import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { FileFeedLog } from '../../src/storage/embedded/file-feed-log.ts';
import { BIN } from '../helpers/umbra-cli.ts';

const TOKEN = 'intel-budget-operator-token';
const BUDGET_MB = 4;
/**
 * A V8 heap the Map-based index outgrew: with the real dataset loaded the server uses about 40 MB of
 * it, and each distinct address took about 650 bytes more, so the replay below (200,000 addresses,
 * about 130 MB) died of "heap out of memory" before serving.
 */
const HEAP_MB = 128;
const REPLAYED = 200_000;
const INGESTED = 60_000;

/** A public-looking IPv4 address per index, every one distinct (and one in ten IPv6). */
const address = (i: number) =>
  i % 10 === 9
    ? `2a02:6b8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`
    : `${20 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.7`;
const proxy = (i: number, s: number) =>
  `{"ip":"${address(i)}","provider":"BRIGHTDATA","type":"RESIDENTIAL_PROXY","timestamp":${s},"country_code":"US","asn":7922}`;

interface Server {
  base: string;
  key: string;
  /** stdout (the JSON log) and stderr lines */
  stderr: string[];
  exited: Promise<number | null>;
  proc: ChildProcess;
}

async function serve(dataDir: string): Promise<Server> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--demo', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_MB}`,
      UMBRA_INTEL_MEMORY_MB: String(BUDGET_MB),
      UMBRA_OPERATOR_TOKEN: TOKEN,
      UMBRA_LOG_LEVEL: 'warn',
      UMBRA_SIMULATOR_RATE: '0',
      UMBRA_EXPORT_JOBS: 'off',
    },
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  // The CLI's own lines are on stderr, the JSON log on stdout: both are kept, in arrival order.
  const stderr: string[] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => stderr.push(line));
  let base = '';
  let key = '';
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: proc.stderr! });
    rl.on('line', (line) => {
      stderr.push(line);
      base ||= /serving (http:\/\/\S+)\/api\/v4/.exec(line)?.[1] ?? '';
      key ||= /demo API key \(every scope\): (\S+)/.exec(line)?.[1] ?? '';
      if (base && key) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`server exited (${code}) before serving:\n${stderr.slice(-20).join('\n')}`)));
  });
  return { base, key, stderr, exited, proc };
}

async function intel(s: Server, ip: string): Promise<{ providers: Array<{ provider: string }>; categories: string[] }> {
  const res = await fetch(`${s.base}/api/v4/lookup/ip/${ip}`, { headers: { 'x-api-key': s.key } });
  assert.equal(res.status, 200, `lookup of ${ip}`);
  return ((await res.json()) as { intelligence: { providers: Array<{ provider: string }>; categories: string[] } }).intelligence;
}

/** The index's own figures (operator data status) and the Prometheus gauges must agree and stay inside the budget. */
async function checkBudget(s: Server): Promise<{ addresses: number; evictions: { addresses: number } }> {
  const res = await fetch(`${s.base}/internal/v1/data-status`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  const stats = (
    (await res.json()) as { intelligence: { addresses: number; bytes: number; budget_bytes: number; evictions: { addresses: number } } }
  ).intelligence;
  assert.equal(stats.budget_bytes, BUDGET_MB * 2 ** 20);
  assert.ok(stats.bytes <= stats.budget_bytes, `${stats.bytes} bytes held, budget ${stats.budget_bytes}`);
  const metrics = await (await fetch(`${s.base}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
  assert.ok(gauge('umbra_intel_bytes') <= gauge('umbra_intel_budget_bytes'), 'umbra_intel_bytes within umbra_intel_budget_bytes');
  assert.equal(gauge('umbra_intel_budget_bytes'), BUDGET_MB * 2 ** 20);
  assert.ok(gauge('umbra_intel_addresses') > 0);
  assert.match(metrics, /^umbra_intel_evictions_total\{kind="address"\} [1-9]/m);
  return stats;
}

async function stop(s: Server): Promise<void> {
  s.proc.kill('SIGTERM');
  assert.equal(await s.exited, 0, s.stderr.slice(-10).join('\n'));
}

describe('intelligence index memory budget (real process)', () => {
  it('should keep serving with more distinct addresses than its budget holds, stay inside it, and come back after a restart', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-intel-budget-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    // The feed log the start-up replay reads: REPLAYED distinct proxy addresses over the last ten hours, oldest first.
    const nowS = Math.floor(Date.now() / 1000);
    const firstS = nowS - 10 * 3600;
    const log = new FileFeedLog(join(dataDir, 'feeds'));
    for (let i = 0; i < REPLAYED; i += 10_000) {
      const entries = [];
      for (let k = i; k < i + 10_000; k++) {
        const s = firstS + Math.floor((k * 9 * 3600) / REPLAYED);
        entries.push({ timeMs: s * 1000, line: proxy(k, s) });
      }
      await log.append('proxies', entries);
    }
    await log.close();

    const first = await serve(dataDir);
    t.after(() => first.proc.kill('SIGKILL'));
    // The JSON log is written asynchronously: give the warning a moment to arrive.
    for (let i = 0; i < 50 && !first.stderr.some((l) => l.includes('reached its memory budget')); i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      first.stderr.some((l) => l.includes('intelligence index reached its memory budget')),
      `warned once it had to evict:\n${first.stderr.join('\n')}`,
    );
    assert.equal(first.stderr.filter((l) => l.includes('reached its memory budget')).length, 1);
    assert.equal((await fetch(`${first.base}/health`)).status, 200);
    const afterReplay = await checkBudget(first);
    assert.ok(afterReplay.addresses < REPLAYED && afterReplay.evictions.addresses > 0, `${afterReplay.addresses} held`);
    // The replay keeps the most recent: the last records are known, the first ones answer as never seen.
    assert.deepEqual((await intel(first, address(REPLAYED - 1))).categories, ['RESIDENTIAL_PROXY']);
    assert.deepEqual(
      (await intel(first, address(REPLAYED - 2))).providers.map((p) => p.provider),
      ['BRIGHTDATA'],
    );
    // The same as an address of the same network that no record ever named (its risk_score is the network's prior).
    const evicted = await intel(first, address(0));
    assert.deepEqual([evicted.categories, evicted.providers], [[], []]);
    assert.deepEqual(evicted, await intel(first, '20.0.0.8'));

    // Live ingestion through the operator endpoint: more new addresses, still inside the budget.
    const body = Array.from({ length: INGESTED }, (_, k) => proxy(REPLAYED + k, nowS - 60)).join('\n');
    const ingest = await fetch(`${first.base}/internal/v1/ingest/proxies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    assert.equal(ingest.status, 200, await ingest.clone().text());
    assert.equal(((await ingest.json()) as { accepted: number }).accepted, INGESTED);
    assert.deepEqual((await intel(first, address(REPLAYED + INGESTED - 1))).categories, ['RESIDENTIAL_PROXY']);
    const afterIngest = await checkBudget(first);
    assert.ok(afterIngest.evictions.addresses > afterReplay.evictions.addresses);
    await stop(first);

    // A restart replays the same log through the same bounded index and serves again.
    const second = await serve(dataDir);
    t.after(() => second.proc.kill('SIGKILL'));
    assert.equal((await fetch(`${second.base}/health`)).status, 200);
    await checkBudget(second);
    assert.deepEqual((await intel(second, address(REPLAYED + INGESTED - 1))).categories, ['RESIDENTIAL_PROXY']);
    assert.deepEqual((await intel(second, address(0))).categories, []);
    await stop(second);
  });
});
