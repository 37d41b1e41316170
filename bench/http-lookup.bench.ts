// Issue 2 figures: single-lookup req/s against bare node:http (ratio), and 1,000-address batch latency.
// The servers stay up and are loaded in alternating rounds, so a noisy neighbour on the shared machine
// weighs on all sides alike; each figure is the median of the rounds.
// The baseline answers the very requests umbra gets (same paths, same x-api-key header), so the ratio
// compares what the two servers do with one request; the client's cost of sending it is the same on
// both sides. Three more figures explain the gap: the same bare server asked for `/` with no key (the
// request's own cost, client and parser), bare node:http sending umbra's response header set with fixed
// values (node's own cost of those headers), and umbra with the lookup fast path off.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

interface Started {
  child: ChildProcess;
  info: { port: number; key?: string };
}

async function start(script: string, args: string[] = []): Promise<Started> {
  const child = spawn(process.execPath, [SEMI_SPACE_FLAG, '--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return { child, info: JSON.parse(line) };
}

const stop = (s: Started) =>
  new Promise<void>((r) => {
    s.child.once('exit', () => r());
    s.child.kill('SIGTERM');
  });

function load(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

/** User + system CPU time of a process in ms, from /proc (Linux; undefined elsewhere). */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5) (utime, stime) in clock ticks, which are 100 per second on Linux.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Loads a server for `seconds` and reports req/s and the server's CPU µs per request. */
async function measure(
  s: Started,
  opts: autocannon.Options,
  seconds: number,
): Promise<{ result: autocannon.Result; cpuUs: number | undefined }> {
  const before = cpuMs(s.child.pid);
  const result = await load({ ...opts, duration: seconds });
  const after = cpuMs(s.child.pid);
  const cpuUs = before === undefined || after === undefined ? undefined : ((after - before) * 1000) / result.requests.total;
  return { result, cpuUs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const ADDRESSES = ['8.8.8.8', '1.1.1.1', '81.2.69.160', '2001:4860:4860::8888', '185.220.101.1', '104.16.0.1'];

export async function benchHttpLookup(seconds = 8, rounds = 3): Promise<Record<string, number | string>> {
  const umbra = await start('bench/servers/umbra-server.ts');
  const base = `http://127.0.0.1:${umbra.info.port}/api/v4`;
  const headers = { 'x-api-key': umbra.info.key! };
  const sample = await fetch(`${base}/lookup/ip/8.8.8.8`, { headers });
  if (sample.status !== 200) throw new Error(`umbra lookup answered ${sample.status}`);
  const sampleBody = await sample.text();
  const requests = ADDRESSES.map((ip) => ({ method: 'GET' as const, path: `/api/v4/lookup/ip/${ip}`, headers }));

  // umbra's own headers (request id, RateLimit-*, credits, data version) with this answer's values.
  const ownHeaders: Record<string, string> = {};
  for (const [name, value] of sample.headers)
    if (!['date', 'connection', 'keep-alive', 'content-type', 'content-length', 'transfer-encoding'].includes(name))
      ownHeaders[name] = value;

  const bare = await start('bench/servers/bare-server.ts', [sampleBody]);
  const bareHeaders = await start('bench/servers/bare-server.ts', [sampleBody, JSON.stringify(ownHeaders)]);
  const viaFastify = await start('bench/servers/umbra-server.ts', ['--no-fast-path']);
  const umbraOpts = { url: `http://127.0.0.1:${umbra.info.port}`, requests, connections: 50 };
  const bareOpts = { url: `http://127.0.0.1:${bare.info.port}`, requests, connections: 50 };
  const bareRootOpts = { url: `http://127.0.0.1:${bare.info.port}`, connections: 50 };
  const bareHeadersOpts = { url: `http://127.0.0.1:${bareHeaders.info.port}`, requests, connections: 50 };
  const fastifyHeaders = { 'x-api-key': viaFastify.info.key! };
  const fastifyOpts = {
    url: `http://127.0.0.1:${viaFastify.info.port}`,
    requests: requests.map((r) => ({ ...r, headers: fastifyHeaders })),
    connections: 50,
  };

  // Warm up all three (JIT, caches), then alternate measured rounds.
  await load({ ...umbraOpts, duration: 4 });
  await load({ ...fastifyOpts, duration: 4 });
  await load({ ...bareOpts, duration: 2 });
  await load({ ...bareHeadersOpts, duration: 2 });
  type Measured = Awaited<ReturnType<typeof measure>>;
  const singles: Measured[] = [];
  const bares: Measured[] = [];
  const bareRoots: Measured[] = [];
  const bareHeaderSets: Measured[] = [];
  const fastifies: Measured[] = [];
  for (let round = 0; round < rounds; round++) {
    singles.push(await measure(umbra, umbraOpts, seconds));
    bares.push(await measure(bare, bareOpts, seconds));
    bareHeaderSets.push(await measure(bareHeaders, bareHeadersOpts, seconds));
    bareRoots.push(await measure(bare, bareRootOpts, seconds));
    fastifies.push(await measure(viaFastify, fastifyOpts, seconds));
  }
  await stop(bare);
  await stop(bareHeaders);
  await stop(viaFastify);

  const ips = Array.from({ length: 1000 }, (_, i) => `${1 + (i % 223)}.${(i * 7) & 255}.${(i * 13) & 255}.${i & 255}`);
  const batchBody = JSON.stringify({ ips });
  const batchOpts = {
    url: `${base}/lookup/ips`,
    method: 'POST' as const,
    headers: { ...headers, 'content-type': 'application/json' },
    body: batchBody,
    connections: 1,
  };
  await load({ ...batchOpts, amount: 50 });
  const batch = await load({ ...batchOpts, amount: 300 });
  if (batch.non2xx > 0) throw new Error(`batch answered non-2xx ${batch.non2xx} times`);
  await stop(umbra);

  for (const { result } of [...singles, ...fastifies])
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`lookup load saw ${result.non2xx} non-2xx and ${result.errors} errors`);
  for (const { result } of [...bares, ...bareRoots, ...bareHeaderSets])
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`baseline load saw ${result.non2xx} non-2xx and ${result.errors} errors`);
  const perSecond = (ms: Measured[]) => ms.map((m) => m.result.requests.average);
  const rps = perSecond(singles);
  const bareRps = perSecond(bares);
  const ratio = (num: number[], den: number[]) => Number(median(num.map((r, i) => r / den[i]!)).toFixed(3));
  const ratioTo = (ms: Measured[]) => ratio(perSecond(ms), bareRps);
  const cpu = (ms: Measured[]) => (ms.every((m) => m.cpuUs !== undefined) ? Number(median(ms.map((m) => m.cpuUs!)).toFixed(1)) : 'n/a');
  const perRound = (ms: Measured[]) => perSecond(ms).map(Math.round).join(' / ');
  return {
    rounds: `${rounds} x ${seconds} s, medians; per round: ${perRound(singles)} vs ${perRound(bares)}`,
    'lookup.ip req/s': Math.round(median(rps)),
    'bare node:http req/s, same requests': Math.round(median(bareRps)),
    'lookup.ip / bare ratio (target >= 0.7)': ratioTo(singles),
    'lookup.ip server CPU us/request': cpu(singles),
    'bare node:http server CPU us/request': cpu(bares),
    'bare, GET / with no key: req/s': `${Math.round(median(perSecond(bareRoots)))} (rounds ${perRound(bareRoots)})`,
    'lookup.ip / bare GET / ratio': ratio(rps, perSecond(bareRoots)),
    'bare with umbra header set: req/s': `${Math.round(median(perSecond(bareHeaderSets)))} (rounds ${perRound(bareHeaderSets)})`,
    'bare with umbra header set: ratio to bare': ratioTo(bareHeaderSets),
    'bare with umbra header set: CPU us/request': cpu(bareHeaderSets),
    'without the fast path: req/s': `${Math.round(median(perSecond(fastifies)))} (rounds ${perRound(fastifies)})`,
    'without the fast path: ratio to bare': ratioTo(fastifies),
    'without the fast path: CPU us/request': cpu(fastifies),
    'lookup.ip p99 ms (50 connections)': median(singles.map((m) => m.result.latency.p99)),
    'batch 1000 p50 ms (target < 10)': batch.latency.p50,
    'batch 1000 p99 ms': batch.latency.p99,
  };
}
