import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatV4, formatV6, type ParsedIp } from '../../lib/ip-address.ts';
import { recordJson } from '../../lib/record-json.ts';
import { EMPTY_LOCATION, UNKNOWN_NETWORK } from '../lookup/ip-dataset.ts';
import { buildDataset, type LocationRow } from './dataset-builder.ts';
import { datasetFileProblem, loadDataset, samePages } from './dataset-reader.ts';
import { DatasetLoader, loadDatasetAsync } from './dataset-loader.ts';
import { decodeDataset, FORMAT_VERSION, MAGIC, NET_WORDS, type Sections } from './dataset-format.ts';
import { restampDataset } from '../../../test/helpers/dataset-files.ts';
import { randomRanges4, randomRanges6, rng, words } from '../../../test/helpers/random-ranges.ts';
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
    const csv = (rows: Array<[string, string, number]>) => `${rows.map(([s, e, k]) => `${s},${e},${k + 1},org${k}`).join('\n')}\n`;
    writeFileSync(join(dir, 'v4.csv'), csv(net4.map(([s, e, k]) => [formatV4(s), formatV4(e), k])));
    writeFileSync(join(dir, 'v6.csv'), csv(net6.map(([s, e, k]) => [formatV6(words(s)), formatV6(words(e)), k])));
    const row = (start: string, end: string, k: number): LocationRow => ({
      start,
      end,
      country_code: 'ZZ',
      state1: '',
      city: `c${k}`,
      latitude: null,
      longitude: null,
    });
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

    // recordIndexes, for whole batches of both versions at once (block edges included): the record
    // numbers of the records network() and location() answer, and their ASN, type and JSON bytes.
    const mixed: ParsedIp[] = [];
    for (let k = 0; k < 60_000; k++) {
      const v = v4s[(k * 7919) % v4s.length]!;
      mixed.push({ version: 4, v4: v, text: formatV4(v) });
      if (k % 3 === 0) {
        const w = v6s[(k * 104_729) % v6s.length]!;
        mixed.push({ version: 6, v6: w, text: formatV6(w) });
      }
    }
    for (const ds of [onLoop, viaWorker]) {
      let located = 0;
      for (let at = 0; at < mixed.length; at += 1000) {
        const batch = mixed.slice(at, at + 1000);
        const net = new Int32Array(batch.length);
        const loc = new Int32Array(batch.length);
        ds.recordIndexes(batch, net, loc);
        batch.forEach((ip, k) => {
          const n = ds.network(ip);
          const l = ds.location(ip);
          if (n === UNKNOWN_NETWORK) assert.equal(net[k], -1, ip.text);
          else {
            const i = net[k]!;
            assert.deepEqual(
              [ds.networkAsn(i), ds.networkType(i), ds.json.text(ds.networkJson(i))],
              [n.asn, n.type, recordJson(n)],
              ip.text,
            );
          }
          if (l === EMPTY_LOCATION) assert.equal(loc[k], -1, ip.text);
          else {
            assert.equal(ds.json.text(ds.locationJson(loc[k]!)), recordJson(l), ip.text);
            located++;
          }
        });
      }
      assert.ok(located > mixed.length / 2, `${located} of ${mixed.length} located`);
    }
  });

  it('should not answer from the previous address when a ParsedIp is reused with another value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    writeFileSync(join(dir, 'v4.csv'), '8.8.8.0,8.8.8.255,15169,Google LLC\n');
    writeFileSync(join(dir, 'v6.csv'), '2001:db8::,2001:db8::ffff,64500,Example Net\n');
    await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
    });
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
    await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
    });
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
    await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
    });
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
      const rows = [
        `8.8.8.0,8.8.8.255,${asn},Net ${asn}`,
        ...Array.from(
          { length: extra },
          (_, i) => `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0,${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.127,${i + 1},Org ${i}`,
        ),
      ];
      writeFileSync(join(dir, `${name}.csv`), `${rows.join('\n')}\n`);
      writeFileSync(join(dir, 'v6.csv'), '');
      await buildDataset({
        outFile: join(dir, `${name}.bin`),
        sources: { asnV4: join(dir, `${name}.csv`), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
      });
      return join(dir, `${name}.bin`);
    };
    const a = await build('a', 64_500);
    const b = await build('b', 64_501);
    const big = await build('big', 64_502, 20_000);
    const google = { version: 4 as const, v4: 0x08080808, text: '8.8.8.8' };
    const loader = new DatasetLoader();
    t.after(() => loader.close());
    loader.reserve(a);
    const first = await loader.load(a);
    const second = await loader.load(b);
    assert.deepEqual(
      [first.network(google).asn, second.network(google).asn],
      [64_500, 64_501],
      'the previous dataset is intact after the next load',
    );
    const third = await loader.load(a);
    assert.equal(third.network(google).asn, 64_500);
    assert.equal(second.network(google).asn, 64_501, 'the one before the latest is intact');
    const fourth = await loader.load(big);
    assert.equal(fourth.network(google).asn, 64_502);
    assert.equal(fourth.network({ version: 4, v4: (10 << 24) | (1 << 8), text: '10.0.1.0' }).isp, 'Org 1');
    assert.equal(third.network(google).asn, 64_500);
  });

  it("should swap a rebuilt file in with the previous dataset's objects where nothing changed, and new answers where it did", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-idx-'));
    const a = await buildNetworks(dir, 'a', 3_000, (i) => (i === 0 ? [64_500, 'Net A'] : undefined));
    const b = await buildNetworks(dir, 'b', 3_000, (i) => (i === 0 ? [64_501, 'Net B'] : undefined));
    const google = { version: 4 as const, v4: 0x08080808, text: '8.8.8.8' };
    const far = { version: 4 as const, v4: (10 << 24) | (11 << 16) | (2 << 8), text: '10.11.2.0' };
    const loader = new DatasetLoader();
    t.after(() => loader.close());
    const first = await loader.load(a);
    const [g1, f1] = [first.network(google), first.network(far)];
    restampDataset(a, join(dir, 'a2.bin'), 1_900_000_000);
    const restamped = await loader.load(join(dir, 'a2.bin'));
    assert.equal(restamped.info.built_at, 1_900_000_000);
    assert.equal(restamped.network(google), g1, 'an unchanged record is the same object, not a new one');
    assert.equal(restamped.network(far), f1);
    const changed = await loader.load(b);
    assert.deepEqual(
      [changed.network(google).asn, changed.network(google).isp],
      [64_501, 'Net B'],
      'a changed record answers its new values',
    );
    assert.notEqual(changed.network(google), g1);
    assert.deepEqual(changed.network(far), f1, 'records far from the change answer as before');
    assert.deepEqual(
      [first.network(google).asn, restamped.network(google).asn],
      [64_500, 64_500],
      'the previous dataset still answers its own values',
    );
  });
});

