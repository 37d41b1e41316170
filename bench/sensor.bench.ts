// Requests/s the sensor's HTTP listener captures (each record written to the spool before its answer,
// fsynced right after, then uploaded to a real umbra server), against a bare node:http server answering
// the same decoy page and recording nothing, in alternating rounds of wrk (a C client in its own
// process). After the load, every answered request must have reached the server: the bench waits for
// the spool to drain and reports records lost (answered by the listener minus stored by the server, as
// the server's own metrics count them), which must be 0, and the rate records went into the server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';
import { DEFAULT_DECOY_BODY } from '../src/modules/sensor/sensor-config.ts';
import { listenerRates } from './listener-rates.ts';
import { startStack, started } from './sensor-stack.ts';

const WRK = process.env.UMBRA_BENCH_WRK ?? '/usr/bin/wrk';

/** Spawns a process and resolves with the first stderr (or stdout) line matching `re`. */
/** wrk for `seconds` against `url`: requests answered and requests/s. */
function wrk(url: string, seconds: number, connections: number): { requests: number; rps: number; errors: string } {
  const r = spawnSync(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, url], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const requests = Number(/(\d+) requests in/.exec(r.stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const errors = /Socket errors:.*|Non-2xx.*/.exec(r.stdout)?.[0] ?? 'none';
  return { requests, rps, errors };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const [user, system] = cpuSplit(pid);
  return user + system;
}

/** User and system CPU seconds of a process so far. */
function cpuSplit(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, in parentheses): utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]) / 100, Number(fields[12]) / 100];
}

/** Spawns a bench server script; resolves with its port once it printed {"port"}. */
async function startBare(children: ChildProcess[], script: string, args: string[]) {
  const bare = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'servers', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(bare);
  const port = Number((await started(bare, /"port":(\d+)/, 'stdout'))[1]);
  return { bare, port };
}

export async function benchSensor(seconds = 5, rounds = 3, connections = 16): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-sensor-'));
  const children: ChildProcess[] = [];
  try {
    const { sensorPort, serverPort, healthPort } = await startStack(dir, children, { protocol: 'http', public_port: 80 });
    // The baseline: node:http answering the same page, recording nothing.
    const { port: barePort } = await startBare(children, 'bare-server.ts', [DEFAULT_DECOY_BODY, '{"server":"nginx/1.24.0"}']);

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
    return {
      ...listenerRates(
        { bare: 'bare node:http decoy (req/s, median)', sensor: 'sensor HTTP captured + spooled (req/s)' },
        'req/s',
        bareRps,
        sensorRps,
      ),
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

const OPENSSL = process.env.UMBRA_BENCH_OPENSSL ?? '/usr/bin/openssl';

/**
 * `clients` openssl s_time processes at once for `seconds`, each making new connections one after
 * another with a full handshake (-new: no session reused) and one HTTP/1.0 GET inside. Handshakes
 * completed (connections s_time counted) and their rate over the wall time of the slowest.
 */
async function sTime(port: number, seconds: number, clients: number): Promise<{ handshakes: number; rate: number }> {
  const t0 = process.hrtime.bigint();
  const runs = await Promise.all(
    Array.from(
      { length: clients },
      () =>
        new Promise<number>((resolve, reject) => {
          const p = spawn(OPENSSL, ['s_time', '-connect', `127.0.0.1:${port}`, '-new', '-www', '/', '-time', String(seconds)], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
          let err = '';
          p.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
          p.once('exit', () => {
            const n = /(\d+) connections in [\d.]+s/.exec(out)?.[1];
            if (n === undefined) reject(new Error(`openssl s_time printed no count: ${out.slice(-300)} ${err.slice(-500)}`));
            else resolve(Number(n));
          });
        }),
    ),
  );
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const handshakes = runs.reduce((a, b) => a + b, 0);
  return { handshakes, rate: handshakes / wall };
}

/** One HTTPS request over node's tls client: the answer's bytes once the server closes. */
function tlsAnswer(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      s.end('GET / HTTP/1.0\r\nHost: bench.example\r\n\r\n'),
    );
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
}

/**
 * ClientHellos/s the TLS listener captures with the handshake completed and the HTTP request inside
 * captured too (two records per connection, each fsynced to the spool before the sensor goes on),
 * against a bare node:tls server answering the same bytes and recording nothing. The load is
 * openssl s_time -new (C, its own processes): every connection a new full handshake (wrk, with
 * Connection: close, resumes the session on half of its reconnections, so it would not measure
 * new handshakes). `clients` s_time processes run at once (UMBRA_BENCH_TLS_CLIENTS, default 8): each
 * waits for its answer, so with few of them the figure is the sensor's latency (a handshake plus a
 * spool sync) more than its throughput, and with many the clients' own handshakes take the two cores.
 * After the load, every completed handshake must have reached the server.
 */
export async function benchSensorTls(
  seconds = 5,
  rounds = 3,
  clients = Number(process.env.UMBRA_BENCH_TLS_CLIENTS ?? 8),
): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-sensor-tls-'));
  const children: ChildProcess[] = [];
  try {
    const { sensorPort, drained, stopSensor, sensorPid, serverPid } = await startStack(dir, children, {
      protocol: 'tls',
      public_port: 443,
    });
    // The same bytes the sensor answers (its decoy page, as HTTP/1.0 asked), for the baseline to send.
    const answer = await tlsAnswer(sensorPort);
    const { bare, port: barePort } = await startBare(children, 'bare-tls-server.ts', [answer.toString('base64')]);

    const bareRate: number[] = [];
    const sensorRate: number[] = [];
    let completed = 1; // the request above
    await sTime(barePort, 1, clients); // warm-up
    await sTime(sensorPort, 1, clients).then((r) => (completed += r.handshakes));
    // CPU each server process used in the measured rounds, per handshake: where the time goes.
    const cpu = { bare: 0, sensor: 0, sensorSystem: 0, server: 0, bareHandshakes: 0, sensorHandshakes: 0 };
    for (let i = 0; i < rounds; i++) {
      const b0 = cpuSeconds(bare.pid!);
      const b = await sTime(barePort, seconds, clients);
      cpu.bare += cpuSeconds(bare.pid!) - b0;
      cpu.bareHandshakes += b.handshakes;
      bareRate.push(b.rate);
      const [s0, v0] = [cpuSplit(sensorPid), cpuSeconds(serverPid)];
      const s = await sTime(sensorPort, seconds, clients);
      const s1 = cpuSplit(sensorPid);
      cpu.sensor += s1[0] + s1[1] - s0[0] - s0[1];
      cpu.sensorSystem += s1[1] - s0[1];
      cpu.server += cpuSeconds(serverPid) - v0;
      cpu.sensorHandshakes += s.handshakes;
      sensorRate.push(s.rate);
      completed += s.handshakes;
    }
    // The baseline's own count of full and resumed handshakes: s_time -new must have resumed none.
    const bareCounts = new Promise<{ handshakes: number; resumed: number }>((resolve) =>
      createInterface({ input: bare.stdout! }).on('line', (l) => l.includes('resumed') && resolve(JSON.parse(l))),
    );
    bare.kill('SIGUSR2');
    const { resumed } = await bareCounts;
    const { health, seconds: drain } = await drained();
    const hellos = health.upload.find((u) => u.feed === 'honeypot_https')!;
    const requests = health.upload.find((u) => u.feed === 'honeypot_http')!;
    const l = health.listeners[0]!;
    await stopSensor();
    return {
      ...listenerRates(
        { bare: 'bare node:tls decoy (new handshakes/s, median)', sensor: 'sensor TLS hello + request captured (handshakes/s)' },
        'handshakes/s',
        bareRate,
        sensorRate,
      ),
      'CPU ms per handshake: bare | sensor (its system part) | umbra serve': [
        (1000 * cpu.bare) / cpu.bareHandshakes,
        (1000 * cpu.sensor) / cpu.sensorHandshakes,
        (1000 * cpu.sensorSystem) / cpu.sensorHandshakes,
        (1000 * cpu.server) / cpu.sensorHandshakes,
      ]
        .map((v) => v.toFixed(2))
        .join(' | '),
      'handshakes completed on the sensor (s_time counts)': completed,
      'resumed handshakes at the baseline (must be 0)': resumed,
      'ClientHellos captured | uploaded': `${l.records} | ${hellos.uploaded}`,
      'HTTP requests inside captured | uploaded': `${l.http_records} | ${requests.uploaded}`,
      'records rejected by the server': hellos.rejected + requests.rejected,
      // s_time stops counting when its time is up, with a connection possibly in flight that the sensor
      // captured: captured >= completed; nothing captured may be missing at the server.
      'records lost (captured - uploaded, both feeds)': l.records - hellos.uploaded + (l.http_records ?? 0) - requests.uploaded,
      'hellos missing (completed - captured, must be <= 0)': completed - l.records,
      'records dropped by the spool': l.dropped,
      'spool drain after the load (s)': drain,
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ADB load (bench/servers/adb-load.ts) in a process of its own: sessions completed and their rate. */
function adbLoad(port: number, seconds: number, connections: number): Promise<{ sessions: number; rate: number; errors: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'servers/adb-load.ts'), String(port), String(seconds), String(connections)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`adb load exited ${code}`));
      const r = JSON.parse(out) as { sessions: number; errors: number; seconds: number };
      resolve({ sessions: r.sessions, errors: r.errors, rate: r.sessions / r.seconds });
    });
  });
}

