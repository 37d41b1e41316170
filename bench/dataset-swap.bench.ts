// Issue 5: a paced lookup load (4,000 req/s, about a third of what this server answers on the 2-core
// VM) over real sockets while the server swaps in a rebuilt dataset (the real one, 150 MB, loaded in a
// low-priority worker thread). To see where time goes: BENCH_TIMELINE=1 prints latency per 50 ms
// around the swap, BENCH_GAPS=1 the server's event-loop stalls, BENCH_TRACE_GC=1 its GC trace. p99 of the requests completed while the swap runs (SIGHUP until
// the first answer from the new version, plus one second) against p99 of an equal window just before;
// target: not more than doubled, zero errors.
import { spawn } from 'node:child_process';
import { copyFileSync, linkSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mulberry32 } from '../src/lib/prng.ts';
import { readDatasetHeader } from '../src/modules/intel/ip-dataset.ts';
import { ensureRealDataset } from '../src/modules/intel/test-dataset.ts';
import { restampDataset } from '../test/helpers/dataset-files.ts';
import { lookupLoad, percentile, type LoadSample } from '../test/helpers/lookup-load.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchDatasetSwap(connections = 32, ratePerSec = 4_000): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-swap-bench-'));
  const file = join(dir, 'ip-dataset.bin');
  copyFileSync(await ensureRealDataset(), file);
  const child = spawn(process.execPath, [...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : []), '--import', 'tsx', 'bench/servers/umbra-server.ts', '--dataset-file', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const info = JSON.parse(await new Promise<string>((resolve, reject) => {
      // With BENCH_TRACE_GC=1 the server's GC trace shares its stdout: pass it on to stderr.
      createInterface({ input: child.stdout! }).on('line', (l) => (l.startsWith('{"port"') ? resolve(l) : process.stderr.write(`${l}\n`)));
      child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    })) as { port: number; key: string };
    const random = mulberry32(11);
    const ips = Array.from({ length: 20_000 }, () => `${1 + Math.floor(random() * 222)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`);
    const built = readDatasetHeader(file).info.built_at;
    const version = async () => (await fetch(`http://127.0.0.1:${info.port}/api/v4/lookup/ip/8.8.8.8`, { headers: { 'x-api-key': info.key } })).headers.get('x-data-version');
    // Also loads fetch's client now, which on first use takes this process's event loop for tens of
    // ms and would show as server latency in the swap window.
    let current = await version();
    // Warm up (JIT, caches), then under the paced load: a quiet window, a swap, a quiet window, a swap.
    const warm = lookupLoad(info.port, info.key, ips, connections);
    await sleep(3_000);
    await warm.stop();
    const load = lookupLoad(info.port, info.key, ips, connections, ratePerSec);
    const swaps: Array<{ quietFrom: number; signalled: number; swappedAt: number }> = [];
    for (const k of [1, 2]) {
      // The rebuilt file is prepared first (writing 150 MB would hold this client's loop) and renamed
      // into place as `umbra data build` does. The replaced file stays linked under another name:
      // dropping its page cache is work for whoever unlinks it (the build), not for the server.
      const next = join(dir, `next-${k}.bin`);
      restampDataset(file, next, built + 86_400 * k);
      await sleep(4_000);
      const quietFrom = performance.now() - 3_000;
      linkSync(file, join(dir, `previous-${k}.bin`));
      renameSync(next, file);
      const signalled = performance.now();
      child.kill('SIGHUP');
      let swappedAt = 0;
      while (swappedAt === 0 && performance.now() - signalled < 60_000) {
        const v = await version();
        if (v !== current) {
          swappedAt = performance.now();
          current = v;
        } else await sleep(20);
      }
      if (swappedAt === 0) throw new Error('the server did not swap the dataset in within 60 s');
      swaps.push({ quietFrom, signalled, swappedAt });
      await sleep(1_500);
    }
    const samples = (await load.stop()).flat();

    if (process.env.BENCH_TIMELINE) {
      for (const { signalled, swappedAt } of swaps) {
        for (let t = signalled - 500; t < swappedAt + 1500; t += 50) {
          const w = samples.filter((x) => x.at >= t && x.at < t + 50).map((x) => x.ms).sort((a, b) => a - b);
          console.log(`t=${Math.round(t - signalled)} n=${w.length} p50=${w[Math.floor(w.length / 2)]?.toFixed(2)} max=${w[w.length - 1]?.toFixed(1)}`);
        }
      }
    }
    const between = (from: number, to: number) => samples.filter((s: LoadSample) => s.at >= from && s.at < to);
    const p99 = (xs: LoadSample[]) => percentile(xs.map((s) => s.ms), 99);
    const figures: Record<string, number | string> = {
      'requests in the load': samples.length,
      'failed requests (any window)': samples.filter((s) => s.status !== 200).length,
    };
    swaps.forEach(({ quietFrom, signalled, swappedAt }, i) => {
      const quiet = between(quietFrom, signalled);
      const during = between(signalled, swappedAt + 1_000);
      const name = i === 0 ? 'first swap (spare arena touched for the first time)' : 'second swap (arenas reused)';
      figures[`${name}: SIGHUP to first new answer (ms)`] = Math.round(swappedAt - signalled);
      figures[`${name}: p99 before / during (ms)`] = `${p99(quiet).toFixed(2)} / ${p99(during).toFixed(2)}`;
      figures[`${name}: max during (ms)`] = during.reduce((m, s) => Math.max(m, s.ms), 0).toFixed(1);
      figures[`${name}: p99 ratio (target <= 2)`] = (p99(during) / p99(quiet)).toFixed(2);
    });
    return figures;
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
