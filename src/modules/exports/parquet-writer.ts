import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ColumnType, FeedDef } from '../feeds/feed-catalog.ts';
import {
  encodeStruct,
  footerKv,
  footerLength,
  mergeFooters,
  MergeRefused,
  parseFooter,
  type ParquetParts,
  type ThriftStruct,
} from './parquet-footer.ts';

export interface ParquetSchema {
  fields: { name: string; type: ColumnType }[];
}

export interface ParquetFileInfo {
  /** Lower-case hex SHA-256 of the file's bytes. */
  sha256: string;
  size: number;
  rows: number;
  schema: ParquetSchema;
}

export interface ParquetWriterOptions {
  /** Where NDJSON spool files go; defaults to the OS temp dir. */
  spoolDir?: string;
  /** DuckDB worker threads; defaults to DuckDB's choice (all cores). */
  threads?: number;
  /**
   * `file` (default): a temp NDJSON file, then DuckDB. `fifo` (falls back to `file` where mkfifo is
   * missing): DuckDB reads a named pipe while JS fills it, so a day's lines never sit on disk; on the
   * 2-core bench machine it was no faster (bench/exports.bench.ts), and it has sharper edges
   * (blocking opens in the libuv pool), so it is opt-in.
   */
  spool?: 'fifo' | 'file';
}

export const schemaOf = (feed: FeedDef): ParquetSchema => ({ fields: feed.parquet.map((c) => ({ name: c.name, type: c.type })) });

/**
 * Writes a feed's records (canonical JSON lines) to a zstd parquet file with DuckDB.
 *
 * The lines are spooled (to a FIFO or a temp file) as NDJSON and DuckDB's `read_json` parses them
 * with explicit column types, in C++: no JSON.parse or per-row call from JS. That works for every
 * FeedLog backend because the spool is ours. (A typed appender was measured 2-3x slower; see bench/.)
 * Faster paths skip the spool: writeNdjsonFiles reads a local log's own files, concatParquet merges
 * files this writer made (at the row-group level, without DuckDB, when their schemas allow). DuckDB
 * keeps insertion order, so the same input always gives the same bytes.
 */
export class ParquetWriter {
  private constructor(
    private readonly db: DuckDBInstance,
    private readonly con: DuckDBConnection,
    private readonly spoolDir: string,
    private readonly fifo: boolean,
  ) {}

  private queue: Promise<unknown> = Promise.resolve();

  static async create(opts: ParquetWriterOptions = {}): Promise<ParquetWriter> {
    const db = await DuckDBInstance.create(':memory:', opts.threads ? { threads: String(opts.threads) } : {});
    const con = await db.connect();
    return new ParquetWriter(db, con, opts.spoolDir ?? tmpdir(), opts.spool === 'fifo');
  }

  /**
   * Writes `lines` (in order) to `outFile`, replacing it. Zero lines give a valid file with zero rows.
   * Calls run one at a time: the connection runs one query at a time anyway, and a queued COPY would
   * hold a libuv thread while its FIFO's blocking open() waits for a reader, starving the pool.
   * `lines`: one line per item, or blocks of lines joined by '\n' (FeedLog.readHourBlocks).
   */
  write(feed: FeedDef, lines: AsyncIterable<string>, outFile: string, kv: Record<string, string> = {}): Promise<ParquetFileInfo> {
    return this.enqueue(() => this.writeNow(feed, lines, outFile, kv));
  }

  /**
   * Writes NDJSON files of whole lines (FeedLog.hourFile), in the order given, to `outFile`: DuckDB
   * reads them itself, so no line passes through JS. The row count is what COPY wrote.
   */
  writeNdjsonFiles(feed: FeedDef, files: readonly string[], outFile: string, kv: Record<string, string> = {}): Promise<ParquetFileInfo> {
    return this.enqueue(async () => {
      if (files.length === 0) return this.writeEmpty(feed, outFile, kv);
      const { readColumns, select } = readPlan(feed);
      const r =
        await this.con.run(`COPY (SELECT ${select} FROM read_json(${listLit(files)}, format = 'newline_delimited', columns = ${readColumns}, maximum_object_size = 67108864))
        TO ${lit(outFile)} ${copyOptions(feed, kv)}`);
      return { ...(await digest(outFile)), rows: Number(r.rowsChanged), schema: schemaOf(feed) };
    });
  }

