// LookupIP driven by h2load (C, its own process) against three servers in their own processes, in
// alternating rounds: umbra, bare grpc-js answering a fixed result of the same size, and node:http2
// alone answering the same gRPC frames (the ceiling of any gRPC server on node); GET /lookup/ip driven
// by wrk on the same umbra. Besides calls/s, each server's CPU time per call (from /proc), which
// a noisy neighbour on the shared machine disturbs less than the rate.
// Issue 6 figures (JS clients, kept as extra figures): LookupIP calls/s over one grpc-js channel with
// 50 calls in flight, against GET /lookup/ip req/s (autocannon, 50 connections); and events/s streamed
// to 20 concurrent StreamProxies calls, against 20 NDJSON consumers of the same feed in the same run.
// Every load is bounded in time and stays on 127.0.0.1.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'node:http';
import { createInterface, type Interface } from 'node:readline';
import autocannon from 'autocannon';
import { credentials, loadPackageDefinition, Metadata, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import { loadProto, packageDefinition, SERVICE_NAME } from '../src/proto.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

interface Server {
  child: ChildProcess;
  lines: Interface;
  info: { port: number; grpcPort: number; key: string };
}

async function start(script: string, args: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [SEMI_SPACE_FLAG, '--import', 'tsx', script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return { child, lines, info: JSON.parse(first) };
}

const stop = (s: Server) =>
  new Promise<void>((r) => {
    s.child.once('exit', () => r());
    s.child.kill('SIGTERM');
  });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type AnyClient = Client & { LookupIP: (...args: unknown[]) => unknown; StreamProxies: (...args: unknown[]) => any };
function grpcClient(port: number): AnyClient {
  const def = loadProto({ keepCase: true, longs: Number, enums: String, defaults: false });
  const Ctor = (loadPackageDefinition(def) as any).example.v1.ExampleService;
  return new Ctor(`127.0.0.1:${port}`, credentials.createInsecure()) as AnyClient;
}

const ADDRESSES = ['8.8.8.8', '1.1.1.1', '81.2.69.160', '2001:4860:4860::8888', '185.220.101.1', '104.16.0.1'];

/** Keeps `inFlight` LookupIP calls going on one channel for `seconds`; returns completed calls/s. */
async function grpcLoad(client: AnyClient, key: string, inFlight: number, seconds: number): Promise<number> {
  const md = new Metadata();
  md.set('x-api-key', key);
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const worker = async (w: number) => {
    let i = w;
    while (Date.now() < end) {
      await new Promise<void>((resolve) =>
        client.LookupIP({ ip_address: ADDRESSES[i++ % ADDRESSES.length] }, md, (err: Error | null) => {
          if (err) failed++;
          else done++;
          resolve();
        }),
      );
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)));
  if (failed > 0) throw new Error(`${failed} LookupIP calls failed`);
  return done / ((performance.now() - t0) / 1000);
}

const httpLoad = (port: number, key: string, seconds: number) =>
  new Promise<number>((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: 50,
        duration: seconds,
        requests: ADDRESSES.map((ip) => ({ method: 'GET' as const, path: `/api/v4/lookup/ip/${ip}`, headers: { 'x-api-key': key } })),
      },
      (err, res) =>
        err
          ? reject(err)
          : res.non2xx > 0 || res.errors > 0
            ? reject(new Error(`HTTP load saw ${res.non2xx} non-2xx`))
            : resolve(res.requests.average),
    ),
  );

const H2LOAD = process.env.UMBRA_BENCH_H2LOAD ?? '/usr/bin/h2load';
const WRK = process.env.UMBRA_BENCH_WRK ?? '/usr/bin/wrk';
const run = promisify(execFile);