/** Builds a dataset of `count` network ranges (range i: AS 100000+i, "Org i"; `change` overrides one). Range 0 is 8.8.8.0/24. */
async function buildNetworks(
  dir: string,
  name: string,
  count: number,
  change: (i: number) => [number, string] | undefined,
): Promise<string> {
  const rows = Array.from({ length: count }, (_, i) => {
    const [asn, org] = change(i) ?? [100_000 + i, `Org ${i}`];
    const range = i === 0 ? '8.8.8.0,8.8.8.255' : `10.${i >> 8}.${i & 255}.0,10.${i >> 8}.${i & 255}.255`;
    return `${range},${asn},${org}`;
  });
  // Sorted by start address, as the published tables are.
  rows.sort((x, y) => (x.startsWith('8.') ? -1 : y.startsWith('8.') ? 1 : 0));
  writeFileSync(join(dir, `${name}.csv`), `${rows.join('\n')}\n`);
  writeFileSync(join(dir, `${name}-v6.csv`), '');
  await buildDataset({
    outFile: join(dir, `${name}.bin`),
    sources: { asnV4: join(dir, `${name}.csv`), asnV6: join(dir, `${name}-v6.csv`), cityV4: [], cityV6: [], versions: {} },
  });
  return join(dir, `${name}.bin`);
}