  /**
   * Concatenates parquet files this writer made for the same feed (its columns), in the order given,
   * into `outFile`: the daily rollup. Merged at the row-group level when it can be (mergeParquet: the
   * inputs' column chunks copied as they are under one new footer), else one DuckDB COPY that reads
   * and writes every row again (copyConcatParquet). Either way the output has the catalog's schema and
   * footer key-values, and when `expectRows` is given (the rows the catalog recorded for the inputs),
   * any other count is an error. `via` says which way it went.
   */
  async concatParquet(
    feed: FeedDef,
    files: readonly string[],
    outFile: string,
    kv: Record<string, string> = {},
    expectRows?: number,
  ): Promise<ParquetFileInfo & { via: 'merge' | 'copy' }> {
    try {
      return { ...(await this.mergeParquet(feed, files, outFile, kv, expectRows)), via: 'merge' };
    } catch (e) {
      if (!(e instanceof MergeRefused)) throw e;
      await rm(outFile, { force: true });
      return { ...(await this.copyConcatParquet(feed, files, outFile, kv, expectRows)), via: 'copy' };
    }
  }

  /**
   * The DuckDB way of concatenating: one COPY over the files with every column cast to the catalog's
   * type, so the output's schema never depends on the inputs'. Decodes and encodes every row.
   */
  copyConcatParquet(
    feed: FeedDef,
    files: readonly string[],
    outFile: string,
    kv: Record<string, string> = {},
    expectRows?: number,
  ): Promise<ParquetFileInfo> {
    return this.enqueue(async () => {
      if (files.length === 0) return this.writeEmpty(feed, outFile, kv);
      const select = feed.parquet.map((c) => `CAST(${ident(c.name)} AS ${c.type}) AS ${ident(c.name)}`).join(', ');
      const r = await this.con.run(
        `COPY (SELECT ${select} FROM read_parquet(${listLit(files)})) TO ${lit(outFile)} ${copyOptions(feed, kv)}`,
      );
      const rows = Number(r.rowsChanged);
      if (expectRows !== undefined && rows !== expectRows)
        throw new Error(`parquet writer: ${rows} rows read from ${files.length} files that should hold ${expectRows}`);
      return { ...(await digest(outFile)), rows, schema: schemaOf(feed) };
    });
  }