/** CPU time (user + system, ms) a process has used, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** A file holding one gRPC frame: flag 0, big-endian length, the LookupIP request (h2load -d sends it as the body). */
function lookupFrameFile(ip: string): string {
  const m = (packageDefinition()[SERVICE_NAME] as ServiceDefinition).LookupIP!.requestSerialize({ ip_address: ip });
  const frame = Buffer.alloc(5 + m.length);
  frame.writeUInt32BE(m.length, 1);
  m.copy(frame, 5);
  const file = join(mkdtempSync(join(tmpdir(), 'umbra-h2load-')), 'lookup-ip.grpc');
  writeFileSync(file, frame);
  return file;
}

/** h2load: `connections` × `streams` LookupIP calls in flight over h2c for `seconds`; calls/s (every call must succeed). */
async function h2loadLookup(
  port: number,
  key: string,
  frameFile: string,
  seconds: number,
  connections: number,
  streams = 50,
): Promise<number> {
  const args = ['-D', String(seconds), '-c', String(connections), '-m', String(streams), '-t', '1'];
  args.push('-H', 'content-type: application/grpc', '-H', 'te: trailers', '-H', `x-api-key: ${key}`, '-d', frameFile);
  const { stdout } = await run(H2LOAD, [...args, `http://127.0.0.1:${port}/example.v1.ExampleService/LookupIP`]);
  const failed = Number(/(\d+) failed/.exec(stdout)?.[1] ?? 'NaN');
  if (failed !== 0 || !/(\d+) 2xx/.test(stdout)) throw new Error(`h2load: ${stdout}`);
  return Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(stdout)![1]);
}

/** wrk: GET /lookup/ip/{ip}, 50 connections, `seconds`; req/s (every answer must be 2xx). */
async function wrkLookup(port: number, key: string, ip: string, seconds: number): Promise<number> {
  const { stdout } = await run(WRK, [
    '-t1',
    '-c50',
    `-d${seconds}s`,
    '-H',
    `x-api-key: ${key}`,
    `http://127.0.0.1:${port}/api/v4/lookup/ip/${ip}`,
  ]);
  if (/Non-2xx|Socket errors/.test(stdout)) throw new Error(`wrk: ${stdout}`);
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)![1]);
}

interface Measured {
  rate: number[];
  /** CPU µs per call of the server process. */
  cpu: number[];
}

async function measure(pid: number, seconds: number, load: () => Promise<number>, into: Measured): Promise<void> {
  const c0 = cpuMs(pid);
  const rate = await load();
  into.rate.push(rate);
  into.cpu.push(((cpuMs(pid) - c0) * 1000) / (rate * seconds));
}

/** h2load and wrk rounds, alternating: umbra LookupIP, bare grpc-js, raw node:http2, umbra HTTP. */
async function cLookups(seconds: number, rounds: number, connections: number) {
  const ip = '8.8.8.8';
  const umbra = await start('bench/servers/umbra-server.ts');
  const { port, grpcPort, key } = umbra.info;
  const sample = await (await fetch(`http://127.0.0.1:${port}/api/v4/lookup/ip/${ip}`, { headers: { 'x-api-key': key } })).text();
  const bare = await start('bench/servers/bare-grpc-server.ts', [sample]);
  const raw = await start('bench/servers/raw-http2-grpc-server.ts', [sample]);
  const frame = lookupFrameFile(ip);
  const m = {
    umbra: { rate: [], cpu: [] },
    bare: { rate: [], cpu: [] },
    raw: { rate: [], cpu: [] },
    http: { rate: [], cpu: [] },
  } as Record<string, Measured>;
  try {
    await h2loadLookup(grpcPort, key, frame, 3, connections);
    await h2loadLookup(bare.info.grpcPort, 'none', frame, 2, connections);
    await h2loadLookup(raw.info.grpcPort, 'none', frame, 2, connections);
    await wrkLookup(port, key, ip, 3);
    for (let r = 0; r < rounds; r++) {
      await measure(umbra.child.pid!, seconds, () => h2loadLookup(grpcPort, key, frame, seconds, connections), m.umbra!);
      await measure(bare.child.pid!, seconds, () => h2loadLookup(bare.info.grpcPort, 'none', frame, seconds, connections), m.bare!);
      await measure(raw.child.pid!, seconds, () => h2loadLookup(raw.info.grpcPort, 'none', frame, seconds, connections), m.raw!);
      await measure(umbra.child.pid!, seconds, () => wrkLookup(port, key, ip, seconds), m.http!);
    }
    return m;
  } finally {
    await stop(raw);
    await stop(bare);
    await stop(umbra);
  }
}

