// Issue 3 figures: ingestion records/s into the durable log, and fan-out to 100 stream consumers,
// each against a baseline measured in the same run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { FEEDS } from '../src/modules/feeds/feed-catalog.ts';
import { RecordValidator } from '../src/modules/feeds/feed-records.ts';
import { IngestService } from '../src/modules/feeds/ingest-service.ts';
import { ndjsonFromBytes } from '../src/modules/feeds/line-splitter.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { MemoryFeedBus } from '../src/storage/embedded/memory-feed-bus.ts';

const RECORDS = 500_000;

export async function benchIngestion(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-ingest-'));
  const now = Date.now();
  const s = Math.floor(now / 1000);
  const lines: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    lines.push(
      JSON.stringify({
        ip: `${1 + (i % 223)}.${(i >> 8) & 255}.${(i >> 16) & 255}.${i & 255}`,
        provider: 'BRIGHTDATA',
        type: 'RESIDENTIAL_PROXY',
        timestamp: s - (i % 3600),
        country_code: 'US',
        asn: 7922,
      }),
    );
  }
  const body = Buffer.from(`${lines.join('\n')}\n`);
  const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));

  // Baseline: the same bytes written and fdatasync'ed once, with no parsing or validation.
  const t0 = performance.now();
  const fh = await open(join(dir, 'raw.ndjson'), 'a');
  for (const c of chunks) await fh.write(c);
  await fh.datasync();
  await fh.close();
  const rawS = (performance.now() - t0) / 1000;

  const log = new FileFeedLog(join(dir, 'feeds'));
  const service = new IngestService(log, new MemoryFeedBus(), new RecordValidator(() => now), { warn: () => {} });
  const t1 = performance.now();
  const summary = await service.ingest(FEEDS.proxies, ndjsonFromBytes(chunks));
  const ingestS = (performance.now() - t1) / 1000;
  await log.close();
  rmSync(dir, { recursive: true, force: true });
  if (summary.accepted !== RECORDS) throw new Error(`accepted ${summary.accepted} of ${RECORDS}`);
  return {
    records: RECORDS,
    'ingestion records/s (target >= 200,000)': Math.round(RECORDS / ingestS),
    'baseline: raw write+fsync records/s': Math.round(RECORDS / rawS),
    'ingestion / raw write ratio': Number((rawS / ingestS).toFixed(3)),
  };
}

interface Server {
  child: ChildProcess;
  lines: Interface;
  info: { port: number; key: string };
}

async function startServer(mode: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/stream-server.ts', mode], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve) => lines.once('line', resolve));
  return { child, lines, info: JSON.parse(first) };
}

/**
 * Opens n NDJSON consumers. Each counts lines in the raw bytes; four of them (first, last and two in
 * between, since the server writes to subscribers in turn) also decode every line to measure
 * publish-to-delivery latency from its `t`.
 */
function consumers(port: number, path: string, key: string, n: number) {
  const latencies: number[] = [];
  const closers: Array<() => void> = [];
  const sampled = new Set([0, Math.floor(n / 3), Math.floor((2 * n) / 3), n - 1]);
  let delivered = 0;
  const reqs = Array.from(
    { length: n },
    (_, c) =>
      new Promise<void>((ready, fail) => {
        const req = request({ host: '127.0.0.1', port, path, headers: { 'x-api-key': key }, agent: false }, (res) => {
          if (res.statusCode !== 200) return fail(new Error(`stream answered ${res.statusCode}`));
          let rest = '';
          res.on('data', (chunk: Buffer) => {
            if (!sampled.has(c)) {
              for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) delivered++;
              return;
            }
            const at = performance.timeOrigin + performance.now();
            const text = rest + chunk.toString('utf8');
            let start = 0;
            for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
              delivered++;
              if (nl > start) latencies.push(at - (JSON.parse(text.slice(start, nl)) as { t: number }).t);
              start = nl + 1;
            }
            rest = text.slice(start);
          });
          ready();
        });
        req.on('error', fail);
        req.end();
        closers.push(() => req.destroy());
      }),
  );
  return {
    ready: Promise.all(reqs),
    delivered: () => delivered,
    latencies,
    close: () => {
      for (const f of closers) f();
    },
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Number((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN).toFixed(2));
};

async function fanOut(mode: string, rate: number, seconds: number) {
  const server = await startServer(mode);
  try {
    return await measure(server, mode, rate, seconds);
  } finally {
    server.child.kill('SIGTERM');
  }
}

async function measure(server: Server, mode: string, rate: number, seconds: number) {
  const path = mode === 'bare' ? '/' : '/api/v4/feeds/proxies/stream';
  const c = consumers(server.info.port, path, server.info.key, 100);
  await c.ready;
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  server.child.stdin!.write(`publish ${rate} ${seconds}\n`);
  const done = JSON.parse(await new Promise<string>((resolve) => server.lines.once('line', resolve))) as { published: number };
  // Let the tail arrive.
  const expected = done.published * 100;
  const deadline = Date.now() + 5000;
  while (c.delivered() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  // Over the publishing window plus the time the tail took to arrive.
  const elapsed = (performance.now() - t0) / 1000;
  c.close();
  return {
    published: done.published,
    delivered: c.delivered(),
    expected,
    perSecond: Math.round(c.delivered() / elapsed),
    p50: pct(c.latencies, 50),
    p99: pct(c.latencies, 99),
  };
}

export async function benchFanOut(seconds = 6): Promise<Record<string, number | string>> {
  const rate = 5_500; // records/s into one feed: × 100 consumers = 550,000 deliveries/s offered
  const umbra = await fanOut('umbra', rate, seconds);
  const bare = await fanOut('bare', rate, seconds);
  return {
    'published records/s (one feed)': rate,
    'umbra delivered events/s, 100 consumers (target >= 500,000)': umbra.perSecond,
    'umbra delivered / expected': `${umbra.delivered} / ${umbra.expected}`,
    'umbra publish-to-delivery p50 / p99 ms (target p99 < 50)': `${umbra.p50} / ${umbra.p99}`,
    'baseline bare node:http delivered events/s': bare.perSecond,
    'baseline p50 / p99 ms': `${bare.p50} / ${bare.p99}`,
    'umbra / bare ratio': Number((umbra.perSecond / bare.perSecond).toFixed(3)),
  };
}
