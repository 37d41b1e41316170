// Queries/s the sensor's DNS listener answers over UDP with each query recorded (fsynced to the spool
// before its answer, then uploaded to a real umbra server), against a bare UDP server in its own
// process that answers NXDOMAIN without parsing or recording anything, in alternating rounds of
// dnsperf (a C load generator in its own process; Debian package dnsperf). Many distinct names (a
// mix of types, decoy and other names), so nothing is answered from a cache. After the load the bench
// waits for the spool to drain and counts records lost: answered but not captured, and captured but
// not uploaded. One extra round measures DNS over TLS (dnsperf -m dot) on the same sensor.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { listenerRates } from './listener-rates.ts';

const DNSPERF = process.env.UMBRA_BENCH_DNSPERF ?? '/usr/bin/dnsperf';
const BIN = join(import.meta.dirname, '../bin/umbra.js');
const TOKEN = 'bench-sensor-dns-operator-token-0123456789';
const DOMAIN = 'bench-dns.example';
/** Queries dnsperf keeps in flight (its -q); a scanner's flood waits for no answer at all. */
const OUTSTANDING = Number(process.env.UMBRA_BENCH_DNSPERF_OUTSTANDING ?? 256);

/** Resolves with the first line of the child's `stream` matching `re`. */
function started(child: ChildProcess, re: RegExp, stream: 'stdout' | 'stderr'): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child[stream]! }).on('line', (l) => {
      const m = re.exec(l);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${re}`)));
  });
}

/**
 * dnsperf's input: `count` distinct names, a scanner's mix of types (A 50 %, AAAA 20 %, TXT 10 %, MX
 * 10 %, NS 5 %, ANY 5 %, refused), half under the decoy domain, half random-looking names elsewhere.
 */
export function queryMix(count: number): string {
  const types = ['A', 'A', 'A', 'A', 'A', 'AAAA', 'AAAA', 'TXT', 'MX', 'NS', 'ANY', 'A', 'A', 'A', 'A', 'A', 'AAAA', 'AAAA', 'TXT', 'MX'];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = i % 2 === 0 ? `h${i.toString(36)}.${DOMAIN}` : `x${((i * 2_654_435_761) >>> 0).toString(36)}.scan${i % 997}.example.net`;
    lines.push(`${name} ${types[i % types.length]}`);
  }
  return `${lines.join('\n')}\n`;
}

interface PerfResult {
  sent: number;
  completed: number;
  lost: number;
  qps: number;
}

/** dnsperf for `seconds` against 127.0.0.1:`port`. */
function dnsperf(file: string, port: number, seconds: number, mode: 'udp' | 'dot' = 'udp'): PerfResult {
  const r = spawnSync(
    DNSPERF,
    [
      '-m',
      mode,
      '-s',
      '127.0.0.1',
      '-p',
      String(port),
      '-d',
      file,
      '-l',
      String(seconds),
      '-c',
      '16',
      '-q',
      String(OUTSTANDING),
      '-t',
      '2',
      '-T',
      '1',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`dnsperf failed (${r.status}): ${r.stderr}${r.stdout}`);
  const n = (re: RegExp) => Number(re.exec(r.stdout)?.[1]);
  return {
    sent: n(/Queries sent:\s+(\d+)/),
    completed: n(/Queries completed:\s+(\d+)/),
    lost: n(/Queries lost:\s+(\d+)/),
    qps: n(/Queries per second:\s+([\d.]+)/),
  };
}

export async function benchSensorDns(seconds = 5, rounds = 3): Promise<Record<string, number | string>> {
  if (spawnSync(DNSPERF, ['-h']).error) throw new Error(`${DNSPERF} is not installed: apt-get install dnsperf`);
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-sensor-dns-'));
  const children: ChildProcess[] = [];
  try {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryMix(500_000));
    const env = {
      ...process.env,
      UMBRA_OPERATOR_TOKEN: TOKEN,
      UMBRA_LOG_LEVEL: 'warn',
      UMBRA_SIMULATOR_RATE: '0',
      UMBRA_EXPORT_JOBS: 'off',
    };
    const server = spawn(process.execPath, [BIN, 'serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(server);
    const serverPort = Number((await started(server, /serving http:\/\/[^:]+:(\d+)\/api\/v4/, 'stderr'))[1]);

    // One source (127.0.0.1) sends everything: its rate limit is lifted for the measurement.
    const unlimited = {
      bind: '127.0.0.1',
      port: 0,
      answer: 'decoy',
      decoy_ipv4: '198.51.100.80',
      rate_per_source: 1e9,
      burst_per_source: 1e9,
    };
    const config = {
      server: `http://127.0.0.1:${serverPort}`,
      identity: { proxy_ip: '198.51.100.1' },
      domains: [DOMAIN],
      listeners: [
        { protocol: 'dns', public_port: 53, ...unlimited },
        { protocol: 'dns', tls: true, public_port: 853, max_connections_per_source: 64, ...unlimited },
      ],
      spool: { dir: join(dir, 'spool') },
      health: { port: 0 },
    };
    writeFileSync(join(dir, 'sensor.yaml'), JSON.stringify(config));
    // UMBRA_BENCH_CPU_PROF=<dir>: the sensor writes a V8 CPU profile there when it stops (bench/cpu-profile.ts reads it).
    const prof = process.env.UMBRA_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UMBRA_BENCH_CPU_PROF}`] : [];
    const sensor = spawn(process.execPath, [...prof, BIN, 'sensor', '--config', join(dir, 'sensor.yaml')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(sensor);
    const lines: string[] = [];
    createInterface({ input: sensor.stderr! }).on('line', (l) => lines.push(l));
    const healthPort = Number((await started(sensor, /health on http:\/\/.*:(\d+)\/health/, 'stderr'))[1]);
    const portOf = (name: string) => Number(new RegExp(`${name} \\(dns\\) listening on .*:(\\d+), public port`).exec(lines.join('\n'))![1]);
    const sensorPort = portOf('dns-53');
    const dotPort = portOf('dot-853');

    const bare = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'servers/bare-dns-server.ts')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(bare);
    const barePort = Number((await started(bare, /"port":(\d+)/, 'stdout'))[1]);

    const bareQps: number[] = [];
    const sensorQps: number[] = [];
    let answered = 0;
    let unanswered = 0;
    dnsperf(queries, barePort, 1); // warm-up
    for (let i = 0; i < rounds; i++) {
      bareQps.push(dnsperf(queries, barePort, seconds).qps);
      const s = dnsperf(queries, sensorPort, seconds);
      sensorQps.push(s.qps);
      answered += s.completed;
      unanswered += s.lost;
    }
    const dot = dnsperf(queries, dotPort, seconds, 'dot');

    const drainStart = Date.now();
    let health: {
      listeners: Array<{ name: string; records: number; dropped: number }>;
      spool: { records: number };
      upload: Array<{ feed: string; uploaded: number; rejected: number }>;
    };
    for (;;) {
      health = (await (await fetch(`http://127.0.0.1:${healthPort}/health`)).json()) as typeof health;
      if (health.spool.records === 0 || Date.now() - drainStart > 180_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (prof.length) {
      // A profile is written at a clean exit only.
      const exited = new Promise((r) => sensor.once('exit', r));
      sensor.kill('SIGTERM');
      await exited;
    }
    const udp = health.listeners.find((l) => l.name === 'dns-53')!;
    const tls = health.listeners.find((l) => l.name === 'dot-853')!;
    const up = health.upload.find((u) => u.feed === 'honeypot_dns')!;
    const captured = udp.records + tls.records;
    return {
      ...listenerRates(
        { bare: 'bare UDP NXDOMAIN server (queries/s, median)', sensor: 'sensor DNS over UDP, captured + spooled (q/s)' },
        'q/s',
        bareQps,
        sensorQps,
      ),
      'UDP queries answered (dnsperf completed)': answered,
      'UDP queries unanswered (dnsperf lost)': unanswered,
      'UDP records captured by the listener': udp.records,
      'UDP answered but not captured (must be 0)': Math.max(0, answered - udp.records),
      'sensor DNS over TLS (q/s, dnsperf -m dot, 1 round)': `${Math.round(dot.qps)} (${dot.completed} answered, ${dot.lost} lost)`,
      'DoT records captured': tls.records,
      'records uploaded (server accepted), UDP + DoT': up.uploaded,
      'records rejected by the server': up.rejected,
      'records dropped (spool full)': udp.dropped + tls.dropped,
      'records lost (captured - uploaded)': captured - up.uploaded,
      'spool drain after the load (s)': ((Date.now() - drainStart) / 1000).toFixed(1),
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