async function lookups(seconds: number, rounds: number) {
  const umbra = await start('bench/servers/umbra-server.ts');
  const client = grpcClient(umbra.info.grpcPort);
  const sample = await fetch(`http://127.0.0.1:${umbra.info.port}/api/v4/lookup/ip/8.8.8.8`, { headers: { 'x-api-key': umbra.info.key } });
  const bare = await start('bench/servers/bare-grpc-server.ts', [await sample.text()]);
  const bareClient = grpcClient(bare.info.grpcPort);
  try {
    await grpcLoad(client, umbra.info.key, 50, 3);
    await grpcLoad(bareClient, '', 50, 2);
    await httpLoad(umbra.info.port, umbra.info.key, 3);
    const g: number[] = [];
    const b: number[] = [];
    const h: number[] = [];
    // Alternating rounds, so a noisy neighbour on the shared machine weighs on all three alike.
    for (let r = 0; r < rounds; r++) {
      g.push(await grpcLoad(client, umbra.info.key, 50, seconds));
      b.push(await grpcLoad(bareClient, '', 50, seconds));
      h.push(await httpLoad(umbra.info.port, umbra.info.key, seconds));
    }
    return { g, b, h };
  } finally {
    client.close();
    bareClient.close();
    await stop(bare);
    await stop(umbra);
  }
}

/** n consumers of the proxies feed over one transport; counts records received. */
async function consumers(server: Server, transport: 'grpc' | 'http', n: number) {
  let delivered = 0;
  const closers: Array<() => void> = [];
  if (transport === 'grpc') {
    const client = grpcClient(server.info.grpcPort);
    const md = new Metadata();
    md.set('x-api-key', server.info.key);
    // Messages are counted, not decoded (the HTTP consumers count lines without parsing JSON either).
    const raw = (b: Buffer) => b;
    for (let i = 0; i < n; i++) {
      const call = client.makeServerStreamRequest('/example.v1.ExampleService/StreamProxies', () => Buffer.alloc(0), raw, {}, md);
      call.on('data', () => delivered++);
      call.on('error', () => undefined);
      closers.push(() => call.cancel());
    }
    closers.push(() => client.close());
    // grpc-js opens calls lazily: give them a moment to reach the server.
    await new Promise((r) => setTimeout(r, 500));
  } else {
    await Promise.all(
      Array.from(
        { length: n },
        () =>
          new Promise<void>((ready, fail) => {
            const req = request(
              {
                host: '127.0.0.1',
                port: server.info.port,
                path: '/api/v4/feeds/proxies/stream',
                headers: { 'x-api-key': server.info.key },
                agent: false,
              },
              (res) => {
                if (res.statusCode !== 200) return fail(new Error(`stream answered ${res.statusCode}`));
                res.on('data', (chunk: Buffer) => {
                  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) delivered++;
                });
                ready();
              },
            );
            req.on('error', fail);
            req.end();
            closers.push(() => req.destroy());
          }),
      ),
    );
  }
  return {
    delivered: () => delivered,
    close: () => {
      for (const f of closers) f();
    },
  };
}