  /**
   * Merges parquet files this writer made for `feed` at the row-group level: "PAR1", each input's
   * data region (its bytes between the leading magic and its footer) copied as is, then one footer
   * listing every row group of every input with offsets shifted (mergeFooters), the same footer
   * key-values a COPY gives, its length and "PAR1". Rows stay in input order. Pure I/O: the bytes
   * are streamed through one pair of buffers and hashed on the way.
   *
   * Throws MergeRefused, before writing anything, unless every input has exactly the schema this
   * writer gives the feed today (compared with a zero-row file it writes once per feed) and this
   * feed's footer key-values; the caller then writes the rows again (concatParquet does).
   */
  async mergeParquet(
    feed: FeedDef,
    files: readonly string[],
    outFile: string,
    kv: Record<string, string> = {},
    expectRows?: number,
  ): Promise<ParquetFileInfo> {
    if (files.length === 0) return this.enqueue(() => this.writeEmpty(feed, outFile, kv));
    const reference = await this.referenceFooter(feed);
    const wantSchema = JSON.stringify(schemaOf(feed));
    const inputs: FileHandle[] = [];
    try {
      for (const f of files) inputs.push(await open(f, 'r'));
      const parts = await Promise.all(inputs.map(readParts));
      for (const [i, p] of parts.entries()) {
        const ikv = new Map(footerKv(p.meta));
        if (ikv.get('feed') !== feed.id || ikv.get('schema') !== wantSchema)
          throw new MergeRefused(`parquet merge: ${files[i]} is not a ${feed.id} file of the current schema`);
      }
      const { meta, numRows } = mergeFooters(parts, reference, Object.entries(footerKvOf(feed, kv)));
      const rows = Number(numRows);
      if (expectRows !== undefined && rows !== expectRows)
        throw new Error(`parquet writer: ${rows} rows read from ${files.length} files that should hold ${expectRows}`);
      const footer = encodeStruct(meta);
      const hash = createHash('sha256');
      const out = await open(outFile, 'w');
      let size = 0;
      let pending: Promise<void> = Promise.resolve();
      const put = async (b: Buffer) => {
        hash.update(b);
        size += b.length;
        await pending;
        pending = writeAll(out, b);
      };
      try {
        await put(MAGIC);
        const bufs = [Buffer.allocUnsafe(COPY_CHUNK), Buffer.allocUnsafe(COPY_CHUNK)];
        let which = 0;
        for (const [i, fh] of inputs.entries()) {
          for (let pos = 4; pos < parts[i]!.dataEnd; ) {
            // Fill one buffer while the other is being written.
            const buf = bufs[which]!;
            which ^= 1;
            const n = Math.min(COPY_CHUNK, parts[i]!.dataEnd - pos);
            await readFully(fh, buf, n, pos);
            await put(buf.subarray(0, n));
            pos += n;
          }
        }
        const tail = Buffer.allocUnsafe(8);
        tail.writeUInt32LE(footer.length, 0);
        MAGIC.copy(tail, 4);
        await put(footer);
        await put(tail);
        await pending;
      } finally {
        await pending.catch(() => {});
        await out.close();
      }
      return { sha256: hash.digest('hex'), size, rows, schema: schemaOf(feed) };
    } finally {
      await Promise.all(inputs.map((fh) => fh.close()));
    }
  }

  private readonly references = new Map<string, Promise<ThriftStruct>>();

  /** The footer of a zero-row file of `feed` as this writer (this DuckDB) writes it: the schema merged files must have. */
  private referenceFooter(feed: FeedDef): Promise<ThriftStruct> {
    let ref = this.references.get(feed.id);
    if (!ref) {
      ref = this.enqueue(async () => {
        await mkdir(this.spoolDir, { recursive: true });
        const file = join(this.spoolDir, `umbra-schema-${randomBytes(8).toString('hex')}.parquet`);
        try {
          await this.writeEmpty(feed, file, {});
          const fh = await open(file, 'r');
          try {
            return (await readParts(fh)).meta;
          } finally {
            await fh.close();
          }
        } finally {
          await rm(file, { force: true });
        }
      });
      this.references.set(feed.id, ref);
      ref.catch(() => this.references.delete(feed.id));
    }
    return ref;
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job);
    this.queue = run.catch(() => {});
    return run;
  }

  /** NULLs in a column of a parquet file, from its footer's statistics (no row is read). */
  nullCount(file: string, column: string): Promise<number> {
    return this.enqueue(async () => {
      const r = await this.con.runAndReadAll(
        `SELECT coalesce(sum(stats_null_count), 0) FROM parquet_metadata(${lit(file)}) WHERE path_in_schema = ${lit(column)}`,
      );
      return Number(r.getRows()[0]?.[0] ?? 0);
    });
  }

  private async writeEmpty(feed: FeedDef, outFile: string, kv: Record<string, string>): Promise<ParquetFileInfo> {
    const empty = feed.parquet.map((c) => `CAST(NULL AS ${c.type}) AS ${ident(c.name)}`).join(', ');
    await this.con.run(`COPY (SELECT ${empty} LIMIT 0) TO ${lit(outFile)} ${copyOptions(feed, kv)}`);
    return { ...(await digest(outFile)), rows: 0, schema: schemaOf(feed) };
  }

  private async writeNow(
    feed: FeedDef,
    lines: AsyncIterable<string>,
    outFile: string,
    kv: Record<string, string>,
  ): Promise<ParquetFileInfo> {
    const schema = schemaOf(feed);
    const options = copyOptions(feed, kv);
    const it = lines[Symbol.asyncIterator]();
    let first = await it.next();
    while (!first.done && first.value === '') first = await it.next();
    if (first.done) return this.writeEmpty(feed, outFile, kv);
    const rest = { first: first.value, it };
    await mkdir(this.spoolDir, { recursive: true });
    const spool = join(this.spoolDir, `umbra-spool-${randomBytes(8).toString('hex')}.ndjson`);
    const { readColumns, select } = readPlan(feed);
    const sql = `COPY (SELECT ${select} FROM read_json(${lit(spool)}, format = 'newline_delimited', columns = ${readColumns}, maximum_object_size = 67108864))
      TO ${lit(outFile)} ${options}`;
    try {
      let rows: number;
      let written: number;
      if (this.fifo && makeFifo(spool)) {
        // DuckDB parses on its threads while this thread is still reading the log.
        const copy = this.con.run(sql);
        // If DuckDB fails before opening the FIFO, the writer's open() would wait forever.
        copy.catch(() => openFifoReader(spool));
        try {
          rows = await spoolLines(rest, spool);
        } catch (e) {
          await copy; // a DuckDB error explains a broken pipe better than EPIPE does
          throw e;
        }
        written = Number((await copy).rowsChanged);
      } else {
        rows = await spoolLines(rest, spool);
        written = Number((await this.con.run(sql)).rowsChanged);
      }
      // COPY reports the rows it wrote: a mismatch means a line did not become exactly one row.
      if (written !== rows) throw new Error(`parquet writer: ${written} rows written for ${rows} lines`);
      return { ...(await digest(outFile)), rows, schema };
    } finally {
      await rm(spool, { force: true });
    }
  }

  close(): void {
    this.con.closeSync();
    this.db.closeSync();
  }
}

