import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { open, Reader, type Response } from 'maxmind';
import { formatV4, formatV6, parseIp, type ParsedIp } from '../../src/lib/ip-address.ts';
import { buildDataset, type LocationRow } from '../../src/modules/dataset/dataset-builder.ts';
import { loadDataset, type LoadedIpDataset } from '../../src/modules/dataset/dataset-reader.ts';
import { buildMmdb, mmdbAnswer, writeMmdbFile, type MmdbRecord } from '../helpers/mmdb/mmdb-writer.ts';
import { randomRanges4, randomRanges6, rng, words } from '../helpers/random-ranges.ts';
import { ensureRealDataset, ensureRealMmdb } from '../helpers/test-dataset.ts';

const OPTIONS = { databaseType: 'umbra-test', description: 'fixture', buildEpoch: 1_700_000_000 };

let fixture: Promise<LoadedIpDataset> | undefined;
const randomDataset = () => (fixture ??= buildRandomDataset());

/** A dataset of random ranges whose records exercise the encoding: ASNs above 2^31, long and non-ASCII names, missing coordinates. */
async function buildRandomDataset(): Promise<LoadedIpDataset> {
  const random = rng(7);
  const dir = mkdtempSync(join(tmpdir(), 'umbra-mmdb-'));
  const asn = (k: number) => (k % 5 === 0 ? 4_294_967_294 - k : k + 1);
  const org = (k: number) => (k === 3 ? `Huge ${'x'.repeat(70_000)}` : k % 7 === 0 ? `Long Org ${k} ${'y'.repeat(300)}` : `org${k}`);
  const csv = (rows: Array<[string, string, number]>) => `${rows.map(([s, e, k]) => `${s},${e},${asn(k)},${org(k)}`).join('\n')}\n`;
  writeFileSync(join(dir, 'v4.csv'), csv(randomRanges4(random, 3_000, 40).map(([s, e, k]) => [formatV4(s), formatV4(e), k])));
  writeFileSync(join(dir, 'v6.csv'), csv(randomRanges6(random, 1_000, 40).map(([s, e, k]) => [formatV6(words(s)), formatV6(words(e)), k])));
  const row = (start: string, end: string, k: number): LocationRow => ({
    start,
    end,
    country_code: ['DE', 'US', 'BR', 'CH'][k % 4]!,
    state1: k % 11 === 0 ? '' : `s${k % 13}`,
    city: k % 3 === 0 ? `Zürich ${k}` : k % 3 === 1 ? `São Paulo ${k}` : `c${k}`,
    latitude: k % 4 === 0 ? null : ((k * 7.3) % 160) - 80,
    longitude: k % 4 === 0 ? null : ((k * 13.7) % 360) - 180,
  });
  await buildDataset({
    outFile: join(dir, 'ds.bin'),
    sources: {
      asnV4: join(dir, 'v4.csv'),
      asnV6: join(dir, 'v6.csv'),
      cityV4: randomRanges4(random, 30_000, 4_000).map(([s, e, k]) => row(formatV4(s), formatV4(e), k)),
      cityV6: randomRanges6(random, 10_000, 4_000).map(([s, e, k]) => row(formatV6(words(s)), formatV6(words(e)), k)),
      versions: { fixture: '1' },
    },
  });
  return loadDataset(join(dir, 'ds.bin'));
}

/** Both answers for one address; asserts only on a difference, so a million checks stay fast. */
function assertSame(reader: Reader<Response>, ds: LoadedIpDataset, ip: ParsedIp, text = ip.text): void {
  const got = mmdbAnswer(reader, text);
  const want = { network: ds.network(ip), location: ds.location(ip) };
  if (!isDeepStrictEqual(got, want)) assert.deepEqual(got, want, text);
}

const big = (w: Uint32Array, k = 0): bigint =>
  (BigInt(w[k]!) << 96n) | (BigInt(w[k + 1]!) << 64n) | (BigInt(w[k + 2]!) << 32n) | BigInt(w[k + 3]!);
const v6 = (x: bigint): ParsedIp => ({ version: 6, v6: words(x), text: formatV6(words(x)) });
const v4 = (x: number): ParsedIp => ({ version: 4, v4: x, text: formatV4(x) });
/** IPv4-compatible space: MMDB readers answer it from the IPv4 tree, umbra from its IPv6 table. */
const inV4Compat = (x: bigint) => x >> 32n === 0n;

/** Every segment boundary (last of one, first of the next, one past each) and random addresses. */
function checkAll(reader: Reader<Response>, ds: LoadedIpDataset, random: () => number, samples: number): number {
  const { v4: t4, v6: t6 } = ds.ranges();
  let n = 0;
  for (const s of t4.starts) {
    for (const x of [s - 1, s, s + 1])
      if (x >= 0 && x <= 0xffffffff) {
        assertSame(reader, ds, v4(x));
        n++;
      }
  }
  for (let k = 0; k < t6.starts.length; k += 4) {
    const s = big(t6.starts, k);
    for (const x of [s - 1n, s, s + 1n])
      if (x >= 0n && x < 1n << 128n && !inV4Compat(x)) {
        assertSame(reader, ds, v6(x));
        n++;
      }
  }
  for (let i = 0; i < samples; i++) {
    assertSame(reader, ds, v4(Math.floor(random() * 2 ** 32)));
    const w = words(BigInt(Math.floor(random() * 2 ** 32)) << 96n);
    if (random() < 0.9) w[0] = [0x20010db8, 0x2a000000, 0x2a000001, 0x26000000][Math.floor(random() * 4)]!;
    for (let j = 1; j < 4; j++) w[j] = Math.floor(random() * 2 ** 32);
    if (!inV4Compat(big(w))) assertSame(reader, ds, { version: 6, v6: w, text: formatV6(w) });
    n += 2;
  }
  return n;
}

