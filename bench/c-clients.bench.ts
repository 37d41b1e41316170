// Lookup figures driven by C load generators, each in a process of its own, against servers in
// processes of their own, every ratio against a baseline measured in the same run:
//   HTTP (wrk -t1 -c50), four workloads, each on a fresh umbra and a fresh bare node:http process:
//     fixed   one address (8.8.8.8);
//     v4      random addresses from the announced IPv4 ranges of the packaged ASN data;
//     v6      random addresses from the announced IPv6 ranges;
//     mixed   a lookup log replayed from a file: per 10 requests 5 from 4,096 recurring addresses,
//             4 fresh IPv4, 1 fresh IPv6;
//   each cold (the first COLD seconds of load, started as soon as the server listens) and warm (alternating rounds
//   after that; every round goes on in the address list where the previous stopped, so a warm round
//   of a random workload still asks addresses the server has not seen). The bare server answers the
//   same requests (same paths, same key header) with a fixed body of the workload's median umbra body
//   size and umbra's own response headers with fixed values (same header count).
//   The batch: POST /lookup/ips of 1,000 random routed addresses (4 IPv4 to 1 IPv6), addresses/s
//   and p50/p99 (wrk -t1 -c4), in rounds alternating with bare node:http answering the same requests
//   with a fixed body of the answers' median size (about half a megabyte) and umbra's headers.
//   gRPC (h2load -t1 -c1 -m50, POST of the length-prefixed LookupIP frame for 8.8.8.8): umbra vs bare
//   grpc-js and bare node:http2 answering the very message bytes umbra answered, alternating with
//   wrk on umbra's GET of the same address, for gRPC / HTTP.
//   Memory: VmRSS of `umbra serve` (dist/, packaged dataset) once it says it serves.
// The addresses come from test/helpers/routed-addresses.ts with a fixed seed: the byte-identity tests
// compare the fast path with fastify and HTTP with gRPC over a prefix of the same lists.
// Environment (seconds unless said): UMBRA_BENCH_COLD (10), UMBRA_BENCH_WARM (5), UMBRA_BENCH_ROUNDS
// (2), UMBRA_BENCH_CONNECTIONS (50), UMBRA_BENCH_H2_CLIENTS (1), UMBRA_BENCH_H2_STREAMS (50),
// UMBRA_BENCH_BATCH_CONNECTIONS (4), UMBRA_BENCH_WORKLOADS (fixed,v4,v6,mixed), UMBRA_BENCH_SEED,
// UMBRA_BENCH_BUILD (dist, the default, builds dist/ when a source is newer; src: the sources under
// tsx), UMBRA_BENCH_WRK and UMBRA_BENCH_H2LOAD (the binaries), UMBRA_BENCH_NODE_FLAGS (the node flags
// every server runs with: by default those `npm start` passes, --max-semi-space-size=32; empty for
// V8's defaults).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { loadavg, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { BENCH_SEED, routedAddresses, routedBatches, type AddressKind } from '../test/helpers/routed-addresses.ts';
import type { WrkResult } from './wrk/wrk-result.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${v}: a positive number`);
  return n;
};
const COLD = num('UMBRA_BENCH_COLD', 10);
const WARM = num('UMBRA_BENCH_WARM', 5);
const ROUNDS = num('UMBRA_BENCH_ROUNDS', 2);
const CONNECTIONS = num('UMBRA_BENCH_CONNECTIONS', 50);
const H2_CLIENTS = num('UMBRA_BENCH_H2_CLIENTS', 1);
const H2_STREAMS = num('UMBRA_BENCH_H2_STREAMS', 50);
const BATCH_CONNECTIONS = num('UMBRA_BENCH_BATCH_CONNECTIONS', 4);
const SEED = num('UMBRA_BENCH_SEED', BENCH_SEED);
const BUILD = process.env.UMBRA_BENCH_BUILD ?? 'dist';
/** Every server (umbra and the baselines alike) runs under the node flags `npm start` uses, unless told otherwise. */
const NODE_FLAGS = (process.env.UMBRA_BENCH_NODE_FLAGS ?? SEMI_SPACE_FLAG).split(' ').filter(Boolean);
const WORKLOADS = (process.env.UMBRA_BENCH_WORKLOADS ?? 'fixed,v4,v6,mixed').split(',') as Workload[];

