import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEEDS } from '../feeds/feed-catalog.ts';
import { CT, decodeStruct, encodeStruct, mergeFooters, MergeRefused, parseFooter, type ThriftStruct } from './parquet-footer.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { recordsOf } from '../../../test/helpers/parquet-fixtures.ts';

async function* linesOf(records: object[]): AsyncIterable<string> {
  for (const r of records) yield JSON.stringify(r);
}

/** Byte arrays as plain arrays, whatever their class (decoded binaries are Buffer views). */
const plain = (v: unknown): unknown =>
  v instanceof Uint8Array
    ? [...v]
    : Array.isArray(v)
      ? v.map(plain)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
        : v;

/** A file's footer bytes (without its length and magic). */
const footerOf = (bytes: Buffer) => bytes.subarray(bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8), bytes.length - 8);

describe('parquet footer codec', () => {
  let dir: string;
  let writer: ParquetWriter;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-pqfooter-'));
    writer = await ParquetWriter.create({ spoolDir: join(dir, 'spool'), threads: 2 });
  });
  after(() => {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should decode and encode DuckDB footers of every feed back to the same bytes', async () => {
    for (const feed of Object.values(FEEDS)) {
      for (const n of [0, 700]) {
        const out = join(dir, `${feed.id}-${n}.parquet`);
        await writer.write(feed, linesOf(recordsOf(feed, 0, n)), out, { kind: 'hourly', hour: '3' });
        const footer = footerOf(readFileSync(out));
        const { struct, end } = decodeStruct(footer);
        assert.equal(end, footer.length, `${feed.id}: the whole footer is one struct`);
        assert.ok(encodeStruct(struct).equals(footer), `${feed.id} (${n} rows): byte-identical`);
      }
    }
  });

  it('should round-trip every compact type, negative and 64-bit values, long field deltas and long lists', () => {
    const s: ThriftStruct = {
      type: CT.STRUCT,
      fields: [
        { id: 1, value: { type: CT.TRUE, value: true } },
        { id: 2, value: { type: CT.FALSE, value: false } },
        { id: 3, value: { type: CT.I8, value: -5 } },
        { id: 4, value: { type: CT.I16, value: -300 } },
        { id: 5, value: { type: CT.I32, value: -2_147_483_648 } },
        { id: 6, value: { type: CT.I64, value: -9_223_372_036_854_775_808n } },
        { id: 7, value: { type: CT.I64, value: 9_223_372_036_854_775_807n } },
        { id: 8, value: { type: CT.DOUBLE, value: new Uint8Array(Buffer.from('0000000000e06f40', 'hex')) } },
        { id: 40, value: { type: CT.BINARY, value: new Uint8Array(300).fill(7) } },
        {
          id: 41,
          value: { type: CT.LIST, elemType: CT.I32, items: Array.from({ length: 20 }, (_, i) => ({ type: CT.I32, value: i * 1000 })) },
        },
        {
          id: 42,
          value: {
            type: CT.LIST,
            elemType: CT.TRUE,
            items: [
              { type: CT.TRUE, value: true },
              { type: CT.FALSE, value: false },
            ],
          },
        },
        {
          id: 43,
          value: {
            type: CT.MAP,
            keyType: CT.BINARY,
            valType: CT.I64,
            entries: [
              [
                { type: CT.BINARY, value: Buffer.from('k') },
                { type: CT.I64, value: 1n },
              ],
            ],
          },
        },
        { id: 44, value: { type: CT.MAP, keyType: 0, valType: 0, entries: [] } },
        { id: 45, value: { type: CT.STRUCT, fields: [{ id: 1, value: { type: CT.SET, elemType: CT.I16, items: [] } }] } },
      ],
    };
    const bytes = encodeStruct(s);
    const back = decodeStruct(bytes);
    assert.equal(back.end, bytes.length);
    assert.deepEqual(plain(back.struct), plain(s));
    assert.ok(encodeStruct(back.struct).equals(bytes));
    assert.throws(() => decodeStruct(bytes.subarray(0, bytes.length - 3)), /truncated/);
  });

  it('should refuse inputs whose schema differs from the reference, or that point outside their data region', async () => {
    const a = join(dir, 'proxies.parquet');
    const b = join(dir, 'ja4t.parquet');
    await writer.write(FEEDS.proxies, linesOf(recordsOf(FEEDS.proxies, 0, 10)), a);
    await writer.write(FEEDS.ja4t, linesOf(recordsOf(FEEDS.ja4t, 0, 10)), b);
    const parts = (file: string) => {
      const bytes = readFileSync(file);
      return parseFooter(footerOf(bytes), bytes.length);
    };
    const pa = parts(a);
    assert.equal(mergeFooters([pa, pa], pa.meta, []).numRows, 20n);
    assert.throws(() => mergeFooters([pa, parts(b)], pa.meta, []), MergeRefused);
    assert.throws(() => mergeFooters([pa], parts(b).meta, []), MergeRefused);
    assert.throws(() => mergeFooters([{ ...pa, dataEnd: 100 }], pa.meta, []), /outside the data region/);
  });
});
