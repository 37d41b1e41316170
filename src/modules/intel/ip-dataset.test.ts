import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatV4, formatV6, type ParsedIp } from '../lookup/ip-address.ts';
import { buildDataset, type LocationRow } from './dataset-builder.ts';
import { DatasetLoader, datasetFileProblem, loadDataset, loadDatasetAsync } from './ip-dataset.ts';
import { FORMAT_VERSION, MAGIC } from './dataset-format.ts';
import { randomRanges4, randomRanges6, rng, words } from './random-ranges.ts';
import { find4, find6, NONE, V4TableBuilder, V6TableBuilder } from './range-table.ts';

describe('loadDataset', () => {
  it('should answer network and location exactly as the two separate tables would', async () => {
    const random = rng(42);
    const net4 = randomRanges4(random, 3_000, 40);
    const loc4 = randomRanges4(random, 30_000, 400);
    const net6 = randomRanges6(random, 1_000, 40);
    const loc6 = randomRanges6(random, 10_000, 400);
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    // Value k is AS k+1 named org<k>, and the city c<k>, so each value is one distinct record.
    const csv = (rows: Array<[string, string, number]>) => rows.map(([s, e, k]) => `${s},${e},${k + 1},org${k}`).join('\n') + '\n';
    writeFileSync(join(dir, 'v4.csv'), csv(net4.map(([s, e, k]) => [formatV4(s), formatV4(e), k])));
    writeFileSync(join(dir, 'v6.csv'), csv(net6.map(([s, e, k]) => [formatV6(words(s)), formatV6(words(e)), k])));
    const row = (start: string, end: string, k: number): LocationRow => ({ start, end, country_code: 'ZZ', state1: '', city: `c${k}`, latitude: null, longitude: null });
    await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources: {
        asnV4: join(dir, 'v4.csv'),
        asnV6: join(dir, 'v6.csv'),
        cityV4: loc4.map(([s, e, k]) => row(formatV4(s), formatV4(e), k)),
        cityV6: loc6.map(([s, e, k]) => row(formatV6(words(s)), formatV6(words(e)), k)),
        versions: { fixture: '1' },
      },
    });
    const onLoop = loadDataset(join(dir, 'ds.bin'));
    // Loaded in the worker thread (indexes derived there, strings packed): must answer the same.
    const viaWorker = await loadDatasetAsync(join(dir, 'ds.bin'));
    assert.deepEqual(viaWorker.info, onLoop.info);

    const t4 = (ranges: Array<[number, number, number]>) => {
      const b = new V4TableBuilder();
      for (const [s, e, k] of ranges) b.add(s, e, k);
      return b.finish();
    };
    const t6 = (ranges: Array<[bigint, bigint, number]>) => {
      const b = new V6TableBuilder();
      for (const [s, e, k] of ranges) b.add(words(s), words(e), k);
      return b.finish();
    };
    const [n4, l4, n6, l6] = [t4(net4), t4(loc4), t6(net6), t6(loc6)];
    const check = (ip: ParsedIp, net: number, loc: number) => {
      const want = [net === NONE ? 0 : net + 1, loc === NONE ? '' : `c${loc}`];
      for (const ds of [onLoop, viaWorker]) {
        const got = [ds.network(ip).asn, ds.location(ip).city];
        if (got[0] !== want[0] || got[1] !== want[1]) assert.deepEqual(got, want, ip.text);
      }
    };

    const v4s: number[] = Array.from({ length: 300_000 }, () => Math.floor(random() * 2 ** 32));
    for (const t of [n4, l4]) for (const s of t.starts) for (const d of [-1, 0, 1]) if (s + d >= 0 && s + d <= 0xffffffff) v4s.push(s + d);
    for (const v of v4s) check({ version: 4, v4: v, text: formatV4(v) }, find4(n4.starts, n4.vals, v), find4(l4.starts, l4.vals, v));

    const v6s: Uint32Array[] = Array.from({ length: 100_000 }, () => {
      const w = words(BigInt(Math.floor(random() * 2 ** 32)) << 96n);
      if (random() < 0.9) w[0] = [0x20010db8, 0x2a000000, 0x2a000001, 0x26000000][Math.floor(random() * 4)]!;
      w[1] = random() < 0.5 ? Math.floor(random() * 4) : Math.floor(random() * 2 ** 32);
      w[2] = Math.floor(random() * 2 ** 32);
      w[3] = Math.floor(random() * 2 ** 32);
      return w;
    });
    for (const t of [n6, l6]) for (let k = 0; k < t.starts.length; k += 4) v6s.push(t.starts.slice(k, k + 4));
    for (const w of v6s) check({ version: 6, v6: w, text: formatV6(w) }, find6(n6.starts, n6.vals, w), find6(l6.starts, l6.vals, w));
  });

  it('should not answer from the previous address when a ParsedIp is reused with another value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    writeFileSync(join(dir, 'v4.csv'), '8.8.8.0,8.8.8.255,15169,Google LLC\n');
    writeFileSync(join(dir, 'v6.csv'), '2001:db8::,2001:db8::ffff,64500,Example Net\n');
    await buildDataset({ outFile: join(dir, 'ds.bin'), sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} } });
    const ds = loadDataset(join(dir, 'ds.bin'));
    const ip4 = { version: 4 as const, v4: 0x08080808, text: '8.8.8.8' };
    assert.equal(ds.network(ip4).asn, 15169);
    ip4.v4 = 0x08080908;
    assert.equal(ds.network(ip4).asn, 0);
    const ip6 = { version: 6 as const, v6: words(0x20010db8n << 96n), text: '2001:db8::' };
    assert.equal(ds.network(ip6).asn, 64500);
    ip6.v6[3] = 0x10000;
    assert.equal(ds.network(ip6).asn, 0);
    assert.equal(ds.network({ version: 4, v4: 0, text: '0.0.0.0' }).asn, 0);
  });

  it('should refuse a file that is not a dataset from the loader thread, and keep loading after', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    writeFileSync(join(dir, 'v4.csv'), '8.8.8.0,8.8.8.255,15169,Google LLC\n');
    writeFileSync(join(dir, 'v6.csv'), '');
    await buildDataset({ outFile: join(dir, 'ds.bin'), sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} } });
    writeFileSync(join(dir, 'junk.bin'), 'definitely not a dataset');
    const loader = new DatasetLoader();
    t.after(() => loader.close());
    await assert.rejects(loader.load(join(dir, 'junk.bin')), /is not an umbra IP dataset \(bad magic\)/);
    await assert.rejects(loader.load(join(dir, 'missing.bin')), /ENOENT/);
    const ds = await loader.load(join(dir, 'ds.bin'));
    assert.equal(ds.network({ version: 4, v4: 0x08080808, text: '8.8.8.8' }).isp, 'Google LLC');
  });

  it('should say why a dataset file needs building (missing, not a dataset, an older format) and nothing for a good one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    writeFileSync(join(dir, 'v4.csv'), '8.8.8.0,8.8.8.255,15169,Google LLC\n');
    writeFileSync(join(dir, 'v6.csv'), '');
    await buildDataset({ outFile: join(dir, 'ds.bin'), sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} } });
    assert.equal(datasetFileProblem(join(dir, 'ds.bin')), undefined);
    assert.equal(datasetFileProblem(join(dir, 'none.bin')), `no IP dataset at ${join(dir, 'none.bin')}`);
    writeFileSync(join(dir, 'junk.bin'), 'junk');
    assert.match(datasetFileProblem(join(dir, 'junk.bin'))!, /is not an umbra IP dataset \(bad magic\)$/);
    // A file of the previous format (its string table in the JSON header): built again on upgrade.
    const header = Buffer.from(JSON.stringify({ format: 2, info: {}, strings: [], sections: {} }));
    const old = Buffer.alloc(16 + header.length);
    MAGIC.copy(old, 0);
    old.writeUInt32LE(header.length, 8);
    header.copy(old, 16);
    writeFileSync(join(dir, 'old.bin'), old);
    assert.equal(datasetFileProblem(join(dir, 'old.bin')), `${join(dir, 'old.bin')} has format 2, this umbra reads ${FORMAT_VERSION}`);
  });

  it('should load into two reused arenas: the latest and the one before stay intact, a bigger file gets room', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    const build = async (name: string, asn: number, extra = 0) => {
      const rows = [`8.8.8.0,8.8.8.255,${asn},Net ${asn}`, ...Array.from({ length: extra }, (_, i) => `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0,${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.127,${i + 1},Org ${i}`)];
      writeFileSync(join(dir, `${name}.csv`), rows.join('\n') + '\n');
      writeFileSync(join(dir, 'v6.csv'), '');
      await buildDataset({ outFile: join(dir, `${name}.bin`), sources: { asnV4: join(dir, `${name}.csv`), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} } });
      return join(dir, `${name}.bin`);
    };
    const a = await build('a', 64_500);
    const b = await build('b', 64_501);
    const big = await build('big', 64_502, 20_000);
    const google = { version: 4 as const, v4: 0x08080808, text: '8.8.8.8' };
    const loader = new DatasetLoader();
    t.after(() => loader.close());
    const first = await loader.load(a);
    const second = await loader.load(b);
    assert.deepEqual([first.network(google).asn, second.network(google).asn], [64_500, 64_501], 'the previous dataset is intact after the next load');
    const third = await loader.load(a);
    assert.equal(third.network(google).asn, 64_500);
    assert.equal(second.network(google).asn, 64_501, 'the one before the latest is intact');
    const fourth = await loader.load(big);
    assert.equal(fourth.network(google).asn, 64_502);
    assert.equal(fourth.network({ version: 4, v4: (10 << 24) | (1 << 8), text: '10.0.1.0' }).isp, 'Org 1');
    assert.equal(third.network(google).asn, 64_500);
  });
});