type Workload = 'fixed' | AddressKind;
/**
 * Addresses per list: more than umbra asks in the cold window and the warm rounds together at 50,000
 * req/s, so a fresh address stays fresh (the bare server, faster, may wrap: it keeps nothing).
 */
const LIST_SIZE: Record<AddressKind, number> = { v4: 1_000_000, v6: 500_000, mixed: 1_000_000 };
const FIXED = '8.8.8.8';
const ROOT = join(import.meta.dirname, '..');

/** The middle value; of an even count the mean of the two middle ones (2 rounds must not report the better one). */
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fix = (x: number, d = 3) => Number(x.toFixed(d));
const load1 = () => loadavg()[0]!.toFixed(1);
const round = (x: number) => Math.round(x).toLocaleString('en-US');

// ---------------------------------------------------------------- binaries

/** The path of a binary (the env override, else the first on PATH), or an error that says how to install it. */
function binary(name: string, envName: string, pkg: string): string {
  const candidates = process.env[envName] ? [process.env[envName]!] : (process.env.PATH ?? '').split(delimiter).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // Not there, or not executable: the next one.
    }
  }
  throw new Error(
    `${name} not found (${envName} or PATH): this bench drives the servers with C load generators; ` +
      `install them with \`sudo apt-get install -y wrk nghttp2-client\` (Debian/Ubuntu; ${name} is in ${pkg})`,
  );
}

/** Runs a load generator to the end; its stdout, or an error with what it said. */
function run(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c));
    child.stderr!.on('data', (c: Buffer) => (err += c));
    child.once('error', (e) => reject(new Error(`cannot run ${bin}: ${e.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${bin} exited ${code}: ${err || out}`))));
  });
}

// ---------------------------------------------------------------- servers

interface Proc {
  child: ChildProcess;
  info: { port: number; grpcPort?: number; key?: string };
}

async function start(script: string, args: string[] = []): Promise<Proc> {
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, UMBRA_BENCH_BUILD: BUILD },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code} before serving`)));
  });
  return { child, info: JSON.parse(line) };
}

const stop = (p: Proc) =>
  new Promise<void>((r) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return r();
    p.child.once('exit', () => r());
    p.child.kill('SIGTERM');
  });

/** VmRSS of a process in MiB, from /proc (Linux). */
function rssMiB(pid: number | undefined, field = 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for process ${pid}`);
  return Number(m[1]) / 1024;
}

/** User + system CPU time of a process in ms, from /proc/<pid>/stat (fields 14 and 15, 100 ticks a second). */
function cpuMs(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * A load run with the server's CPU per request: on a shared machine the throughput of both sides
 * swings with the neighbours, the CPU a request costs the server much less.
 */
async function timed<M extends Measured>(p: Proc, load: () => Promise<M>): Promise<M> {
  const before = cpuMs(p.child.pid);
  const m = await load();
  m.cpuUs = ((cpuMs(p.child.pid) - before) * 1000) / m.requests;
  return m;
}

/** Builds dist/ when it is missing or older than a source file: the figures are of the code in the tree. */
function ensureBuild(): void {
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }
    return t;
  };
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist/app.js')).mtimeMs;
  } catch {
    // No build yet.
  }
  if (built > newest(join(ROOT, 'src'))) return;
  console.error('c-clients bench: building dist/ (npm run build) ...');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm run build exited ${r.status}`);
}

// ---------------------------------------------------------------- wrk

interface Measured {
  rps: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  load: string;
  /** The server's user + system CPU per request (µs), when measured with `timed`. */
  cpuUs?: number;
}

async function wrk(bin: string, port: number, seconds: number, connections: number, script: string, args: string[]): Promise<Measured> {
  const out = await run(bin, [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '5s',
    '-s',
    join(ROOT, 'bench/wrk', script),
    `http://127.0.0.1:${port}`,
    '--',
    ...args,
  ]);
  const line = out.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`wrk printed no result: ${out}`);
  const r = JSON.parse(line) as WrkResult;
  const errors = r.status + r.connect + r.read + r.write + r.timeout;
  if (errors > 0) throw new Error(`wrk saw ${errors} errors (non-2xx ${r.status}) on port ${port}: ${line}`);
  if (r.requests === 0) throw new Error(`wrk completed no request on port ${port}`);
  return { rps: r.requests / (r.us / 1e6), requests: r.requests, p50Ms: r.p50 / 1000, p99Ms: r.p99 / 1000, load: load1() };
}