/**
 * Sessions/s of the ADB listener: each a new connection doing CNXN and `shell:echo probe-N` (one
 * record, written to the spool before the answer), against a bare TCP server answering the same bytes and
 * recording nothing. The load is JavaScript in its own process (no C tool speaks ADB); after it, every
 * completed session's record must have reached the server.
 */
export async function benchSensorAdb(seconds = 5, rounds = 3, connections = 16): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-sensor-adb-'));
  const children: ChildProcess[] = [];
  try {
    const { sensorPort, drained } = await startStack(dir, children, { protocol: 'adb', public_port: 5555 });
    const { port: barePort } = await startBare(children, 'bare-adb-server.ts', []);
    const bareRate: number[] = [];
    const sensorRate: number[] = [];
    let completed = 0;
    let errors = 0;
    await adbLoad(barePort, 1, connections); // warm-up
    for (let i = 0; i < rounds; i++) {
      bareRate.push((await adbLoad(barePort, seconds, connections)).rate);
      const s = await adbLoad(sensorPort, seconds, connections);
      sensorRate.push(s.rate);
      completed += s.sessions;
      errors += s.errors;
    }
    const { health, seconds: drain } = await drained();
    const adb = health.upload.find((u) => u.feed === 'honeypot_adb')!;
    const l = health.listeners[0]!;
    return {
      ...listenerRates(
        { bare: 'bare TCP server, same ADB bytes (sessions/s, median)', sensor: 'sensor ADB session recorded (sessions/s)' },
        'sessions/s',
        bareRate,
        sensorRate,
      ),
      'sessions completed on the sensor': completed,
      'sessions failed on the sensor': errors,
      'records captured | uploaded': `${l.records} | ${adb.uploaded}`,
      'records lost (captured - uploaded)': l.records - adb.uploaded,
      'sessions missing (completed - captured, must be <= 0)': completed - l.records,
      'records dropped by the spool': l.dropped,
      'spool drain after the load (s)': drain,
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
