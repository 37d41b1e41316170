import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { type CorpusPorts, runCorpus } from '../../helpers/sensor-corpus.ts';

const CHILD = fileURLToPath(new URL('../../helpers/sensor-corpus-child.ts', import.meta.url));
const MiB = 1_048_576;
const ROUNDS = Number(process.env.CORPUS_ROUNDS ?? 20);

interface Measure {
  heapUsed: number;
  external: number;
  rss: number;
  maxRss: number;
  buffered: number;
  maxBuffered: number;
  records: number;
}

const next = <T>(child: ChildProcess): Promise<T> => new Promise((resolve) => child.once('message', (m) => resolve(m as T)));

describe('umbra sensor: memory under the malformed-input corpus', () => {
  it(`should not grow over ${ROUNDS} rounds of the corpus, nor pass its memory limit plus a fixed overhead`, async (t) => {
    const child = fork(CHILD, [], { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    t.after(() => void child.kill('SIGKILL'));
    const { ports } = await next<{ ports: CorpusPorts }>(child);
    const measure = async () => {
      child.send('measure');
      return next<Measure>(child);
    };
    const start = await measure();
    const rounds: Measure[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await runCorpus(ports);
      rounds.push(await measure());
    }
    const mib = (n: number) => (n / MiB).toFixed(1);
    const first = rounds[0]!;
    const last = rounds.at(-1)!;
    const report = {
      start: { heap: mib(start.heapUsed), rss: mib(start.rss) },
      round1: { heap: mib(first.heapUsed), external: mib(first.external), rss: mib(first.rss) },
      last: { heap: mib(last.heapUsed), external: mib(last.external), rss: mib(last.rss), peakRss: mib(last.maxRss) },
      records: last.records,
      shed: (last as unknown as { shed: string }).shed,
    };
    t.diagnostic(JSON.stringify(report));
    // After the first round (caches warm, code compiled) the heap stays flat: a leak of a few hundred
    // bytes per case would show as megabytes over the rounds.
    assert.ok(last.heapUsed - first.heapUsed < 4 * MiB, `heap grew ${mib(last.heapUsed - first.heapUsed)} MiB: ${JSON.stringify(report)}`);
    assert.ok(last.external - first.external < 4 * MiB, `buffers grew ${mib(last.external - first.external)} MiB`);
    // The resident peak: the process as it started, the configured buffer limit, and a fixed
    // overhead for what the limit does not count (socket buffers, the TLS engine, V8's young space).
    assert.ok(last.maxRss < start.rss + last.maxBuffered + 64 * MiB, `peak RSS ${mib(last.maxRss)} MiB: ${JSON.stringify(report)}`);
    assert.equal(last.buffered, 0);
    // Every round records the same: no connection of an earlier round still holds a per-source slot
    // or a share's bytes.
    assert.ok(first.records > 150, `${first.records} records in round 1`);
    assert.equal(last.records, first.records * ROUNDS, JSON.stringify(report));
    child.send('stop');
  });
});
