// Issue 5: a paced lookup load (4,000 req/s, about a third of what this server answers on the 2-core
// VM) over real sockets, from a client process of its own (bench/load-client.ts), while the server swaps in a rebuilt dataset (the real
// one, 150 MB, loaded in a
// low-priority worker thread). To see where time goes: BENCH_TIMELINE=1 prints latency per 50 ms
// around the swap, BENCH_GAPS=1 the server's event-loop stalls, BENCH_TRACE_GC=1 its GC trace, BENCH_SERVER_FLAGS="--cpu-prof ..." passes
// node flags to the server. p99 of the requests completed while the swap runs (SIGHUP until
// the first answer from the new version, plus one second) against p99 of an equal window just before;
// target: not more than doubled, zero errors.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mulberry32 } from '../src/lib/prng.ts';
import { readDatasetHeader } from '../src/modules/dataset/dataset-reader.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { restampDataset } from '../test/helpers/dataset-files.ts';
import { percentile } from '../test/helpers/lookup-load.ts';
import type { LoadClientSamples, LoadClientStart, LoadClientVersion } from './load-client.ts';
import { SEMI_SPACE_FLAG } from '../src/lib/young-generation.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Epoch milliseconds with sub-millisecond resolution, comparable across processes (the load client stamps its samples so). */
const now = () => performance.timeOrigin + performance.now();