// ---------------------------------------------------------------- h2load (gRPC)

const LOOKUP_PATH = '/example.v1.ExampleService/LookupIP';

/** The gRPC frame of a LookupIPRequest { ip_address } (field 1, a string): flag 0, length, message. */
function lookupFrame(ip: string): Buffer {
  const text = Buffer.from(ip);
  const message = Buffer.concat([Buffer.from([0x0a, text.length]), text]);
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** One call over node:http2 with the bench's frame and headers; the answer message, or an error with the status. */
function grpcCall(port: number, frame: Buffer, key: string | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': LOOKUP_PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(key ? { 'x-api-key': key } : {}),
    });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    req.on('response', (h) => (status = h['grpc-status'] as string | undefined));
    req.on('trailers', (h) => (status = h['grpc-status'] as string | undefined));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      const body = Buffer.concat(chunks);
      if (status !== '0' || body.length < 5) return reject(new Error(`LookupIP answered grpc-status ${status} on port ${port}`));
      resolve(body.subarray(5, 5 + body.readUInt32BE(1)));
    });
    req.on('error', reject);
    req.end(frame);
  });
}

interface H2Measured extends Measured {
  meanMs: number;
}

/**
 * h2load for `seconds` with the LookupIP frame. h2load counts an HTTP 200 as a success, and a gRPC error
 * is an HTTP 200 with grpc-status in the trailers and no message: every call must have brought at least
 * the answer's bytes of DATA, or the figure is refused.
 */
async function h2load(
  bin: string,
  port: number,
  seconds: number,
  dataFile: string,
  key: string | undefined,
  answerBytes: number,
  dir: string,
) {
  const log = join(dir, `h2load-${port}.log`);
  const out = await run(bin, [
    '-t1',
    `-c${H2_CLIENTS}`,
    `-m${H2_STREAMS}`,
    `-D${seconds}`,
    '-d',
    dataFile,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    ...(key ? ['-H', `x-api-key: ${key}`] : []),
    '--log-file',
    log,
    `http://127.0.0.1:${port}${LOOKUP_PATH}`,
  ]);
  const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out)?.[1]);
  const reqs = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const data = /\((\d+)\) data/.exec(out);
  if (!reqs || !data || !Number.isFinite(rps)) throw new Error(`cannot read h2load's output:\n${out}`);
  const succeeded = Number(reqs[4]);
  if (Number(reqs[5]) + Number(reqs[6]) + Number(reqs[7]) > 0) throw new Error(`h2load saw failures on port ${port}:\n${out}`);
  const dataBytes = Number(data[1]);
  if (!(dataBytes >= succeeded * (5 + answerBytes) * 0.98))
    throw new Error(`h2load on port ${port}: ${dataBytes} B of DATA for ${succeeded} calls of ${5 + answerBytes} B: some calls failed`);
  // The per-request log: start µs, status, µs to the end of the response.
  const lat = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => Number(l.split('\t')[2]) / 1000)
    .sort((a, b) => a - b);
  rmSync(log, { force: true });
  const at = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;
  return {
    rps,
    requests: succeeded,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    meanMs: lat.reduce((a, b) => a + b, 0) / lat.length,
    load: load1(),
  } satisfies H2Measured;
}

// ---------------------------------------------------------------- workloads

interface WorkloadFigures {
  cold: Measured;
  coldBare: Measured;
  warm: Measured[];
  warmBare: Measured[];
  bodyBytes: number;
  rssMiB: number;
}

