// The processes a sensor bench measures: a real `umbra serve` on the packaged dataset and `umbra sensor`
// uploading to it, each in its own process (the built dist/, so `npm run build` first).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

const BIN = join(import.meta.dirname, '../bin/umbra.js');
const TOKEN = 'bench-sensor-operator-token-0123456789';

/** Resolves with the first line of `child`'s `stream` that `re` matches; rejects if it exits first. */
export function started(child: ChildProcess, re: RegExp, stream: 'stdout' | 'stderr'): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child[stream]! }).on('line', (l) => {
      const m = re.exec(l);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${re}`)));
  });
}

export interface Health {
  listeners: Array<{ records: number; http_records?: number; dropped: number }>;
  spool: { records: number };
  upload: Array<{ feed: string; uploaded: number; rejected: number }>;
}

/**
 * A real umbra server and `umbra sensor` with `listeners` (on 127.0.0.1, ports chosen by the system),
 * each in its own process, in `dir`; `children` collects both for the caller to stop.
 */
export async function startStack(
  dir: string,
  children: ChildProcess[],
  listeners: Record<string, unknown> | Array<Record<string, unknown>>,
  domains = ['bench.example'],
) {
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
  // UMBRA_BENCH_CPU_PROF=<dir>: the server and the sensor write a V8 CPU profile there when they stop
  // (read it with bench/cpu-profile.ts), for finding where their time goes.
  const prof = process.env.UMBRA_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UMBRA_BENCH_CPU_PROF}`] : [];
  const server = spawn(
    process.execPath,
    [...prof, SEMI_SPACE_FLAG, BIN, 'serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(server);
  const serverPort = Number((await started(server, /serving http:\/\/[^:]+:(\d+)\/api\/v4/, 'stderr'))[1]);

  const config = {
    server: `http://127.0.0.1:${serverPort}`,
    identity: { proxy_ip: '198.51.100.1' },
    domains,
    listeners: (Array.isArray(listeners) ? listeners : [listeners]).map((l) => ({
      bind: '127.0.0.1',
      port: 0,
      max_connections_per_source: 1024,
      ...l,
    })),
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
  /** The port a listener bound, by its name (e.g. dns-53). */
  const portOf = (name: string) => Number(new RegExp(`${name} \\(\\w+\\) listening on .*:(\\d+), public port`).exec(lines.join('\n'))![1]);
  const health = async () => (await (await fetch(`http://127.0.0.1:${healthPort}/health`)).json()) as Health;
  /** Waits for the spool to drain (every captured record uploaded, or 120 s); the health then and the wait. */
  const drained = async () => {
    const drainStart = Date.now();
    let h: Health;
    for (;;) {
      h = await health();
      if (h.spool.records === 0 || Date.now() - drainStart > 120_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return { health: h, seconds: ((Date.now() - drainStart) / 1000).toFixed(1) };
  };
  /** Stops the sensor with SIGTERM and waits for it, so that its CPU profile is written. */
  const stopSensor = () =>
    new Promise<void>((resolve) => {
      if (sensor.exitCode !== null) return resolve();
      sensor.once('exit', () => resolve());
      sensor.kill('SIGTERM');
      setTimeout(resolve, 15_000).unref();
    });
  return { sensorPort, portOf, serverPort, healthPort, health, drained, stopSensor, sensorPid: sensor.pid!, serverPid: server.pid! };
}