describe('samePages', () => {
  const sections = (file: string): Sections => decodeDataset(readFileSync(file), file).sections;
  const text = (s: Sections, i: number) =>
    Buffer.from(s.strBytes.buffer, s.strBytes.byteOffset, s.strBytes.byteLength).toString('utf8', s.strOffsets[i]!, s.strOffsets[i + 1]!);
  const network = (s: Sections, i: number) => [
    s.netRecords[i * NET_WORDS],
    text(s, s.netRecords[i * NET_WORDS + 1]!),
    text(s, s.netRecords[i * NET_WORDS + 2]!),
  ];
  /** Every page flagged the same must hold entries that decode the same in both. */
  const assertSound = (prev: Sections, next: Sections, same: ReturnType<typeof samePages>) => {
    for (let p = 0; p < same.strings.length; p++) {
      if (same.strings[p] !== 1) continue;
      for (let i = p * 1024; i < Math.min((p + 1) * 1024, next.strOffsets.length - 1); i++)
        assert.equal(text(next, i), text(prev, i), `string ${i}`);
    }
    for (let p = 0; p < same.nets.length; p++) {
      if (same.nets[p] !== 1) continue;
      for (let i = p * 1024; i < Math.min((p + 1) * 1024, next.netRecords.length / NET_WORDS); i++)
        assert.deepEqual(network(next, i), network(prev, i), `network ${i}`);
    }
  };

  it('should flag every page of an identical rebuild, and only the pages a change leaves alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-same-'));
    const count = 6_000;
    const base = sections(await buildNetworks(dir, 'base', count, () => undefined));
    const ones = (flags: Uint8Array) => flags.reduce((n, f) => n + f, 0);

    const identical = samePages(base, sections(await buildNetworks(dir, 'again', count, () => undefined)));
    assert.ok(identical.strings.length >= 5 && identical.nets.length >= 5, 'the fixture spans several pages');
    assert.equal(ones(identical.strings), identical.strings.length);
    assert.equal(ones(identical.nets), identical.nets.length);

    // One organisation renamed (same string slot, new bytes): its string page and the record pages naming a string there change.
    const renamedSections = sections(
      await buildNetworks(dir, 'renamed', count, (i) => (i === 4_000 ? [104_000, 'Renamed Org'] : undefined)),
    );
    const renamed = samePages(base, renamedSections);
    const slot = renamedSections.netRecords[4_000 * NET_WORDS + 1]!;
    assert.equal(text(renamedSections, slot), 'Renamed Org');
    assert.equal(renamed.strings[slot >>> 10], 0, "the renamed string's page");
    assert.equal(ones(renamed.strings), renamed.strings.length - 1, 'every other string page');
    assert.equal(renamed.nets[4_000 >>> 10], 0, "the renamed record's page");
    assert.ok(ones(renamed.nets) >= 1 && ones(renamed.nets) < renamed.nets.length);
    assertSound(base, renamedSections, renamed);

    // One ASN changed (no string changes): only that record's page.
    const renumberedSections = sections(
      await buildNetworks(dir, 'renumbered', count, (i) => (i === 1_500 ? [64_999, 'Org 1500'] : undefined)),
    );
    const renumbered = samePages(base, renumberedSections);
    assert.equal(ones(renumbered.strings), renumbered.strings.length);
    assert.deepEqual(
      [...renumbered.nets].map((f, p) => (f === 1 ? -1 : p)).filter((p) => p >= 0),
      [1_500 >>> 10],
    );
    assertSound(base, renumberedSections, renumbered);

    // A file with more records than the previous: pages beyond the previous end are new.
    const grownSections = sections(await buildNetworks(dir, 'grown', count + 2_000, () => undefined));
    const grown = samePages(base, grownSections);
    assert.equal(grown.nets[grown.nets.length - 1], 0);
    assertSound(base, grownSections, grown);
  });
});
