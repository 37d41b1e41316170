// One umbra node for the distributed-mode bench, embedded or distributed as the environment says
// (UMBRA_STORAGE and the engines' settings, as `umbra serve` reads them), with the real IP dataset.
// `--setup`: creates the bench team (credits 1e12, buckets raised so the load measures the service, not
// the 100/s default) and two keys, a BASIC one for lookups and a PROXY_FIREHOSE one for streams; a
// second distributed node is started without it and uses the same keys from PostgreSQL.
// First stdout line: { port, key?, streamKey? }. On stdin `ingest <records/s> <seconds>` ingests proxies
// records through the node's IngestService (validation, the feed log, delivery), paced by the clock in
// batches about every 5 ms; record `seq` has the address `a.b.c.7` with seq = (a-1)·65536 + b·256 + c,
// and its append time (epoch ms, performance based) is reported back: { published, appendedAt: [...] }.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../../test/helpers/test-dataset.ts';

// UMBRA_BENCH_BUILD=dist: the compiled build that `umbra serve` runs (npm run build first); else the sources under tsx.
const root = process.env.UMBRA_BENCH_BUILD === 'dist' ? '../../dist' : '../../src';
const ext = root.endsWith('dist') ? 'js' : 'ts';
const { buildApp } = (await import(`${root}/app.${ext}`)) as typeof import('../../src/app.ts');
const { parseConfig } = (await import(`${root}/config.${ext}`)) as typeof import('../../src/config.ts');
const { loadDataset } = (await import(
  `${root}/modules/dataset/dataset-reader.${ext}`
)) as typeof import('../../src/modules/dataset/dataset-reader.ts');
const { FEEDS } = (await import(`${root}/modules/feeds/feed-catalog.${ext}`)) as typeof import('../../src/modules/feeds/feed-catalog.ts');
const { createStores } = (await import(`${root}/storage/index.${ext}`)) as typeof import('../../src/storage/index.ts');
const { MemoryRateLimiter } = (await import(
  `${root}/storage/embedded/memory-rate-limiter.${ext}`
)) as typeof import('../../src/storage/embedded/memory-rate-limiter.ts');

const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-node-'));
const config = parseConfig({ ...process.env, UMBRA_DATA_DIR: dir, UMBRA_LOG_LEVEL: 'warn', UMBRA_STREAM_BUFFER: '1000000' });
// A diagnosis, not a deployment: `--memory-limiter`: this node's rate buckets in process instead of
// Redis, everything else as configured, to tell what the shared buckets cost a lookup.
let stores: Awaited<ReturnType<typeof createStores>> | undefined;
if (process.argv.includes('--memory-limiter')) stores = { ...(await createStores(config)), limiter: new MemoryRateLimiter() };
const app = await buildApp(config, { dataset: loadDataset(await ensureRealDataset()), stores });
const out: { port?: number; key?: string; streamKey?: string } = {};
if (process.argv.includes('--setup')) {
  const org = await app.services.admin.createOrg({ name: 'bench', credits: 1e12, maxStreams: 1000 });
  for (const bucket of ['lookup', 'domain', 'account', 'stream'])
    await app.services.admin.setLimit(org.id, bucket, { rate: 1e6, burst: 1e6 });
  out.key = (await app.services.admin.createKey({ org: org.id, email: 'bench@umbra.local', scopes: ['BASIC'] })).secret;
  out.streamKey = (
    await app.services.admin.createKey({ org: org.id, email: 'streams@umbra.local', scopes: ['BASIC', 'PROXY_FIREHOSE'] })
  ).secret;
}
await app.http.listen({ port: 0, host: '127.0.0.1' });
out.port = (app.http.server.address() as { port: number }).port;
process.stdout.write(`${JSON.stringify(out)}\n`);

const now = () => performance.timeOrigin + performance.now();
createInterface({ input: process.stdin }).on('line', async (line) => {
  const [cmd, rate, seconds] = line.split(' ');
  if (cmd !== 'ingest') return;
  const start = Date.now();
  const end = start + Number(seconds) * 1000;
  const appendedAt: number[] = [];
  let rejected = 0;
  let n = 0;
  while (Date.now() < end) {
    const owed = Math.floor(((Date.now() - start) / 1000) * Number(rate)) - n;
    const s = Math.floor(Date.now() / 1000);
    const items = [];
    for (let i = 0; i < owed; i++, n++) {
      const ip = `${1 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}.7`;
      const text = `{"ip":"${ip}","provider":"BRIGHTDATA","type":"RESIDENTIAL_PROXY","timestamp":${s},"country_code":"US","asn":7922}`;
      items.push({ n: n + 1, text });
    }
    if (items.length > 0) {
      const t = now();
      for (let i = 0; i < items.length; i++) appendedAt.push(t);
      rejected += (await app.services.ingest.ingest(FEEDS.proxies, [items])).rejected;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  process.stdout.write(`${JSON.stringify({ published: n, rejected, appendedAt })}\n`);
});

process.on('SIGTERM', () => {
  void app
    .close()
    .catch((e: Error) => process.stderr.write(`close: ${e.message}\n`))
    .finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
});
