// Issue 2 figures: single-lookup req/s against bare node:http (ratio), and 1,000-address batch latency.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

interface Started { child: ChildProcess; info: { port: number; key?: string } }

async function start(script: string, args: string[] = []): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return { child, info: JSON.parse(line) };
}

const stop = (s: Started) => new Promise<void>((r) => { s.child.once('exit', () => r()); s.child.kill('SIGTERM'); });

function load(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

const ADDRESSES = ['8.8.8.8', '1.1.1.1', '81.2.69.160', '2001:4860:4860::8888', '185.220.101.1', '104.16.0.1'];

export async function benchHttpLookup(seconds = 8): Promise<Record<string, number | string>> {
  const umbra = await start('bench/servers/umbra-server.ts');
  const base = `http://127.0.0.1:${umbra.info.port}/api/v4`;
  const headers = { 'x-api-key': umbra.info.key! };
  const sample = await fetch(`${base}/lookup/ip/8.8.8.8`, { headers });
  if (sample.status !== 200) throw new Error(`umbra lookup answered ${sample.status}`);
  const sampleBody = await sample.text();
  const requests = ADDRESSES.map((ip) => ({ method: 'GET' as const, path: `/api/v4/lookup/ip/${ip}`, headers }));

  // Warm up, then measure umbra.
  await load({ url: `http://127.0.0.1:${umbra.info.port}`, requests, connections: 50, duration: 2 });
  const single = await load({ url: `http://127.0.0.1:${umbra.info.port}`, requests, connections: 50, duration: seconds });

  const ips = Array.from({ length: 1000 }, (_, i) => `${1 + (i % 223)}.${(i * 7) & 255}.${(i * 13) & 255}.${i & 255}`);
  const batchBody = JSON.stringify({ ips });
  const batchOpts = { url: `${base}/lookup/ips`, method: 'POST' as const, headers: { ...headers, 'content-type': 'application/json' }, body: batchBody, connections: 1 };
  await load({ ...batchOpts, amount: 50 });
  const batch = await load({ ...batchOpts, amount: 300 });
  if (batch.non2xx > 0) throw new Error(`batch answered non-2xx ${batch.non2xx} times`);
  await stop(umbra);

  const bare = await start('bench/servers/bare-server.ts', [sampleBody]);
  await load({ url: `http://127.0.0.1:${bare.info.port}`, connections: 50, duration: 2 });
  const baseline = await load({ url: `http://127.0.0.1:${bare.info.port}`, connections: 50, duration: seconds });
  await stop(bare);

  if (single.non2xx > 0 || single.errors > 0) throw new Error(`lookup load saw ${single.non2xx} non-2xx and ${single.errors} errors`);
  return {
    'lookup.ip req/s': Math.round(single.requests.average),
    'bare node:http req/s': Math.round(baseline.requests.average),
    'lookup.ip / bare ratio (target >= 0.7)': Number((single.requests.average / baseline.requests.average).toFixed(3)),
    'lookup.ip p99 ms (50 connections)': single.latency.p99,
    'batch 1000 p50 ms (target < 10)': batch.latency.p50,
    'batch 1000 p99 ms': batch.latency.p99,
  };
}