/**
 * Writes lines to a file or FIFO in ~1 MB chunks, keeping one write in flight; returns the line count.
 * Takes the iterator itself: a wrapping generator would cost one more await per line.
 */
async function spoolLines(lines: { first: string; it: AsyncIterator<string> }, file: string): Promise<number> {
  const fh = await open(file, 'w');
  let rows = 1;
  for (let i = lines.first.indexOf('\n'); i !== -1; i = lines.first.indexOf('\n', i + 1)) rows++;
  let buf = `${lines.first}\n`;
  let pending: Promise<void> = Promise.resolve();
  try {
    for (let r = await lines.it.next(); !r.done; r = await lines.it.next()) {
      const line = r.value;
      if (line === '') continue;
      buf += `${line}\n`;
      // An item may be a block of lines joined by '\n' (FeedLog.readHourBlocks): count them all.
      rows++;
      for (let i = line.indexOf('\n'); i !== -1; i = line.indexOf('\n', i + 1)) rows++;
      if (buf.length >= 1 << 20) {
        const chunk = buf;
        buf = '';
        await pending;
        pending = fh.writeFile(chunk);
      }
    }
    await pending;
    await fh.writeFile(buf);
  } finally {
    await pending.catch(() => {});
    await fh.close();
  }
  return rows;
}