export async function streamed(transport: 'grpc' | 'http', rate: number, seconds: number, n: number) {
  const server = await start('bench/servers/stream-server.ts', ['umbra']);
  try {
    const c = await consumers(server, transport, n);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    server.child.stdin!.write(`publish ${rate} ${seconds}\n`);
    const { published } = JSON.parse(await new Promise<string>((resolve) => server.lines.once('line', resolve))) as { published: number };
    const expected = published * n;
    const deadline = Date.now() + 5000;
    while (c.delivered() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const perSecond = Math.round(c.delivered() / ((performance.now() - t0) / 1000));
    const delivered = c.delivered();
    c.close();
    return { perSecond, delivered, expected };
  } finally {
    await stop(server);
  }
}

export async function benchGrpc(seconds = 5, rounds = 3): Promise<Record<string, number | string>> {
  const c: Record<string, number | string> = {};
  for (const connections of [1, 4]) {
    const m = await cLookups(seconds, rounds, connections);
    const rate = (k: string) => median(m[k]!.rate);
    const cpu = (k: string) => median(m[k]!.cpu);
    const tag = `h2load -c${connections} -m50`;
    c[`${tag}: rounds`] =
      `${rounds} x ${seconds} s, medians; calls/s per round: umbra ${m.umbra!.rate.map(Math.round).join(' / ')}, bare grpc-js ` +
      `${m.bare!.rate.map(Math.round).join(' / ')}, raw http2 ${m.raw!.rate.map(Math.round).join(' / ')}, HTTP (wrk -c50) ${m.http!.rate.map(Math.round).join(' / ')}`;
    c[`${tag}: LookupIP calls/s`] = Math.round(rate('umbra'));
    c[`${tag}: bare grpc-js calls/s`] = Math.round(rate('bare'));
    c[`${tag}: raw node:http2 calls/s`] = Math.round(rate('raw'));
    c[`${tag}: GET /lookup/ip req/s (wrk)`] = Math.round(rate('http'));
    c[`${tag}: LookupIP / bare grpc-js`] = Number((rate('umbra') / rate('bare')).toFixed(3));
    c[`${tag}: LookupIP / HTTP`] = Number((rate('umbra') / rate('http')).toFixed(3));
    c[`${tag}: CPU µs/call umbra, bare, raw, HTTP`] = ['umbra', 'bare', 'raw', 'http'].map((k) => cpu(k).toFixed(1)).join(', ');
    c[`${tag}: CPU ratio bare grpc-js / LookupIP`] = Number((cpu('bare') / cpu('umbra')).toFixed(3));
  }
  const { g, b, h } = await lookups(seconds, rounds);
  const rate = 10_000; // proxies records/s published: × 20 consumers = 200,000 deliveries/s offered
  const viaGrpc = await streamed('grpc', rate, seconds, 20);
  const viaHttp = await streamed('http', rate, seconds, 20);
  return {
    ...c,
    'JS clients: rounds':
      `${rounds} x ${seconds} s, medians; per round: gRPC ${g.map(Math.round).join(' / ')}, bare grpc-js ` +
      `${b.map(Math.round).join(' / ')}, HTTP ${h.map(Math.round).join(' / ')}`,
    'LookupIP calls/s (one channel, 50 in flight)': Math.round(median(g)),
    'GET /lookup/ip req/s (50 connections), same run': Math.round(median(h)),
    'gRPC / HTTP ratio': Number((median(g) / median(h)).toFixed(3)),
    'bare grpc-js fixed answer calls/s, same run': Math.round(median(b)),
    'LookupIP / bare grpc-js ratio': Number((median(g) / median(b)).toFixed(3)),
    'published proxies records/s': rate,
    'StreamProxies events/s, 20 calls': viaGrpc.perSecond,
    'StreamProxies delivered / expected': `${viaGrpc.delivered} / ${viaGrpc.expected}`,
    'HTTP NDJSON events/s, 20 consumers, same run': viaHttp.perSecond,
    'HTTP delivered / expected': `${viaHttp.delivered} / ${viaHttp.expected}`,
    'gRPC / HTTP streamed ratio': Number((viaGrpc.perSecond / viaHttp.perSecond).toFixed(3)),
  };
}
