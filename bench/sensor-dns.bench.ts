// Queries/s the sensor's DNS listener answers over UDP with each query recorded (written to the spool
// before its answer, fsynced right after, then uploaded to a real umbra server), against a bare UDP server in its own
// process that answers NXDOMAIN without parsing or recording anything, in alternating rounds of
// dnsperf (a C load generator in its own process; Debian package dnsperf). Many distinct names (a
// mix of types, decoy and other names), so nothing is answered from a cache. After the load the bench
// waits for the spool to drain and counts records lost: answered but not captured, and captured but
// not uploaded. One extra round measures DNS over TLS (dnsperf -m dot) on the same sensor.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenerRates } from './listener-rates.ts';
import { startStack, started } from './sensor-stack.ts';

const DNSPERF = process.env.UMBRA_BENCH_DNSPERF ?? '/usr/bin/dnsperf';
const DOMAIN = 'bench-dns.example';
/** Queries dnsperf keeps in flight (its -q); a scanner's flood waits for no answer at all. */
const OUTSTANDING = Number(process.env.UMBRA_BENCH_DNSPERF_OUTSTANDING ?? 256);

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
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryMix(500_000));
    // One source (127.0.0.1) sends everything: its rate limit is lifted for the measurement.
    const unlimited = { answer: 'decoy', decoy_ipv4: '198.51.100.80', rate_per_source: 1e9, burst_per_source: 1e9 };
    const { portOf, healthPort, stopSensor } = await startStack(
      dir,
      children,
      [
        { protocol: 'dns', public_port: 53, ...unlimited },
        { protocol: 'dns', tls: true, public_port: 853, max_connections_per_source: 64, ...unlimited },
      ],
      [DOMAIN],
    );
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
    // UMBRA_BENCH_CPU_PROF: a profile is written at a clean exit only.
    if (process.env.UMBRA_BENCH_CPU_PROF) await stopSensor();
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
