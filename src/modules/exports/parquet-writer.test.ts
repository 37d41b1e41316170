import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEEDS } from '../feeds/feed-catalog.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { readParquet } from './parquet-test-reader.ts';

async function* linesOf(records: object[]): AsyncIterable<string> {
  for (const r of records) yield JSON.stringify(r);
}

for (const spool of ['fifo', 'file'] as const) describe(`${ParquetWriter.name} (${spool} spool)`, () => {
  let dir: string;
  let writer: ParquetWriter;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-pq-'));
    writer = await ParquetWriter.create({ spoolDir: join(dir, 'spool'), threads: 2, spool });
  });
  after(() => {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should write anonymizer rows that hyparquet reads back with the same values, names and types', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({
      range_start: `10.0.${i >> 8}.${i & 255}`, range_end: `10.0.${i >> 8}.${i & 255}`, provider: ['nord', "o'hare"][i % 2], type: 'vpn',
      country_code: 'DE', asn: 4_200_000_000 + i, timestamp: 1_795_000_000 + i,
    }));
    const out = join(dir, 'anon.parquet');
    const info = await writer.write(FEEDS.anonymizers, linesOf(records), out);
    assert.equal(info.rows, 3000);
    assert.equal(info.sha256, createHash('sha256').update(readFileSync(out)).digest('hex'));
    assert.equal(info.size, readFileSync(out).length);
    const pq = await readParquet(out);
    assert.equal(pq.numRows, 3000);
    assert.equal(pq.kv.feed, 'anonymizers');
    assert.deepEqual(JSON.parse(pq.kv.schema!), info.schema);
    assert.deepEqual(pq.fields, FEEDS.anonymizers.parquet.map((c) => ({ name: c.name, type: c.type })));
    assert.deepEqual(info.schema.fields, pq.fields);
    // Integers come back as bigint; ASNs above 2^31 keep their value (UBIGINT).
    assert.deepEqual(pq.rows, records.map((r) => ({ ...r, asn: BigInt(r.asn), timestamp: BigInt(r.timestamp) })));
  });

  it('should flatten nested members, decode base64 to BLOB, keep JSON text and write NULL for absent members', async () => {
    const https = [
      { timestamp: 1_795_000_000_123, tunnel_id: 7, domain: 'a.example', port: 443, details: { ja4: 't13d', sni: 'a.example' }, raw: Buffer.from([0, 1, 2, 255]).toString('base64') },
      { timestamp: 1_795_000_000_124, tunnel_id: 8, domain: 'b.example', port: 8443, details: null },
    ];
    await writer.write(FEEDS.honeypot_https, linesOf(https), join(dir, 'https.parquet'));
    const pq = await readParquet(join(dir, 'https.parquet'));
    assert.deepEqual(pq.fields.map((f) => f.type), ['BIGINT', 'BIGINT', 'VARCHAR', 'INTEGER', 'JSON', 'BLOB']);
    assert.equal(pq.rows[0]!.port, 443);
    // hyparquet parses columns of the JSON logical type itself.
    assert.deepEqual(pq.rows[0]!.details, https[0]!.details);
    assert.deepEqual([...(pq.rows[0]!.raw as Uint8Array)], [0, 1, 2, 255]);
    assert.equal(pq.rows[1]!.details, null);
    assert.equal(pq.rows[1]!.raw, null);

    const http = [{ timestamp: 1, tunnel_id: 2, domain: 'c.example', port: 80, details: { method: 'GET', uri: '/x', version: 'HTTP/1.1' }, raw: 'GET /x' }];
    await writer.write(FEEDS.honeypot_http, linesOf(http), join(dir, 'http.parquet'));
    const h = await readParquet(join(dir, 'http.parquet'));
    assert.deepEqual(h.fields.map((f) => f.name), ['timestamp', 'tunnel_id', 'domain', 'port', 'method', 'uri', 'version', 'raw']);
    const dec = (v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v);
    assert.deepEqual(Object.values(h.rows[0]!).map(dec), [1n, 2n, 'c.example', 80, 'GET', '/x', 'HTTP/1.1', 'GET /x']);
  });

  it('should write a valid file with zero rows and the full schema', async () => {
    for (const feed of Object.values(FEEDS)) {
      const out = join(dir, `empty-${feed.id}.parquet`);
      const info = await writer.write(feed, linesOf([]), out);
      assert.equal(info.rows, 0);
      const pq = await readParquet(out);
      assert.equal(pq.numRows, 0);
      assert.deepEqual(pq.fields, feed.parquet.map((c) => ({ name: c.name, type: c.type })), feed.id);
    }
  });

  it('should give byte-identical files for the same lines (stable checksums)', async () => {
    const records = Array.from({ length: 20_000 }, (_, i) => ({ session: `s${i % 97}`, sequential_id: i, command: Buffer.from(`ls ${i}`).toString('base64'), hash: 'ab'.repeat(32) }));
    const a = await writer.write(FEEDS.honeypot_adb, linesOf(records), join(dir, 'adb1.parquet'));
    const b = await writer.write(FEEDS.honeypot_adb, linesOf(records), join(dir, 'adb2.parquet'));
    assert.equal(a.sha256, b.sha256);
    assert.equal(a.rows, 20_000);
  });

  it('should take concurrent writes on one writer', async () => {
    const make = (n: number) => Array.from({ length: n }, (_, i) => ({ info_hash: `h${i}`, name: `n${i}`, magnet_uri: 'm', total_size: i, piece_length: 1, file_count: 1, timestamp: i }));
    const infos = await Promise.all([30_000, 20_000, 10_000].map((n) => writer.write(FEEDS.torrents, linesOf(make(n)), join(dir, `c${n}.parquet`))));
    assert.deepEqual(infos.map((i) => i.rows), [30_000, 20_000, 10_000]);
    assert.equal((await readParquet(join(dir, 'c20000.parquet'))).numRows, 20_000);
  });

  it('should fail, not hang, on a record DuckDB cannot type, or when reading the log fails midway', async () => {
    const bad = [{ range_start: 'a', range_end: 'b', provider: 'p', type: 't', country_code: 'DE', asn: 'not a number', timestamp: 1 }];
    await assert.rejects(writer.write(FEEDS.anonymizers, linesOf(bad), join(dir, 'bad.parquet')));
    async function* broken(): AsyncIterable<string> {
      for (let i = 0; i < 50_000; i++) yield JSON.stringify({ ip: '192.0.2.1', provider: 'p', type: 't', timestamp: i, country_code: 'DE', asn: i });
      throw new Error('log read failed');
    }
    await assert.rejects(writer.write(FEEDS.proxies, broken(), join(dir, 'broken.parquet')), /log read failed/);
    assert.deepEqual(readdirSync(join(dir, 'spool')), [], 'spools removed');
    // The writer is still usable afterwards.
    assert.equal((await writer.write(FEEDS.proxies, linesOf([]), join(dir, 'after.parquet'))).rows, 0);
  });
});

