// umbra on the embedded default with the real IP dataset: auth, rate limits and credits all on,
// with the bench team's limits raised so the load measures the service, not the 100/s bucket.
// `--no-fast-path`: every request through fastify's pipeline (the lookup fast path off), for comparison.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRealDataset } from '../../test/helpers/test-dataset.ts';

// UMBRA_BENCH_BUILD=dist: the compiled build that `umbra serve` runs (npm run build first); else the sources under tsx.
const root = process.env.UMBRA_BENCH_BUILD === 'dist' ? '../../dist' : '../../src';
const ext = root.endsWith('dist') ? 'js' : 'ts';
const { buildApp } = (await import(`${root}/app.${ext}`)) as typeof import('../../src/app.ts');
const { parseConfig } = (await import(`${root}/config.${ext}`)) as typeof import('../../src/config.ts');
const { loadDataset } = (await import(
  `${root}/modules/dataset/dataset-reader.${ext}`
)) as typeof import('../../src/modules/dataset/dataset-reader.ts');
const { DatasetLoader } = (await import(
  `${root}/modules/dataset/dataset-loader.${ext}`
)) as typeof import('../../src/modules/dataset/dataset-loader.ts');

const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-'));
const config = parseConfig({ UMBRA_DATA_DIR: dir, UMBRA_LOG_LEVEL: 'warn' });
// `--dataset-file F`: serve (and watch) a copy of the dataset at F; SIGHUP reloads it, as `umbra serve` does.
const fileArg = process.argv.indexOf('--dataset-file');
const datasetFile = fileArg > 0 ? process.argv[fileArg + 1] : undefined;
// With a watched file, loaded as `umbra serve` loads it: through the loader whose memory swaps reuse.
const loader = datasetFile ? new DatasetLoader() : undefined;
loader?.reserve(datasetFile!);
const app = await buildApp(config, {
  dataset: loader ? await loader.load(datasetFile!) : loadDataset(await ensureRealDataset()),
  datasetFile,
  datasetLoader: loader,
  datasetRefreshMs: 3_600_000,
  fastPath: !process.argv.includes('--no-fast-path'),
});
process.on('SIGHUP', () => void app.reloadDataset());
const org = await app.services.admin.createOrg({ name: 'bench', credits: 1e12 });
for (const bucket of ['lookup', 'domain', 'account']) await app.services.admin.setLimit(org.id, bucket, { rate: 1e6, burst: 1e6 });
const { secret } = await app.services.admin.createKey({ org: org.id, email: 'bench@umbra.local', scopes: ['BASIC'] });
await app.http.listen({ port: 0, host: '127.0.0.1' });
// The gRPC mirror on the same app (same guard, buckets and ledger), plaintext on 127.0.0.1.
const grpcPort = await app.grpc.listen('127.0.0.1', 0);
process.stdout.write(`${JSON.stringify({ port: (app.http.server.address() as { port: number }).port, grpcPort, key: secret })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
// BENCH_GAPS=1: log every event-loop stall over 8 ms to stderr (used to find what a dataset swap holds up).
if (process.env.BENCH_GAPS) {
  let last = performance.now();
  setInterval(() => {
    const n = performance.now();
    if (n - last > 8) process.stderr.write(`GAP ${Math.round(n - last)}ms at ${Math.round(n)}\n`);
    last = n;
  }, 2).unref();
  process.on('SIGHUP', () => process.stderr.write(`SIGHUP at ${Math.round(performance.now())}\n`));
}
