// The @umbra/client SDK against a local umbra: addresses/s of lookupMany (batches of 1,000, 4 in flight)
// against a hand-written fetch loop doing the same batches (the baseline), alternated A/B; and events/s
// of one SDK stream consumer against one raw node:http line counter on the same stream at the same time.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createInterface, type Interface } from 'node:readline';
import { UmbraClient } from '../clients/typescript/src/index.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

interface Child {
  child: ChildProcess;
  lines: Interface;
  info: { port: number; key: string };
}

async function start(script: string, args: string[] = []): Promise<Child> {
  const child = spawn(process.execPath, [SEMI_SPACE_FLAG, '--import', 'tsx', script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve) => lines.once('line', resolve));
  return { child, lines, info: JSON.parse(first) };
}

const N = 100_000;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
};
const ips = Array.from({ length: N }, (_, i) => `${1 + (i % 223)}.${(i >> 8) & 255}.${i & 255}.${(i * 7) & 255}`);

async function rawBatches(base: string, key: string, concurrency: number): Promise<number> {
  let next = 0;
  let results = 0;
  const worker = async () => {
    while (next < N) {
      const from = next;
      next += 1000;
      const res = await fetch(`${base}/api/v4/lookup/ips`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ ips: ips.slice(from, from + 1000) }),
      });
      if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
      results += ((await res.json()) as { results: unknown[] }).results.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

export async function benchClient(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const lookup = await start('bench/servers/umbra-server.ts');
  try {
    const base = `http://127.0.0.1:${lookup.info.port}`;
    const client = new UmbraClient({ apiKey: lookup.info.key, baseUrl: base, concurrency: 4 });
    await client.lookupMany(ips.slice(0, 5000));
    await rawBatches(base, lookup.info.key, 4);
    const sdk: number[] = [];
    const raw: number[] = [];
    const runSdk = async () => {
      const t = performance.now();
      const r = await client.lookupMany(ips);
      sdk.push(N / ((performance.now() - t) / 1000));
      if (r.results.some((x) => x === undefined)) throw new Error('an address went unanswered');
    };
    const runRaw = async () => {
      const t = performance.now();
      await rawBatches(base, lookup.info.key, 4);
      raw.push(N / ((performance.now() - t) / 1000));
    };
    // A/B alternated, the order swapped every round, so neither always runs on the other's garbage.
    for (let round = 0; round < 6; round++) {
      if (round % 2 === 0) {
        await runSdk();
        await runRaw();
      } else {
        await runRaw();
        await runSdk();
      }
    }
    const best = (xs: number[]) => Math.round(Math.max(...xs));
    const ratios = sdk.map((s, i) => s / raw[i]!);
    out['SDK lookupMany 100,000 IPs, IPs/s (best of 6)'] = best(sdk);
    out['baseline fetch loop, same batches, IPs/s (best of 6)'] = best(raw);
    out['SDK / baseline ratio per round (A/B alternated)'] = ratios.map((r) => r.toFixed(2)).join(', ');
    out['SDK / baseline ratio, median'] = Number(median(ratios).toFixed(3));
  } finally {
    lookup.child.kill('SIGTERM');
  }
  return { ...out, ...(await benchClientStream()) };
}

export async function benchClientStream(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const streams = await start('bench/servers/stream-server.ts', ['umbra']);
  try {
    const { port, key } = streams.info;
    const stop = new AbortController();
    let sdkEvents = 0;
    const client = new UmbraClient({ apiKey: key, baseUrl: `http://127.0.0.1:${port}` });
    const consuming = (async () => {
      for await (const _ of client.stream('proxies', { signal: stop.signal })) sdkEvents++;
    })();
    let rawEvents = 0;
    const req = request({ host: '127.0.0.1', port, path: '/api/v4/feeds/proxies/stream', headers: { 'x-api-key': key } }, (res) =>
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rawEvents++;
      }),
    );
    req.end();
    await new Promise((r) => setTimeout(r, 500));
    const rate = 100_000;
    const seconds = 5;
    const t0 = performance.now();
    streams.child.stdin!.write(`publish ${rate} ${seconds}\n`);
    const { published } = JSON.parse(await new Promise<string>((resolve) => streams.lines.once('line', resolve))) as { published: number };
    const deadline = Date.now() + 10_000;
    while ((sdkEvents < published || rawEvents < published) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const elapsed = (performance.now() - t0) / 1000;
    stop.abort();
    req.destroy();
    await consuming;
    out['stream: published records (one feed)'] = published;
    out['SDK stream consumer events/s (parsed records)'] = Math.round(sdkEvents / elapsed);
    out['baseline raw line counter events/s'] = Math.round(rawEvents / elapsed);
    out['delivered SDK / raw / published'] = `${sdkEvents} / ${rawEvents} / ${published}`;
    out['SDK / baseline ratio'] = Number((sdkEvents / Math.max(1, rawEvents)).toFixed(3));
  } finally {
    streams.child.kill('SIGTERM');
  }
  return out;
}