describe(`${ParquetWriter.name} from files`, () => {
  let dir: string;
  let writer: ParquetWriter;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-pqf-'));
    writer = await ParquetWriter.create({ spoolDir: join(dir, 'spool'), threads: 2 });
  });
  after(() => {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const adb = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ session: `s${(from + i) % 7}`, sequential_id: from + i, command: Buffer.from([from + i, 0, 255]).toString('base64'), hash: 'cd'.repeat(32) }));
  const ndjson = (name: string, records: object[]) => {
    const file = join(dir, name);
    writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return file;
  };
  const expectAdb = (records: ReturnType<typeof adb>) => records.map((r) => ({ ...r, sequential_id: BigInt(r.sequential_id), command: new Uint8Array(Buffer.from(r.command, 'base64')) }));

  it('should read NDJSON files in order into the same bytes as the streamed lines', async () => {
    const a = adb(0, 5000);
    const b = adb(5000, 3000);
    const files = [ndjson('a.ndjson', a), ndjson('b.ndjson', b)];
    const viaFiles = await writer.writeNdjsonFiles(FEEDS.honeypot_adb, files, join(dir, 'f.parquet'), { kind: 'hourly' });
    const viaLines = await writer.write(FEEDS.honeypot_adb, linesOf([...a, ...b]), join(dir, 'l.parquet'), { kind: 'hourly' });
    assert.equal(viaFiles.rows, 8000);
    assert.equal(viaFiles.sha256, viaLines.sha256, 'one format, whichever way the rows came');
    assert.equal(viaFiles.sha256, createHash('sha256').update(readFileSync(join(dir, 'f.parquet'))).digest('hex'));
    const pq = await readParquet(join(dir, 'f.parquet'));
    assert.deepEqual(pq.rows, expectAdb([...a, ...b]));
    assert.equal(pq.kv.kind, 'hourly');
    assert.equal((await writer.writeNdjsonFiles(FEEDS.honeypot_adb, [], join(dir, 'e.parquet'))).rows, 0);
  });

  it('should concatenate parquet files in order with the catalog types, and refuse a row count other than expected', async () => {
    const parts = [adb(0, 2000), [], adb(2000, 10), adb(2010, 4000)];
    const files: string[] = [];
    for (const [i, p] of parts.entries()) {
      files.push(join(dir, `h${i}.parquet`));
      await writer.write(FEEDS.honeypot_adb, linesOf(p), files[i]!, { kind: 'hourly', hour: String(i) });
    }
    const info = await writer.concatParquet(FEEDS.honeypot_adb, files, join(dir, 'day.parquet'), { kind: 'daily' }, 6010);
    assert.equal(info.rows, 6010);
    const pq = await readParquet(join(dir, 'day.parquet'));
    assert.deepEqual(pq.rows, expectAdb(parts.flat()));
    assert.deepEqual(pq.fields, FEEDS.honeypot_adb.parquet.map((c) => ({ name: c.name, type: c.type })));
    assert.deepEqual({ kind: pq.kv.kind, hour: pq.kv.hour, feed: pq.kv.feed }, { kind: 'daily', hour: undefined, feed: 'honeypot_adb' });
    await assert.rejects(writer.concatParquet(FEEDS.honeypot_adb, files, join(dir, 'bad.parquet'), {}, 6011), /6010 rows read/);
    assert.equal((await writer.concatParquet(FEEDS.honeypot_adb, [], join(dir, 'none.parquet'))).rows, 0);
  });
});
