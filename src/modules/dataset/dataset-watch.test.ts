import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LookupData } from '../lookup/lookup-data.ts';
import { buildDataset } from './dataset-builder.ts';
import { DatasetLoader } from './dataset-loader.ts';
import { DatasetWatch } from './dataset-watch.ts';

const MiB = 2 ** 20;
const google = { version: 4 as const, v4: 0x08080808, text: '8.8.8.8' };
const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** A small dataset where 8.8.8.0/24 is AS `asn`, built as `umbra data build` builds (renamed into place). */
async function build(dir: string, file: string, asn: number): Promise<void> {
  writeFileSync(join(dir, 'v4.csv'), `8.8.8.0,8.8.8.255,${asn},Net ${asn}\n`);
  writeFileSync(join(dir, 'v6.csv'), '');
  await buildDataset({
    outFile: file,
    sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
  });
}

describe('DatasetWatch', () => {
  // The server's memory at start is one dataset, not two: the spare arena (at least the 128 MiB IPv4
  // index) becomes resident only when the first rebuilt file is loaded into it.
  it('should keep the spare arena out of memory from start to the first swap, and swap a rebuilt file in then', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-watch-'));
    const file = join(dir, 'ip-dataset.bin');
    await build(dir, file, 64_500);
    const loader = new DatasetLoader();
    loader.reserve(file);
    const data = new LookupData(await loader.load(file));
    const swapped: number[] = [];
    const watch = new DatasetWatch({
      file,
      data,
      events: { swapped: (next) => swapped.push(next.network(google).asn), refused: (e) => assert.fail(e) },
      logger: silent,
      intervalMs: 3_600_000,
      loader,
    });
    t.after(() => watch.stop());
    const rss = () => process.memoryUsage().rss;
    const before = rss();
    await watch.start();
    await loader.idle();
    const atStart = rss() - before;
    assert.ok(atStart < 48 * MiB, `starting the watch made ${(atStart / MiB).toFixed(0)} MiB resident`);
    assert.equal(data.dataset.network(google).asn, 64_500);

    await build(dir, file, 64_501);
    const beforeSwap = rss();
    await watch.refresh();
    const bySwap = rss() - beforeSwap;
    assert.deepEqual(swapped, [64_501]);
    assert.equal(data.dataset.network(google).asn, 64_501, 'lookups answer from the rebuilt file');
    assert.ok(bySwap > 120 * MiB, `the first swap loads into the spare arena (${(bySwap / MiB).toFixed(0)} MiB more)`);
  });
});
