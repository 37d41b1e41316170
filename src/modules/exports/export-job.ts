import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../../lib/clock.ts';
import { FEEDS, type FeedId } from '../feeds/feed-catalog.ts';
import type { FeedLog } from '../feeds/feed-log.ts';
import { damaged, noDamage, validBlocks, type LineDamage } from '../feeds/log-lines.ts';
import type { ObjectStore } from './object-store.ts';
import type { ParquetFileInfo, ParquetWriter } from './parquet-writer.ts';
import { settlePublish } from './publish-recovery.ts';
import type { Snapshot, SnapshotCatalog } from './snapshot-catalog.ts';

/** What the hourly and daily jobs need; storage/index.ts builds the backends, app.ts the rest. */
export interface ExportJobDeps {
  feedLog: FeedLog;
  store: ObjectStore;
  catalog: SnapshotCatalog;
  writer: ParquetWriter;
  clock: Clock;
  /** Local scratch space for parquet files before upload (and the writer's spools). */
  workDir: string;
  /** Told of each hour whose damaged log lines a job left out or repaired (see log-lines.ts). */
  onDamagedLines?: (report: DamageReport) => void;
}

/** Damaged lines met in one hour partition while writing a file. */
export interface DamageReport extends LineDamage {
  feed: FeedId;
  hourStartMs: number;
}

/** Writes a parquet file to `outFile` with these footer key-values. */
export type WriteParquet = (outFile: string, kv: Record<string, string>) => Promise<ParquetFileInfo>;

/**
 * Writes a local parquet file, uploads it under `key` and records the snapshot. The order is what
 * makes a crash harmless: the row-to-be is recorded as an intent, the object replaces its
 * predecessor atomically, then one catalog step swaps the rows of the key. Until that step the old
 * row stays listed; a crash before it leaves an intent that recovery (publish-recovery.ts) settles by
 * what the key holds: the new bytes get their row, the old bytes keep theirs. A snapshot is never
 * unlisted while its bytes are stored.
 */
