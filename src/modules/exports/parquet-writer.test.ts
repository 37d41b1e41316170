import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';
import { FEEDS, type FeedDef } from '../feeds/feed-catalog.ts';
import { CT, decodeStruct, encodeStruct, MergeRefused } from './parquet-footer.ts';
import { recordsOf } from '../../../test/helpers/parquet-fixtures.ts';
import { ParquetWriter } from './parquet-writer.ts';
import { readParquet } from '../../../test/helpers/parquet-test-reader.ts';

async function* linesOf(records: object[]): AsyncIterable<string> {
  for (const r of records) yield JSON.stringify(r);
}

for (const spool of ['fifo', 'file'] as const)
  describe(`${ParquetWriter.name} (${spool} spool)`, () => {
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
        range_start: `10.0.${i >> 8}.${i & 255}`,
        range_end: `10.0.${i >> 8}.${i & 255}`,
        provider: ['nord', "o'hare"][i % 2],
        type: 'vpn',
        country_code: 'DE',
        asn: 4_200_000_000 + i,
        timestamp: 1_795_000_000 + i,
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
      assert.deepEqual(
        pq.fields,
        FEEDS.anonymizers.parquet.map((c) => ({ name: c.name, type: c.type })),
      );
      assert.deepEqual(info.schema.fields, pq.fields);
      // Integers come back as bigint; ASNs above 2^31 keep their value (UBIGINT).
      assert.deepEqual(
        pq.rows,
        records.map((r) => ({ ...r, asn: BigInt(r.asn), timestamp: BigInt(r.timestamp), variant: null, simulated: null })),
      );
    });

    it('should flatten nested members, decode base64 to BLOB, keep JSON text and write NULL for absent members', async () => {
      const https = [
        {
          timestamp: 1_795_000_000_123,
          tunnel_id: 7,
          domain: 'a.example',
          port: 443,
          details: { ja4: 't13d', sni: 'a.example' },
          raw: Buffer.from([0, 1, 2, 255]).toString('base64'),
        },
        { timestamp: 1_795_000_000_124, tunnel_id: 8, domain: 'b.example', port: 8443, details: null },
      ];
      await writer.write(FEEDS.honeypot_https, linesOf(https), join(dir, 'https.parquet'));
      const pq = await readParquet(join(dir, 'https.parquet'));
      assert.deepEqual(
        pq.fields.map((f) => f.type),
        [
          'BIGINT',
          'BIGINT',
          'VARCHAR',
          'INTEGER',
          'JSON',
          'BLOB',
          'VARCHAR',
          'STRUCT(proxy_ip VARCHAR, server VARCHAR, pool_id JSON, provider VARCHAR)',
          'VARCHAR',
          'BOOLEAN',
        ],
      );
      assert.equal(pq.rows[0]!.port, 443);
      // hyparquet parses columns of the JSON logical type itself.
      assert.deepEqual(pq.rows[0]!.details, https[0]!.details);
      assert.deepEqual([...(pq.rows[0]!.raw as Uint8Array)], [0, 1, 2, 255]);
      assert.equal(pq.rows[1]!.details, null);
      assert.equal(pq.rows[1]!.raw, null);

      const http = [
        {
          timestamp: 1,
          tunnel_id: 2,
          domain: 'c.example',
          port: 80,
          details: { method: 'GET', uri: '/x', version: 'HTTP/1.1' },
          raw: 'GET /x',
        },
      ];
      await writer.write(FEEDS.honeypot_http, linesOf(http), join(dir, 'http.parquet'));
      const h = await readParquet(join(dir, 'http.parquet'));
      assert.deepEqual(
        h.fields.map((f) => f.name),
        [
          'timestamp',
          'tunnel_id',
          'domain',
          'port',
          'method',
          'uri',
          'version',
          'raw',
          'protocol',
          'meta',
          'headers',
          'source_ip',
          'simulated',
        ],
      );
      const dec = (v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v);
      // hyparquet reads a NULL group (meta, headers) as undefined.
      assert.deepEqual(Object.values(h.rows[0]!).map(dec), [
        1n,
        2n,
        'c.example',
        80,
        'GET',
        '/x',
        'HTTP/1.1',
        'GET /x',
        null,
        undefined,
        undefined,
        null,
        null,
      ]);
    });

    it('should write a valid file with zero rows and the full schema', async () => {
      for (const feed of Object.values(FEEDS)) {
        const out = join(dir, `empty-${feed.id}.parquet`);
        const info = await writer.write(feed, linesOf([]), out);
        assert.equal(info.rows, 0);
        const pq = await readParquet(out);
        assert.equal(pq.numRows, 0);
        assert.deepEqual(
          pq.fields,
          feed.parquet.map((c) => ({ name: c.name, type: c.type })),
          feed.id,
        );
      }
    });

    it('should give byte-identical files for the same lines (stable checksums)', async () => {
      const records = Array.from({ length: 20_000 }, (_, i) => ({
        session: `s${i % 97}`,
        sequential_id: i,
        command: Buffer.from(`ls ${i}`).toString('base64'),
        hash: 'ab'.repeat(32),
      }));
      const a = await writer.write(FEEDS.honeypot_adb, linesOf(records), join(dir, 'adb1.parquet'));
      const b = await writer.write(FEEDS.honeypot_adb, linesOf(records), join(dir, 'adb2.parquet'));
      assert.equal(a.sha256, b.sha256);
      assert.equal(a.rows, 20_000);
    });

    it('should take concurrent writes on one writer', async () => {
      const make = (n: number) =>
        Array.from({ length: n }, (_, i) => ({
          info_hash: `h${i}`,
          name: `n${i}`,
          magnet_uri: 'm',
          total_size: i,
          piece_length: 1,
          file_count: 1,
          timestamp: i,
        }));
      const infos = await Promise.all(
        [30_000, 20_000, 10_000].map((n) => writer.write(FEEDS.torrents, linesOf(make(n)), join(dir, `c${n}.parquet`))),
      );
      assert.deepEqual(
        infos.map((i) => i.rows),
        [30_000, 20_000, 10_000],
      );
      assert.equal((await readParquet(join(dir, 'c20000.parquet'))).numRows, 20_000);
    });

    it('should fail, not hang, on a record DuckDB cannot type, or when reading the log fails midway', async () => {
      const bad = [{ range_start: 'a', range_end: 'b', provider: 'p', type: 't', country_code: 'DE', asn: 'not a number', timestamp: 1 }];
      await assert.rejects(writer.write(FEEDS.anonymizers, linesOf(bad), join(dir, 'bad.parquet')));
      async function* broken(): AsyncIterable<string> {
        for (let i = 0; i < 50_000; i++)
          yield JSON.stringify({ ip: '192.0.2.1', provider: 'p', type: 't', timestamp: i, country_code: 'DE', asn: i });
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
    Array.from({ length: n }, (_, i) => ({
      session: `s${(from + i) % 7}`,
      sequential_id: from + i,
      command: Buffer.from([from + i, 0, 255]).toString('base64'),
      hash: 'cd'.repeat(32),
      timestamp: 1_795_000_000_000 + from + i,
      ...((from + i) % 3 === 0 ? { source_ip: '198.51.100.7' } : {}),
    }));
  const ndjson = (name: string, records: object[]) => {
    const file = join(dir, name);
    writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return file;
  };
  const expectAdb = (records: ReturnType<typeof adb>) =>
    records.map((r) => ({
      ...r,
      sequential_id: BigInt(r.sequential_id),
      command: new Uint8Array(Buffer.from(r.command, 'base64')),
      // ms in the log, an instant in the file (hyparquet reads TIMESTAMP as a Date)
      timestamp: new Date(r.timestamp),
      source_ip: r.source_ip ?? null,
      simulated: null,
    }));

  it('should read NDJSON files in order into the same bytes as the streamed lines', async () => {
    const a = adb(0, 5000);
    const b = adb(5000, 3000);
    const files = [ndjson('a.ndjson', a), ndjson('b.ndjson', b)];
    const viaFiles = await writer.writeNdjsonFiles(FEEDS.honeypot_adb, files, join(dir, 'f.parquet'), { kind: 'hourly' });
    const viaLines = await writer.write(FEEDS.honeypot_adb, linesOf([...a, ...b]), join(dir, 'l.parquet'), { kind: 'hourly' });
    assert.equal(viaFiles.rows, 8000);
    assert.equal(viaFiles.sha256, viaLines.sha256, 'one format, whichever way the rows came');
    assert.equal(
      viaFiles.sha256,
      createHash('sha256')
        .update(readFileSync(join(dir, 'f.parquet')))
        .digest('hex'),
    );
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
    assert.deepEqual(
      pq.fields,
      FEEDS.honeypot_adb.parquet.map((c) => ({ name: c.name, type: c.type })),
    );
    assert.deepEqual({ kind: pq.kv.kind, hour: pq.kv.hour, feed: pq.kv.feed }, { kind: 'daily', hour: undefined, feed: 'honeypot_adb' });
    await assert.rejects(writer.concatParquet(FEEDS.honeypot_adb, files, join(dir, 'bad.parquet'), {}, 6011), /6010 rows read/);
    assert.equal((await writer.concatParquet(FEEDS.honeypot_adb, [], join(dir, 'none.parquet'))).rows, 0);
  });
});

describe(`${ParquetWriter.name} merging row groups`, () => {
  let dir: string;
  let writer: ParquetWriter;
  let db: DuckDBInstance;
  let con: DuckDBConnection;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'umbra-pqm-'));
    writer = await ParquetWriter.create({ spoolDir: join(dir, 'spool'), threads: 2 });
    db = await DuckDBInstance.create(':memory:');
    con = await db.connect();
  });
  after(() => {
    writer.close();
    con.closeSync();
    db.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Hourly-like files of `feed` with these row counts (0: an hour with an empty file). */
  const hours = async (feed: FeedDef, counts: readonly number[], tag: string) => {
    const files: string[] = [];
    let from = 0;
    for (const [h, n] of counts.entries()) {
      files.push(join(dir, `${tag}-${feed.id}-${h}.parquet`));
      await writer.write(feed, linesOf(recordsOf(feed, from, n)), files[h]!, { kind: 'hourly', date: '2026-11-21', hour: String(h) });
      from += n;
    }
    return files;
  };
  const duckRows = async (files: string | readonly string[], where = '') =>
    (await con.runAndReadAll(`SELECT * FROM read_parquet(${JSON.stringify(files).replaceAll('"', "'")}) ${where}`)).getRowsJson();
  const footerOf = (bytes: Buffer) => bytes.subarray(bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8), bytes.length - 8);
  const dataOf = (bytes: Buffer) => bytes.subarray(4, bytes.length - 8 - footerOf(bytes).length);
  const footerField = (file: string, id: number) => {
    const f = decodeStruct(footerOf(readFileSync(file))).struct.fields.find((x) => x.id === id);
    return f && encodeStruct({ type: CT.STRUCT, fields: [f] });
  };

  it("should give exactly the inputs' rows in order for every feed, read by DuckDB and by hyparquet, with the COPY's schema and key-values", async () => {
    for (const feed of Object.values(FEEDS)) {
      const files = await hours(feed, [300, 0, 1, 0, 250], 'all');
      const kv = { kind: 'daily', date: '2026-11-21' };
      const out = join(dir, `day-${feed.id}.parquet`);
      const info = await writer.concatParquet(feed, files, out, kv, 551);
      assert.equal(info.via, 'merge', feed.id);
      const bytes = readFileSync(out);
      assert.equal(info.sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.equal(info.size, bytes.length);
      assert.equal(info.rows, 551);
      // Nothing re-encoded: the inputs' data regions, byte for byte, one after the other.
      assert.ok(dataOf(bytes).equals(Buffer.concat(files.map((f) => dataOf(readFileSync(f))))), feed.id);

      const inputs = await Promise.all(files.map((f) => readParquet(f)));
      const merged = await readParquet(out);
      assert.equal(merged.numRows, 551);
      assert.deepEqual(
        merged.rows,
        inputs.flatMap((p) => p.rows),
        `${feed.id}: hyparquet`,
      );
      assert.deepEqual(await duckRows(out), await duckRows(files), `${feed.id}: DuckDB`);
      // A filter DuckDB answers with the last input's dictionary and bloom filter (a value only it holds).
      const col = feed.parquet.find((c) => c.type === 'VARCHAR')!;
      const where = `WHERE "${col.name}" IN ('${col.name}-485', '${col.name}-388')`;
      const found = await duckRows(out, where);
      assert.ok(found.length > 0, feed.id);
      assert.deepEqual(found, await duckRows(files, where), `${feed.id}: filtered`);

      // The same footer key-values and schema as the DuckDB COPY of the same files.
      const copied = join(dir, `copy-${feed.id}.parquet`);
      await writer.copyConcatParquet(feed, files, copied, kv, 551);
      const viaCopy = await readParquet(copied);
      assert.deepEqual(merged.kv, viaCopy.kv, feed.id);
      assert.deepEqual(
        merged.fields,
        feed.parquet.map((c) => ({ name: c.name, type: c.type })),
        feed.id,
      );
      assert.deepEqual(info.schema, (await writer.copyConcatParquet(feed, files, copied, kv)).schema);
      for (const id of [2, 5])
        assert.ok(footerField(out, id)!.equals(footerField(copied, id)!), `${feed.id}: footer field ${id} as COPY writes it`);
      assert.deepEqual(await duckRows(out), await duckRows(copied), `${feed.id}: same rows as the COPY`);
    }
  });

  it('should shift offsets right past many row groups: bloom-filtered and projected reads of later inputs find their rows', async () => {
    // 130,000 rows make DuckDB write two row groups (122,880 rows each at most) in the first file.
    const files = await hours(FEEDS.anonymizers, [130_000, 0, 5000, 1], 'big');
    const out = join(dir, 'big-day.parquet');
    const info = await writer.mergeParquet(FEEDS.anonymizers, files, out, { kind: 'daily' }, 135_001);
    const meta = parquetMetadata(new Uint8Array(readFileSync(out)).buffer);
    assert.equal(meta.row_groups.length, 4);
    assert.equal(info.rows, 135_001);
    const q = async (sql: string) => (await con.runAndReadAll(sql.replaceAll('$F', `'${out}'`))).getRowsJson();
    // provider values repeat every 20 rows (dictionary + bloom filter); 'provider-7' rows exist in every input but the empty ones.
    assert.deepEqual(
      await q(`SELECT count(*) FROM $F WHERE provider = 'provider-7'`),
      await q(`SELECT count(*) FROM read_parquet([${files.map((f) => `'${f}'`)}]) WHERE provider = 'provider-7'`),
    );
    // A value only the third input holds: found through that input's (shifted) dictionary and bloom filter.
    assert.deepEqual(await q(`SELECT timestamp FROM $F WHERE range_start = 'range_start-130077'`), [['1795000130077']]);
    assert.deepEqual(await q(`SELECT range_start, asn FROM $F WHERE timestamp = 1795000135000`), [['range_start-0', '4200135000']]);
    assert.deepEqual(
      await q(`SELECT count(*), min(asn), max(asn) FROM $F`),
      [['135001', '4200000000', '4200135000']].map((r) => r.map(String)),
    );
  });

  it('should merge a single input into a file with the daily key-values', async () => {
    const [file] = await hours(FEEDS.honeypot_https, [40], 'one');
    const out = join(dir, 'one-day.parquet');
    const info = await writer.concatParquet(FEEDS.honeypot_https, [file!], out, { kind: 'daily', date: '2026-11-21' });
    assert.equal(info.via, 'merge');
    const pq = await readParquet(out);
    assert.deepEqual(pq.rows, (await readParquet(file!)).rows);
    assert.deepEqual({ kind: pq.kv.kind, date: pq.kv.date, hour: pq.kv.hour }, { kind: 'daily', date: '2026-11-21', hour: undefined });
  });

  it('should refuse inputs of another schema or feed, and then concatenate with the COPY, casting to the catalog types', async () => {
    const [good] = await hours(FEEDS.proxies, [20], 'mix');
    // A proxies file whose asn is BIGINT (an older writer): same names, same footer key-values.
    const old = join(dir, 'old-proxies.parquet');
    const kv =
      `{'feed': 'proxies', 'schema': ` +
      `'${JSON.stringify({ fields: FEEDS.proxies.parquet.map((c) => ({ name: c.name, type: c.type })) })}'}`;
    await con.run(`COPY (SELECT 'i' AS ip, 'p' AS provider, 't' AS type, 5::BIGINT AS timestamp, 'DE' AS country_code, 4200000000::BIGINT AS asn,
      NULL::VARCHAR AS variant, NULL::BOOLEAN AS simulated)
      TO '${old}' (FORMAT parquet, COMPRESSION zstd, KV_METADATA ${kv})`);
    const out = join(dir, 'mix-day.parquet');
    await assert.rejects(writer.mergeParquet(FEEDS.proxies, [good!, old], out), MergeRefused);
    const info = await writer.concatParquet(FEEDS.proxies, [good!, old], out, { kind: 'daily' }, 21);
    assert.equal(info.via, 'copy');
    const pq = await readParquet(out);
    assert.equal(pq.fields.find((f) => f.name === 'asn')?.type, 'UBIGINT');
    assert.equal(pq.rows.at(-1)!.asn, 4_200_000_000n);
    // ja4t has proxies' columns and more: never merged as proxies.
    const [other] = await hours(FEEDS.ja4t, [3], 'mix');
    await assert.rejects(writer.mergeParquet(FEEDS.proxies, [good!, other!], out), MergeRefused);
    await assert.rejects(writer.mergeParquet(FEEDS.ja4t, [other!, good!], out), MergeRefused);
    // A row count other than recorded is an error on the merge path too, not a fallback.
    await assert.rejects(writer.concatParquet(FEEDS.proxies, [good!], out, {}, 19), /20 rows read/);
  });
});