describe(buildMmdb.name, () => {
  it('should answer every range edge and random addresses as the dataset does, with each record size', async () => {
    const ds = await randomDataset();
    for (const least of [24, 28, 32] as const) {
      const image = buildMmdb(ds.ranges(), { ...OPTIONS, recordSize: least });
      assert.equal(image.recordSize, least);
      const reader = new Reader<Response>(Buffer.concat(image.parts));
      const checked = checkAll(reader, ds, rng(least), 50_000);
      assert.ok(checked > 200_000, `${checked} addresses checked`);
    }
  });

  it('should answer IPv4 also at ::a.b.c.d and ::ffff:a.b.c.d, as MaxMind readers look it up', async () => {
    const ds = await randomDataset();
    const reader = new Reader<Response>(Buffer.concat(buildMmdb(ds.ranges(), OPTIONS).parts));
    const random = rng(3);
    let located = 0;
    for (let i = 0; i < 20_000; i++) {
      const ip = v4(Math.floor(random() * 2 ** 32));
      assertSame(reader, ds, ip, `::ffff:${ip.text}`);
      assertSame(reader, ds, ip, `::${ip.text}`);
      if (ds.location(ip).city !== '') located++;
    }
    assert.ok(located > 1_000, 'the sample reaches located ranges');
  });

  it('should take 28-bit records once data pointers pass 2^24, and answer through them', async () => {
    // 300 networks (one /24 every 2^22 addresses) with 70 kB names: a 21 MB data section, so pointers use the records' top bits.
    const dir = mkdtempSync(join(tmpdir(), 'umbra-mmdb-'));
    const name = (k: number) => `AS${k} ${String.fromCharCode(65 + (k % 26)).repeat(70_000)}`;
    const first = (k: number) => (k + 1) * 2 ** 22;
    writeFileSync(
      join(dir, 'v4.csv'),
      `${Array.from({ length: 300 }, (_, k) => `${formatV4(first(k))},${formatV4(first(k) + 255)},${k + 1},${name(k)}`).join('\n')}\n`,
    );
    writeFileSync(join(dir, 'v6.csv'), '');
    await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources: { asnV4: join(dir, 'v4.csv'), asnV6: join(dir, 'v6.csv'), cityV4: [], cityV6: [], versions: {} },
    });
    const ds = loadDataset(join(dir, 'ds.bin'));
    for (const least of [24, 32] as const) {
      const image = buildMmdb(ds.ranges(), { ...OPTIONS, recordSize: least });
      assert.equal(image.recordSize, least === 24 ? 28 : 32);
      const reader = new Reader<Response>(Buffer.concat(image.parts));
      for (let k = 0; k < 300; k++) {
        for (const x of [first(k) - 1, first(k), first(k) + 255, first(k) + 256]) assertSame(reader, ds, v4(x));
      }
    }
  });

  it('should write metadata a MaxMind reader accepts, and a file maxmind.open() reads', async () => {
    const ds = await randomDataset();
    const file = join(mkdtempSync(join(tmpdir(), 'umbra-mmdb-')), 'ip.mmdb');
    const info = writeMmdbFile(file, ds.ranges(), OPTIONS);
    assert.equal(info.bytes, readFileSync(file).length);
    const reader = await open<Response>(file);
    assert.deepEqual(reader.metadata, {
      binaryFormatMajorVersion: 2,
      binaryFormatMinorVersion: 0,
      buildEpoch: new Date(OPTIONS.buildEpoch * 1000),
      databaseType: 'umbra-test',
      description: { en: 'fixture' },
      ipVersion: 6,
      languages: ['en'],
      nodeByteSize: info.recordSize / 4,
      nodeCount: info.nodeCount,
      recordSize: info.recordSize,
      searchTreeSize: (info.nodeCount * info.recordSize) / 4,
      treeDepth: 128,
    });
    assert.equal(info.recordSize, 24, 'the smallest record size that fits');
    assert.deepEqual(mmdbAnswer(reader, '::ffff:0:0'), { network: ds.network(v4(0)), location: ds.location(v4(0)) });
    const big4 = ds.ranges().v4.starts.find((s) => ds.network(v4(s)).asn > 2 ** 31)!;
    const raw = reader.get(formatV4(big4)) as unknown as MmdbRecord;
    assert.equal(raw.network?.asn, ds.network(v4(big4)).asn, 'an ASN above int32 stays unsigned');
  });

  it('should answer as the real dataset does for random public addresses', async () => {
    const ds = loadDataset(await ensureRealDataset());
    const reader = new Reader<Response>(readFileSync((await ensureRealMmdb()).file));
    const random = rng(11);
    let known = 0;
    for (let i = 0; i < 10_000; i++) {
      const a = v4(Math.floor(random() * 2 ** 32));
      assertSame(reader, ds, a);
      const w = new Uint32Array([
        0x20000000 + Math.floor(random() * 0x10000000),
        Math.floor(random() * 2 ** 32),
        Math.floor(random() * 2 ** 32),
        Math.floor(random() * 2 ** 32),
      ]);
      assertSame(reader, ds, { version: 6, v6: w, text: formatV6(w) });
      if (ds.network(a).asn !== 0) known++;
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2a01:4f8::1', '10.0.0.1', 'fd00::1'])
      assertSame(reader, ds, parseIp(a)!);
    assert.ok(known > 5_000, 'most random IPv4 addresses are announced');
  });
});
