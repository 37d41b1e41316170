// Requests/s the sensor's HTTP listener captures (each record written to the spool before its answer,
// fsynced right after, then uploaded to a real umbra server), against a bare node:http server answering
// the same decoy page and recording nothing, in alternating rounds of wrk (a C client in its own
// process). After the load, every answered request must have reached the server: the bench waits for
// the spool to drain and reports records lost (answered by the listener minus stored by the server, as
// the server's own metrics count them), which must be 0, and the rate records went into the server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DEFAULT_DECOY_BODY } from '../src/modules/sensor/sensor-config.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';

const WRK = process.env.UMBRA_BENCH_WRK ?? '/usr/bin/wrk';
const BIN = join(import.meta.dirname, '../bin/umbra.js');
const TOKEN = 'bench-sensor-operator-token-0123456789';

/** Spawns a process and resolves with the first stderr (or stdout) line matching `re`. */
function started(child: ChildProcess, re: RegExp, stream: 'stdout' | 'stderr'): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child[stream]! }).on('line', (l) => {
      const m = re.exec(l);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${re}`)));
  });
}

/** wrk for `seconds` against `url`: requests answered and requests/s. */
function wrk(url: string, seconds: number, connections: number): { requests: number; rps: number; errors: string } {
  const r = spawnSync(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, url], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const requests = Number(/(\d+) requests in/.exec(r.stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const errors = /Socket errors:.*|Non-2xx.*/.exec(r.stdout)?.[0] ?? 'none';
  return { requests, rps, errors };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchSensor(seconds = 5, rounds = 3, connections = 16): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-sensor-'));
  const children: ChildProcess[] = [];
  try {
    const dataDir = join(dir, 'data');
    spawnSync('mkdir', ['-p', dataDir]);
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const env = {
      ...process.env,
      UMBRA_OPERATOR_TOKEN: TOKEN,
      UMBRA_LOG_LEVEL: 'warn',
      UMBRA_SIMULATOR_RATE: '0',
      UMBRA_EXPORT_JOBS: 'off',
    };
    // UMBRA_BENCH_CPU_PROF=<dir>: the server and the sensor write a V8 CPU profile there when they stop.
    const prof = process.env.UMBRA_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UMBRA_BENCH_CPU_PROF}`] : [];
    const server = spawn(process.execPath, [...prof, BIN, 'serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(server);
    const serverPort = Number((await started(server, /serving http:\/\/[^:]+:(\d+)\/api\/v4/, 'stderr'))[1]);

    const config = {
      server: `http://127.0.0.1:${serverPort}`,
      identity: { proxy_ip: '198.51.100.1' },
      domains: ['bench.example'],
      listeners: [{ protocol: 'http', bind: '127.0.0.1', port: 0, public_port: 80, max_connections_per_source: 1024 }],
      spool: { dir: join(dir, 'spool') },
      // UMBRA_BENCH_SENSOR_BATCH=<n>: the sensor's upload.batch_records (the default otherwise).
      upload: process.env.UMBRA_BENCH_SENSOR_BATCH ? { batch_records: Number(process.env.UMBRA_BENCH_SENSOR_BATCH) } : {},
      health: { port: 0 },
    };
    writeFileSync(join(dir, 'sensor.yaml'), JSON.stringify(config));
    const sensor = spawn(process.execPath, [...prof, BIN, 'sensor', '--config', join(dir, 'sensor.yaml')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(sensor);
    const lines: string[] = [];
    createInterface({ input: sensor.stderr! }).on('line', (l) => lines.push(l));
    const healthPort = Number((await started(sensor, /health on http:\/\/.*:(\d+)\/health/, 'stderr'))[1]);
    const sensorPort = Number(/listening on .*:(\d+), public port/.exec(lines.find((l) => l.includes('listening on'))!)![1]);

    // The baseline: node:http answering the same page, recording nothing.
    const bare = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'servers/bare-server.ts'), DEFAULT_DECOY_BODY, '{"server":"nginx/1.24.0"}'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(bare);
    const barePort = Number((await started(bare, /"port":(\d+)/, 'stdout'))[1]);

    type Health = {
      listeners: Array<{ records: number; dropped: number }>;
      spool: { records: number };
      upload: Array<{ feed: string; uploaded: number; rejected: number }>;
    };
    // Once more on a failure: a round lasts as long as node's keep-alive timeout, so the pooled
    // connection may be closed by the server just as it is reused.
    const get = async (url: string): Promise<Response> => fetch(url).catch(() => fetch(url));
    const health = async () => (await (await get(`http://127.0.0.1:${healthPort}/health`)).json()) as Health;
    const uploaded = async () => (await health()).upload.find((u) => u.feed === 'honeypot_http')!.uploaded;
    // What the server itself counts as stored (durable in its feed log and published), not what the sensor was told.
    const stored = async () => {
      const text = await (await get(`http://127.0.0.1:${serverPort}/metrics`)).text();
      return Number(/^umbra_feed_records_total\{feed="honeypot_http",outcome="accepted"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };

    const bareRps: number[] = [];
    const sensorRps: number[] = [];
    let answered = 0;
    let errors = 'none';
    let loadUploaded = 0;
    let loadMs = 0;
    // Both warmed up alike (the sensor's first round ran at half the rate of the next ones without).
    wrk(`http://127.0.0.1:${barePort}/`, 1, connections);
    wrk(`http://127.0.0.1:${sensorPort}/`, 1, connections);
    for (let i = 0; i < rounds; i++) {
      bareRps.push(wrk(`http://127.0.0.1:${barePort}/wp-login.php`, seconds, connections).rps);
      const before = await uploaded();
      const t0 = Date.now();
      const s = wrk(`http://127.0.0.1:${sensorPort}/wp-login.php`, seconds, connections);
      loadMs += Date.now() - t0;
      loadUploaded += (await uploaded()) - before;
      sensorRps.push(s.rps);
      answered += s.requests;
      if (s.errors !== 'none') errors = s.errors;
    }
    // Every answered request must reach the server: wait for the spool to drain.
    const drainStart = Date.now();
    const drainFrom = await uploaded();
    let h: Health;
    for (;;) {
      h = await health();
      if (h.spool.records === 0) break;
      if (Date.now() - drainStart > 300_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const drainMs = Date.now() - drainStart;
    const http = h.upload.find((u) => u.feed === 'honeypot_http')!;
    const serverStored = await stored();
    // Every request the listener answered was recorded (kept, or counted as dropped).
    const listenerAnswered = h.listeners[0]!.records + h.listeners[0]!.dropped;
    const b = median(bareRps);
    const s = median(sensorRps);
    return {
      'bare node:http decoy (req/s, median)': Math.round(b),
      'sensor HTTP captured + spooled (req/s)': Math.round(s),
      'ratio sensor / bare (target >= 0.5)': (s / b).toFixed(2),
      'rounds (bare | sensor req/s)': `${bareRps.map(Math.round).join(',')} | ${sensorRps.map(Math.round).join(',')}`,
      // wrk does not count requests still in flight when a run ends; the sensor recorded those too.
      'requests answered (as wrk counts them)': answered,
      'requests answered by the listener': listenerAnswered,
      'records dropped by the sensor (spool full/failed)': h.listeners[0]!.dropped,
      'upload while under load (records/s the server stored)': Math.round((loadUploaded * 1000) / loadMs),
      'upload while draining after (records/s stored)': Math.round(((http.uploaded - drainFrom) * 1000) / Math.max(drainMs, 1)),
      'spool drain after the load (s)': (drainMs / 1000).toFixed(1),
      'records the sensor was told were stored': http.uploaded,
      'records stored (server: umbra_feed_records_total)': serverStored,
      'records rejected by the server': http.rejected,
      'records lost (answered by listener - stored)': listenerAnswered - serverStored,
      'wrk socket errors / non-2xx': errors,
    };
  } finally {
    if (process.env.UMBRA_BENCH_CPU_PROF) {
      // A profile is written on a clean exit only.
      await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r).kill('SIGTERM')) : undefined)));
    }
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