export async function publishSnapshot(
  deps: ExportJobDeps,
  target: Pick<Snapshot, 'feed' | 'kind' | 'date' | 'hour' | 'key'>,
  write: WriteParquet,
  sourceVersion?: string,
): Promise<Snapshot> {
  await mkdir(deps.workDir, { recursive: true });
  const tmp = join(deps.workDir, `${target.feed}-${randomBytes(6).toString('hex')}.parquet`);
  try {
    const info = await write(tmp, { kind: target.kind, date: target.date, ...(target.hour === null ? {} : { hour: String(target.hour) }) });
    const snap: Snapshot = {
      ...target,
      size: info.size,
      rows: info.rows,
      checksum: info.sha256,
      schema: info.schema,
      createdAt: Math.floor(deps.clock.now() / 1000),
      ...(sourceVersion === undefined ? {} : { sourceVersion }),
    };
    const startedAtMs = deps.clock.now();
    await deps.catalog.beginPublish(snap, startedAtMs);
    try {
      await deps.store.putFile(target.key, tmp, { sha256: info.sha256, rows: info.rows, contentType: 'application/vnd.apache.parquet' });
    } catch (e) {
      // A put can fail after its bytes landed (a sync after the rename): settle by what the key holds.
      await settlePublish(deps, { snapshot: snap, startedAtMs }, true).catch(() => {});
      throw e;
    }
    await deps.catalog.completePublish(snap);
    return snap;
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * How to write one hour of the log. The fast path hands DuckDB the partition file itself
 * (FeedLog.hourFile) when it ends on a whole line; otherwise, or when the log has no local files, the
 * lines stream through readHourBlocks, which skips a torn tail. Either way, should DuckDB refuse the
 * lines (a damaged line: see streamHours), they are read again one by one. `version` is the
 * partition's version read before anything else, so the snapshot holds at least what it names.
 */
export async function hourSource(
  deps: Pick<ExportJobDeps, 'feedLog' | 'writer' | 'onDamagedLines'>,
  feed: FeedId,
  hourStartMs: number,
): Promise<{ version?: string; write: WriteParquet }> {
  const file = await deps.feedLog.hourFile?.(feed, hourStartMs);
  if (!file) return { write: streamHours(deps, feed, [hourStartMs]) };
  if (!file.whole) return { version: file.version, write: streamHours(deps, feed, [hourStartMs]) };
  const valid: WriteParquet = (out, kv) => deps.writer.write(FEEDS[feed], validHours(deps, feed, [hourStartMs]), out, kv);
  return {
    version: file.version,
    // A record being appended while DuckDB reads may show up half-written, or a line is damaged:
    // then the lines are read one by one.
    write: (out, kv) =>
      recordsOnly(deps.writer, (o, k) => deps.writer.writeNdjsonFiles(FEEDS[feed], [file.path], o, k))(out, kv).catch(() => valid(out, kv)),
  };
}

/**
 * `write`, refused when the file has a row without a timestamp: read_json makes a line that is JSON
 * but no record (`{}`, `null`: only damage leaves them in the log) a row of NULLs instead of failing,
 * and every record has a timestamp. Read from the footer's statistics, so it costs no row.
 */
export const recordsOnly =
  (writer: ParquetWriter, write: WriteParquet): WriteParquet =>
  async (out, kv) => {
    const info = await write(out, kv);
    const nulls = await writer.nullCount(out, 'timestamp');
    if (nulls > 0) throw new Error(`${nulls} rows without a timestamp: lines that are JSON but no record`);
    return info;
  };

/**
 * Writes hours of the log by streaming their lines: first as they are (no line is parsed in JS),
 * then, if DuckDB refuses them (a torn line glued to the next, garbage: "Malformed JSON" on every
 * retry), with every line checked, damaged ones repaired or left out and reported (validHours).
 */
export const streamHours =
  (deps: Pick<ExportJobDeps, 'feedLog' | 'writer' | 'onDamagedLines'>, feed: FeedId, hourStarts: readonly number[]): WriteParquet =>
  (out, kv) =>
    recordsOnly(deps.writer, (o, k) => deps.writer.write(FEEDS[feed], concatHours(deps.feedLog, feed, hourStarts), o, k))(out, kv).catch(
      () => deps.writer.write(FEEDS[feed], validHours(deps, feed, hourStarts), out, kv),
    );

export async function* concatHours(log: FeedLog, feed: FeedId, hourStarts: readonly number[]): AsyncIterable<string> {
  for (const h of hourStarts) yield* log.readHourBlocks(feed, h);
}

/** The hours' lines with every damaged line repaired or left out; each damaged hour is reported once read. */
export async function* validHours(
  deps: Pick<ExportJobDeps, 'feedLog' | 'onDamagedLines'>,
  feed: FeedId,
  hourStarts: readonly number[],
): AsyncIterable<string> {
  for (const h of hourStarts) {
    const damage = noDamage();
    yield* validBlocks(deps.feedLog.readHourBlocks(feed, h), damage);
    if (damaged(damage)) deps.onDamagedLines?.({ feed, hourStartMs: h, ...damage });
  }
}

/** Puts an object's bytes in a new local file: the store's own copy when it has one, else streamed. */
export async function fetchToFile(store: ObjectStore, key: string, dest: string): Promise<boolean> {
  if (store.copyToFile) return store.copyToFile(key, dest);
  const body = await store.get(key);
  if (!body) return false;
  await pipeline(body, createWriteStream(dest, { flags: 'wx' }));
  return true;
}

/**
 * Deletes the entries of a directory last modified before `cutoffMs` (a directory goes whole: jobs
 * keep their inputs in one, whose mtime is when they were put there); returns how many went.
 */
export async function sweepOld(dir: string, cutoffMs: number): Promise<number> {
  let n = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = join(dir, name);
    const st = await stat(file).catch(() => undefined);
    if (st && (st.isFile() || st.isFIFO() || st.isDirectory()) && st.mtimeMs < cutoffMs) {
      await rm(file, { force: true, recursive: true });
      n++;
    }
  }
  return n;
}

/** Removes parquet files and spools left in the work dir by jobs that died (older than an hour: no live job is). */
export const sweepWorkDir = (deps: Pick<ExportJobDeps, 'workDir' | 'clock'>, olderThanMs = 3_600_000): Promise<number> =>
  sweepOld(deps.workDir, deps.clock.now() - olderThanMs);
