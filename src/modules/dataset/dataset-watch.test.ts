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

/**
 * A dataset where 8.8.8.0/24 is AS `asn`, built as `umbra data build` builds (renamed into place);
 * `wide`: and the rest of 1.0.0.0-223.255.255.255 is AS 64999, so its IPv4 index has 111 MiB of blocks
 * in a range (else only one block is).
 */
async function build(dir: string, file: string, asn: number, wide = false): Promise<void> {
  const rows = [`8.8.8.0,8.8.8.255,${asn},Net ${asn}`];
  if (wide) rows.unshift('1.0.0.0,8.8.7.255,64999,Wide');
  if (wide) rows.push('8.8.9.0,223.255.255.255,64999,Wide');
  writeFileSync(join(dir, 'v4.csv'), `${rows.join('\n')}\n`);
  writeFileSync(join(dir, 'v6.csv'), '');
  await buildDataset({
    outFile: file,
    sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
  });
}

describe('DatasetWatch', () => {
  // The server's memory at start is one dataset, not two: the spare arena (at least the 128 MiB IPv4
  // index) becomes resident only when the first rebuilt file is loaded into it. And the IPv4 index
  // takes RAM only for the blocks that are in a range.
  it('should keep the spare arena out of memory from start to the first swap, and swap a rebuilt file in then', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-watch-'));
    const file = join(dir, 'ip-dataset.bin');
    await build(dir, file, 64_500);
    const rss = () => process.memoryUsage().rss;
    const before = rss();
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
    await watch.start();
    await loader.idle();
    // The spare arena, or the index's 16,777,215 blocks in no range, would each be 128 MiB.
    const atStart = rss() - before;
    assert.ok(atStart < 48 * MiB, `loading a one-block dataset and starting the watch made ${(atStart / MiB).toFixed(0)} MiB resident`);
    assert.equal(data.dataset.network(google).asn, 64_500);

    await build(dir, file, 64_501, true);
    const beforeSwap = rss();
    await watch.refresh();
    const bySwap = rss() - beforeSwap;
    assert.deepEqual(swapped, [64_501]);
    assert.equal(data.dataset.network(google).asn, 64_501, 'lookups answer from the rebuilt file');
    assert.equal(data.dataset.network({ version: 4, v4: 0x01020304, text: '1.2.3.4' }).asn, 64_999);
    assert.equal(data.dataset.network({ version: 4, v4: 0xe0000001, text: '224.0.0.1' }).asn, 0, 'a block in no range');
    assert.ok(bySwap > 96 * MiB, `the first swap wrote the wide index into the spare arena (${(bySwap / MiB).toFixed(0)} MiB more)`);
  });
});