export async function benchDatasetSwap(connections = 32, ratePerSec = 4_000): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-swap-bench-'));
  const file = join(dir, 'ip-dataset.bin');
  copyFileSync(await ensureRealDataset(), file);
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : []),
      SEMI_SPACE_FLAG,
      ...(process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      'bench/servers/umbra-server.ts',
      '--dataset-file',
      file,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let client: ChildProcess | undefined;
  try {
    const info = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        // With BENCH_TRACE_GC=1 the server's GC trace shares its stdout: pass it on to stderr.
        createInterface({ input: child.stdout! }).on('line', (l) =>
          l.startsWith('{"port"') ? resolve(l) : process.stderr.write(`${l}\n`),
        );
        child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      }),
    ) as { port: number; key: string };
    const random = mulberry32(11);
    const ips = Array.from(
      { length: 20_000 },
      () => `${1 + Math.floor(random() * 222)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`,
    );
    const built = readDatasetHeader(file).info.built_at;
    // Warm up (JIT, caches), then under the paced load: two quiet windows (the second against the
    // first: the noise of the measure itself), a swap, a quiet window, a swap. The load runs in its own
    // process (bench/load-client.ts), so nothing this process does stalls it, and it tells this process
    // when the new version first answers (no polling requests from here).
    client = fork(new URL('./load-client.ts', import.meta.url), {
      execArgv: ['--single-threaded-gc', '--max-semi-space-size=32', '--import', 'tsx'],
      serialization: 'advanced',
    });
    const inbox: unknown[] = [];
    let wake: (() => void) | undefined;
    client.on('message', (m) => {
      inbox.push(m);
      wake?.();
    });
    let exited = false;
    client.once('exit', () => {
      exited = true;
      wake?.();
    });
    /** The next message from the client that `match` accepts (earlier ones it skips), or undefined after `ms`. */
    const fromClient = async <T>(match: (m: Record<string, unknown>) => boolean, ms: number): Promise<T | undefined> => {
      const until = now() + ms;
      for (;;) {
        const at = inbox.findIndex((m) => match(m as Record<string, unknown>));
        if (at >= 0) return inbox.splice(0, at + 1)[at] as T;
        if (exited) throw new Error('the load client exited');
        if (now() >= until) return undefined;
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, Math.max(0, until - now()));
        });
      }
    };
    client.send({ port: info.port, key: info.key, ips, connections, ratePerSec, warmMs: 3_000 } satisfies LoadClientStart);
    if (!(await fromClient((m) => m.started === true, 60_000))) throw new Error('the load client did not start');
    const rss = () =>
      existsSync(`/proc/${child.pid}/status`)
        ? (Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024).toFixed(0)
        : 'n/a (no /proc)';
    // Warmed up and serving, before any swap: one dataset's memory (the spare arena is not touched yet).
    const residentBefore = rss();
    const swaps: Array<{ controlFrom?: number; quietFrom: number; signalled: number; swappedAt: number }> = [];
    for (const k of [1, 2]) {
      // The rebuilt file is prepared first (writing 150 MB would hold this client's loop) and renamed
      // into place as `umbra data build` does. The replaced file stays linked under another name:
      // dropping its page cache is work for whoever unlinks it (the build), not for the server.
      const next = join(dir, `next-${k}.bin`);
      restampDataset(file, next, built + 86_400 * k);
      await sleep(k === 1 ? 7_000 : 4_000);
      const quietFrom = now() - 3_000;
      linkSync(file, join(dir, `previous-${k}.bin`));
      renameSync(next, file);
      inbox.length = 0;
      const signalled = now();
      child.kill('SIGHUP');
      const swapped = await fromClient<LoadClientVersion>((m) => typeof m.version === 'string', 60_000);
      if (!swapped) throw new Error('the server did not swap the dataset in within 60 s');
      swaps.push({ controlFrom: k === 1 ? quietFrom - 3_000 : undefined, quietFrom, signalled, swappedAt: swapped.at });
      await sleep(1_500);
    }
    const residentAfter = rss();
    client.send({ stop: true });
    const got = await fromClient<LoadClientSamples>((m) => m.ms instanceof Float64Array, 60_000);
    if (!got) throw new Error('the load client did not answer');
    const samples = Array.from(got.at, (at, i) => ({ at, ms: got.ms[i]!, status: got.status[i]! }));

    if (process.env.BENCH_TIMELINE) {
      for (const { signalled, swappedAt } of swaps) {
        for (let t = signalled - 500; t < swappedAt + 1500; t += 50) {
          const w = samples
            .filter((x) => x.at >= t && x.at < t + 50)
            .map((x) => x.ms)
            .sort((a, b) => a - b);
          console.log(
            `t=${Math.round(t - signalled)} n=${w.length} p50=${w[Math.floor(w.length / 2)]?.toFixed(2)} ` +
              `max=${w[w.length - 1]?.toFixed(1)}`,
          );
        }
      }
    }
    type Sample = (typeof samples)[number];
    const between = (from: number, to: number) => samples.filter((s) => s.at >= from && s.at < to);
    const p99 = (xs: Sample[]) =>
      percentile(
        xs.map((s) => s.ms),
        99,
      );
    const figures: Record<string, number | string> = {
      'requests in the load': samples.length,
      'failed requests (any window)': samples.filter((s) => s.status !== 200).length,
      'server resident memory before / after the swaps (MiB)': `${residentBefore} / ${residentAfter}`,
    };
    swaps.forEach(({ controlFrom, quietFrom, signalled, swappedAt }, i) => {
      if (controlFrom !== undefined)
        figures['no swap: p99 of a quiet window over the one before (the noise)'] = (
          p99(between(quietFrom, signalled)) / p99(between(controlFrom, quietFrom))
        ).toFixed(2);
      const quiet = between(quietFrom, signalled);
      const during = between(signalled, swappedAt + 1_000);
      const name = i === 0 ? 'first swap' : 'second swap';
      figures[`${name}: SIGHUP to first new answer (ms)`] = Math.round(swappedAt - signalled);
      figures[`${name}: p99 before / during (ms)`] = `${p99(quiet).toFixed(2)} / ${p99(during).toFixed(2)}`;
      figures[`${name}: max during (ms)`] = during.reduce((m, s) => Math.max(m, s.ms), 0).toFixed(1);
      figures[`${name}: p99 ratio (target <= 2)`] = (p99(during) / p99(quiet)).toFixed(2);
    });
    // Both swaps' windows together: p99 over twice the samples, the figure the target is about.
    const quietAll = swaps.flatMap(({ quietFrom, signalled }) => between(quietFrom, signalled));
    const duringAll = swaps.flatMap(({ signalled, swappedAt }) => between(signalled, swappedAt + 1_000));
    figures['both swaps: p99 before / during (ms)'] = `${p99(quietAll).toFixed(2)} / ${p99(duringAll).toFixed(2)}`;
    figures['both swaps: p99 ratio (target <= 2)'] = (p99(duringAll) / p99(quietAll)).toFixed(2);
    return figures;
  } finally {
    client?.kill('SIGTERM');
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