/** Median body of umbra's answers to the first addresses of a list, and umbra's own headers on it. */
async function sampleAnswer(port: number, key: string, addresses: string[]): Promise<{ body: string; headers: Record<string, string> }> {
  const answers: Array<{ body: string; headers: Record<string, string> }> = [];
  for (const ip of addresses) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v4/lookup/ip/${ip}`, { headers: { 'x-api-key': key } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`umbra answered ${ip} with ${res.status}: ${body}`);
    const headers: Record<string, string> = {};
    for (const [name, value] of res.headers)
      if (!['date', 'connection', 'keep-alive', 'content-type', 'content-length', 'transfer-encoding'].includes(name))
        headers[name] = value;
    answers.push({ body, headers });
  }
  answers.sort((a, b) => Buffer.byteLength(a.body) - Buffer.byteLength(b.body));
  return answers[Math.floor(answers.length / 2)]!;
}

async function httpWorkload(
  wrkBin: string,
  file: string,
  sample: string[],
  afterWarm?: (umbra: Proc) => Promise<void>,
): Promise<WorkloadFigures> {
  const umbra = await start('bench/servers/umbra-server.ts');
  let bare: Proc | undefined;
  try {
    const key = umbra.info.key!;
    const cold = await timed(umbra, () => wrk(wrkBin, umbra.info.port, COLD, CONNECTIONS, 'lookup-list.lua', [key, file, '0']));
    // The bare server's body and headers are umbra's answer of median size to this workload.
    const answer = await sampleAnswer(umbra.info.port, key, sample);
    const baseline = await start('bench/servers/bare-server.ts', [answer.body, JSON.stringify(answer.headers)]);
    bare = baseline;
    const coldBare = await timed(baseline, () => wrk(wrkBin, baseline.info.port, COLD, CONNECTIONS, 'lookup-list.lua', [key, file, '0']));
    let at = cold.requests;
    let atBare = coldBare.requests;
    const warm: Measured[] = [];
    const warmBare: Measured[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const u = await timed(umbra, () => wrk(wrkBin, umbra.info.port, WARM, CONNECTIONS, 'lookup-list.lua', [key, file, String(at)]));
      at += u.requests;
      warm.push(u);
      const b = await timed(baseline, () =>
        wrk(wrkBin, baseline.info.port, WARM, CONNECTIONS, 'lookup-list.lua', [key, file, String(atBare)]),
      );
      atBare += b.requests;
      warmBare.push(b);
    }
    const rss = rssMiB(umbra.child.pid);
    await afterWarm?.(umbra);
    return { cold, coldBare, warm, warmBare, bodyBytes: Buffer.byteLength(answer.body), rssMiB: rss };
  } finally {
    if (bare) await stop(bare);
    await stop(umbra);
  }
}

/** RSS of `umbra serve` on dist/ with the packaged dataset, once it says it serves. */
async function serveMemory(dataset: string): Promise<{ rss: number; hwm: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-bench-serve-'));
  symlinkSync(dataset, join(dataDir, 'ip-dataset.bin'));
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, join(ROOT, 'bin/umbra.js'), 'serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off' },
    },
  );
  try {
    let said = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`umbra serve did not say it serves within 120 s:\n${said}`)), 120_000);
      createInterface({ input: child.stderr! }).on('line', (l) => {
        said += `${l}\n`;
        if (/serving http:\/\//.test(l)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`umbra serve exited ${code}:\n${said}`));
      });
    });
    // A second for what start-up does right after listening (the loader's spare arena, the first timers).
    await new Promise((r) => setTimeout(r, 1000));
    return { rss: rssMiB(child.pid), hwm: rssMiB(child.pid, 'VmHWM') };
  } finally {
    await new Promise<void>((r) => {
      child.once('exit', () => r());
      child.kill('SIGTERM');
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- the suite

export async function benchCClients(): Promise<Record<string, number | string>> {
  const wrkBin = binary('wrk', 'UMBRA_BENCH_WRK', 'the Debian package wrk');
  const h2Bin = binary('h2load', 'UMBRA_BENCH_H2LOAD', 'the Debian package nghttp2-client');
  if (BUILD === 'dist') ensureBuild();
  const dataset = await ensureRealDataset();
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-c-'));
  const out: Record<string, number | string> = {};
  try {
    out.settings =
      `wrk -t1 -c${CONNECTIONS}; cold ${COLD} s from start; warm ${ROUNDS} alternating rounds x ${WARM} s; ` +
      `h2load -t1 -c${H2_CLIENTS} -m${H2_STREAMS}; seed ${SEED}; code from ${BUILD}; node flags ${NODE_FLAGS.join(' ') || '(none)'}; load at start ${load1()}`;

    const mem = await serveMemory(dataset);
    out['umbra serve VmRSS at start, MiB (target < 512)'] = `${Math.round(mem.rss)} (VmHWM ${Math.round(mem.hwm)})`;

    // The address files, written once: wrk reads them in its own process.
    const files: Record<Workload, string> = { fixed: join(dir, 'fixed.txt'), v4: '', v6: '', mixed: '' };
    writeFileSync(files.fixed, `${FIXED}\n`);
    const lists: Partial<Record<AddressKind, string[]>> = {};
    for (const kind of ['v4', 'v6', 'mixed'] as const) {
      lists[kind] = routedAddresses(kind, LIST_SIZE[kind], SEED);
      files[kind] = join(dir, `${kind}.txt`);
      writeFileSync(files[kind], `${lists[kind]!.join('\n')}\n`);
    }
    // Batches of 1,000 random routed addresses (4 IPv4 to 1 IPv6), 100 of them sent in turn.
    const batchFile = join(dir, 'batches.txt');
    const batches = routedBatches(100, SEED).map((ips) => JSON.stringify({ ips }));
    writeFileSync(batchFile, `${batches.join('\n')}\n`);

    const grpc: { umbra: H2Measured[]; grpcjs: H2Measured[]; http2: H2Measured[]; http: Measured[] } = {
      umbra: [],
      grpcjs: [],
      http2: [],
      http: [],
    };
    const batch: Measured[] = [];
    const batchBare: Measured[] = [];
    let batchBytes = 0;
    let answerBytes = 0;
    // After the fixed workload's warm rounds, on the same umbra process: gRPC against its baselines,
    // alternating with HTTP GET of the same address; then the batch.
    const afterFixed = async (umbra: Proc) => {
      const frameFile = join(dir, 'lookup.grpc');
      const frame = lookupFrame(FIXED);
      writeFileSync(frameFile, frame);
      const key = umbra.info.key!;
      const answer = await grpcCall(umbra.info.grpcPort!, frame, key);
      answerBytes = answer.length;
      const messageFile = join(dir, 'answer.bin');
      writeFileSync(messageFile, answer);
      const grpcjs = await start('bench/servers/fixed-grpc-server.ts', ['grpc-js', messageFile]);
      const http2 = await start('bench/servers/fixed-grpc-server.ts', ['http2', messageFile]);
      try {
        for (const p of [grpcjs, http2]) {
          const a = await grpcCall(p.info.grpcPort!, frame, undefined);
          if (!a.equals(answer)) throw new Error('a gRPC baseline answered other bytes than umbra');
        }
        // A short warm-up of each gRPC server (JIT), then the alternating rounds.
        await h2load(h2Bin, umbra.info.grpcPort!, 2, frameFile, key, answerBytes, dir);
        await h2load(h2Bin, grpcjs.info.grpcPort!, 2, frameFile, undefined, answerBytes, dir);
        await h2load(h2Bin, http2.info.grpcPort!, 2, frameFile, undefined, answerBytes, dir);
        for (let r = 0; r < ROUNDS; r++) {
          grpc.umbra.push(await timed(umbra, () => h2load(h2Bin, umbra.info.grpcPort!, WARM, frameFile, key, answerBytes, dir)));
          grpc.grpcjs.push(await timed(grpcjs, () => h2load(h2Bin, grpcjs.info.grpcPort!, WARM, frameFile, undefined, answerBytes, dir)));
          grpc.http2.push(await timed(http2, () => h2load(h2Bin, http2.info.grpcPort!, WARM, frameFile, undefined, answerBytes, dir)));
          grpc.http.push(
            await timed(umbra, () => wrk(wrkBin, umbra.info.port, WARM, CONNECTIONS, 'lookup-list.lua', [key, files.fixed, '0'])),
          );
        }
      } finally {
        await stop(grpcjs);
        await stop(http2);
      }
      // The batch: every answer's size read (and the first's headers kept for the baseline), a short
      // warm-up, then rounds alternating with a bare node:http server answering the same requests
      // with a fixed body of the answers' median size and umbra's response headers: what sockets,
      // HTTP and wrk cost for half a megabyte per request, with none of umbra's work behind it.
      const sizes: number[] = [];
      let batchHeaders: Record<string, string> | undefined;
      for (const body of batches) {
        const res = await fetch(`http://127.0.0.1:${umbra.info.port}/api/v4/lookup/ips`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body,
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${bytes.toString('utf8', 0, 300)}`);
        sizes.push(bytes.length);
        if (batchHeaders === undefined) {
          batchHeaders = {};
          for (const [name, value] of res.headers)
            if (!['date', 'connection', 'keep-alive', 'content-type', 'content-length', 'transfer-encoding'].includes(name))
              batchHeaders[name] = value;
        }
      }
      batchBytes = Math.round(median(sizes));
      const bodyFile = join(dir, 'batch-answer.json');
      // Valid JSON of the answers' size: whitespace after the value is allowed.
      writeFileSync(bodyFile, '{"results":[],"invalid":[]}'.padEnd(batchBytes, ' '));
      const bare = await start('bench/servers/bare-server.ts', ['--body-file', bodyFile, JSON.stringify(batchHeaders)]);
      try {
        await wrk(wrkBin, umbra.info.port, 2, BATCH_CONNECTIONS, 'lookup-batch.lua', [key, batchFile]);
        await wrk(wrkBin, bare.info.port, 2, BATCH_CONNECTIONS, 'lookup-batch.lua', [key, batchFile]);
        for (let r = 0; r < ROUNDS; r++) {
          batch.push(await timed(umbra, () => wrk(wrkBin, umbra.info.port, WARM, BATCH_CONNECTIONS, 'lookup-batch.lua', [key, batchFile])));
          batchBare.push(
            await timed(bare, () => wrk(wrkBin, bare.info.port, WARM, BATCH_CONNECTIONS, 'lookup-batch.lua', [key, batchFile])),
          );
        }
      } finally {
        await stop(bare);
      }
    };

    const figures: Partial<Record<Workload, WorkloadFigures>> = {};
    const sampleOf = (w: Workload) => (w === 'fixed' ? [FIXED] : lists[w]!.slice(0, 201));
    for (const w of WORKLOADS) {
      if (!(w in files)) throw new Error(`UMBRA_BENCH_WORKLOADS: unknown workload ${w} (fixed, v4, v6, mixed)`);
      figures[w] = await httpWorkload(wrkBin, files[w], sampleOf(w), w === 'fixed' ? afterFixed : undefined);
    }

    const rates = (ms: Measured[]) => ms.map((m) => round(m.rps)).join(' / ');
    const ratioOf = (a: Measured[], b: Measured[]) => fix(median(a.map((m, i) => m.rps / b[i]!.rps)));
    const cpu = (ms: Measured[]) => fix(median(ms.map((m) => m.cpuUs!)), 1);
    /** Baseline CPU per request over umbra's: the throughput ratio a CPU-bound server would reach. */
    const cpuRatio = (a: Measured[], b: Measured[]) => fix(median(a.map((m, i) => b[i]!.cpuUs! / m.cpuUs!)));
    for (const w of WORKLOADS) {
      const f = figures[w]!;
      const name = { fixed: `fixed ${FIXED}`, v4: 'random IPv4', v6: 'random IPv6', mixed: 'mixed list' }[w];
      out[`HTTP ${name}: body bytes (median), umbra RSS after`] = `${f.bodyBytes} B, ${Math.round(f.rssMiB)} MiB`;
      out[`HTTP ${name} cold: req/s umbra vs bare`] =
        `${round(f.cold.rps)} vs ${round(f.coldBare.rps)}, p99 ${fix(f.cold.p99Ms, 1)} vs ${fix(f.coldBare.p99Ms, 1)} ms (load ${f.cold.load})`;
      out[`HTTP ${name} cold: ratio${w === 'v4' ? ' (target >= 0.5)' : ''}`] = fix(f.cold.rps / f.coldBare.rps);
      out[`HTTP ${name} warm: req/s umbra vs bare`] =
        `${round(median(f.warm.map((m) => m.rps)))} vs ${round(median(f.warmBare.map((m) => m.rps)))} ` +
        `(rounds ${rates(f.warm)} vs ${rates(f.warmBare)}; load ${f.warm.map((m) => m.load).join(', ')})`;
      out[`HTTP ${name} warm: ratio${w === 'v4' ? ' (target >= 0.7)' : ''}`] = ratioOf(f.warm, f.warmBare);
      out[`HTTP ${name}: server CPU us/request umbra vs bare`] =
        `cold ${fix(f.cold.cpuUs!, 1)} vs ${fix(f.coldBare.cpuUs!, 1)} (${cpuRatio([f.cold], [f.coldBare])}), ` +
        `warm ${cpu(f.warm)} vs ${cpu(f.warmBare)} (${cpuRatio(f.warm, f.warmBare)})`;
    }
    if (batch.length > 0) {
      const rps = median(batch.map((m) => m.rps));
      out['batch 1000: addresses/s (target >= 1 M)'] =
        `${round(rps * 1000)} (${round(rps)} batches/s, rounds ${rates(batch)}, wrk -c${BATCH_CONNECTIONS})`;
      out['batch 1000: p50 / p99 ms (target p50 < 2)'] =
        `${fix(median(batch.map((m) => m.p50Ms)), 2)} / ${fix(median(batch.map((m) => m.p99Ms)), 2)}`;
      out['batch 1000: server CPU us/address'] = fix(cpu(batch) / 1000, 2);
      out[`batch 1000: bare node:http answering ${round(batchBytes)} fixed bytes, batches/s and p50 ms`] =
        `${round(median(batchBare.map((m) => m.rps)))} (rounds ${rates(batchBare)}), p50 ${fix(median(batchBare.map((m) => m.p50Ms)), 2)}`;
      out['batch 1000: server CPU us/batch umbra vs bare'] = `${fix(cpu(batch), 0)} vs ${fix(cpu(batchBare), 0)}`;
      out['batch 1000: umbra / bare'] = ratioOf(batch, batchBare);
    }
    if (grpc.umbra.length > 0) {
      const g = grpc.umbra;
      out['gRPC LookupIP: message bytes'] = answerBytes;
      out['gRPC LookupIP calls/s: umbra, grpc-js, node:http2'] =
        `${round(median(g.map((m) => m.rps)))}, ${round(median(grpc.grpcjs.map((m) => m.rps)))}, ${round(median(grpc.http2.map((m) => m.rps)))} ` +
        `(rounds ${rates(g)}; ${rates(grpc.grpcjs)}; ${rates(grpc.http2)})`;
      out['gRPC LookupIP p50 / p99 ms: umbra'] = `${fix(median(g.map((m) => m.p50Ms)), 2)} / ${fix(median(g.map((m) => m.p99Ms)), 2)}`;
      out['gRPC umbra / bare grpc-js (target >= 0.8)'] = ratioOf(g, grpc.grpcjs);
      out['gRPC server CPU us/call: umbra, grpc-js, node:http2'] =
        `${cpu(g)}, ${cpu(grpc.grpcjs)}, ${cpu(grpc.http2)} (CPU ratio to grpc-js ${cpuRatio(g, grpc.grpcjs)})`;
      out['gRPC umbra / bare node:http2'] = ratioOf(g, grpc.http2);
      out['gRPC bare grpc-js / bare node:http2'] = ratioOf(grpc.grpcjs, grpc.http2);
      out[`HTTP GET ${FIXED} req/s in the same rounds`] = `${round(median(grpc.http.map((m) => m.rps)))} (rounds ${rates(grpc.http)})`;
      out['gRPC LookupIP / HTTP lookup (target >= 0.5)'] = ratioOf(g, grpc.http);
      out['HTTP GET in the same rounds: server CPU us/request'] = `${cpu(grpc.http)} (CPU ratio gRPC / HTTP ${cpuRatio(g, grpc.http)})`;
    }
    out['load at end'] = load1();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