function makeFifo(path: string): boolean {
  try {
    execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function openFifoReader(path: string): void {
  open(path, constants.O_RDONLY | constants.O_NONBLOCK).then(
    (fh) => fh.close(),
    () => {},
  );
}

interface Node {
  type?: string;
  children: Map<string, Node>;
}

/** read_json column types (nested members as STRUCTs) and the SELECT list that flattens them in catalog order. */
function readPlan(feed: FeedDef): { readColumns: string; select: string } {
  const root: Node = { children: new Map() };
  for (const c of feed.parquet) {
    let node = root;
    for (const part of c.from.split('.')) {
      let next = node.children.get(part);
      if (!next) node.children.set(part, (next = { children: new Map() }));
      node = next;
    }
    // BLOB columns arrive as base64 text, timestamps as integers in the feed's unit; JSON keeps the member's JSON text.
    node.type = c.type === 'BLOB' ? 'VARCHAR' : c.type === 'TIMESTAMP WITH TIME ZONE' ? 'BIGINT' : c.type;
  }
  const typeOf = (n: Node): string => n.type ?? `STRUCT(${[...n.children].map(([k, v]) => `${ident(k)} ${typeOf(v)}`).join(', ')})`;
  const readColumns = `{${[...root.children].map(([k, v]) => `${lit(k)}: ${lit(typeOf(v))}`).join(', ')}}`;
  const select = feed.parquet
    .map((c) => {
      const path = c.from.split('.').map(ident).join('.');
      // make_timestamptz(µs) is an instant: a cast from TIMESTAMP would read it in the session's time zone.
      const micros = feed.unit === 'ms' ? 1000 : 1_000_000;
      const value =
        c.type === 'BLOB' ? `from_base64(${path})` : c.type === 'TIMESTAMP WITH TIME ZONE' ? `make_timestamptz(${path} * ${micros})` : path;
      return `${value} AS ${ident(c.name)}`;
    })
    .join(', ');
  return { readColumns, select };
}

const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;
const ident = (s: string): string => `"${s.replaceAll('"', '""')}"`;
const kvLiteral = (kv: Record<string, string>): string =>
  `{${Object.entries(kv)
    .map(([k, v]) => `${lit(k)}: ${lit(v)}`)
    .join(', ')}}`;
const listLit = (files: readonly string[]): string => `[${files.map(lit).join(', ')}]`;

/** The footer key-values of a feed's file: the caller's, then the feed and its schema. No row_count: the footer's num_rows is it. */
const footerKvOf = (feed: FeedDef, kv: Record<string, string>): Record<string, string> => ({
  ...kv,
  feed: feed.id,
  schema: JSON.stringify(schemaOf(feed)),
});

/** zstd, and the footer key-values. */
const copyOptions = (feed: FeedDef, kv: Record<string, string>): string =>
  `(FORMAT parquet, COMPRESSION zstd, KV_METADATA ${kvLiteral(footerKvOf(feed, kv))})`;

const MAGIC = Buffer.from('PAR1', 'latin1');
/** The merge's copy buffers (two): large reads and writes, a few MB of memory. */
const COPY_CHUNK = 4 << 20;

/** A parquet file's footer and data region, from its first 4 and last 8 bytes and the footer. */
async function readParts(fh: FileHandle): Promise<ParquetParts> {
  const size = (await fh.stat()).size;
  if (size < 12) throw new MergeRefused('parquet: file too short');
  const head = Buffer.allocUnsafe(4);
  await readFully(fh, head, 4, 0);
  if (!head.equals(MAGIC)) throw new MergeRefused('parquet: no leading PAR1 magic');
  const tail = Buffer.allocUnsafe(8);
  await readFully(fh, tail, 8, size - 8);
  const len = footerLength(tail);
  if (len > size - 12) throw new MergeRefused('parquet: footer longer than the file');
  const footer = Buffer.allocUnsafe(len);
  await readFully(fh, footer, len, size - 8 - len);
  return parseFooter(footer, size);
}

async function readFully(fh: FileHandle, buf: Buffer, n: number, position: number): Promise<void> {
  for (let got = 0; got < n; ) {
    const { bytesRead } = await fh.read(buf, got, n - got, position + got);
    if (bytesRead === 0) throw new Error('parquet merge: file shorter than its footer says');
    got += bytesRead;
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  for (let done = 0; done < buf.length; ) done += (await fh.write(buf, done, buf.length - done)).bytesWritten;
}

/** SHA-256 and size of a file: one reused buffer and no stream machinery (the rollup hashes 24 small files). */
export async function digest(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, (await fh.stat()).size)));
    let size = 0;
    for (let n = (await fh.read(buf, 0, buf.length, null)).bytesRead; n > 0; n = (await fh.read(buf, 0, buf.length, null)).bytesRead) {
      hash.update(buf.subarray(0, n));
      size += n;
    }
    return { sha256: hash.digest('hex'), size };
  } finally {
    await fh.close();
  }
}
