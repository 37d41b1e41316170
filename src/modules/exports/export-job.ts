import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.ts';
import { FEEDS, type FeedId } from '../feeds/feed-catalog.ts';
import type { FeedLog } from '../feeds/feed-log.ts';
import type { ObjectStore } from './object-store.ts';
import type { ParquetWriter } from './parquet-writer.ts';
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
}

/**
 * Writes `lines` to a local parquet file, uploads it under `key` and records the snapshot. The order
 * is what makes a crash harmless: the object replaces its predecessor atomically, and the row that
 * pointed at the old bytes is dropped first, so the catalog never describes bytes it did not see.
 */
export async function publishSnapshot(
  deps: ExportJobDeps,
  target: Pick<Snapshot, 'feed' | 'kind' | 'date' | 'hour' | 'key'>,
  lines: AsyncIterable<string>,
): Promise<Snapshot> {
  const feed = FEEDS[target.feed];
  await mkdir(deps.workDir, { recursive: true });
  const tmp = join(deps.workDir, `${target.feed}-${randomBytes(6).toString('hex')}.parquet`);
  try {
    const info = await deps.writer.write(feed, lines, tmp, { kind: target.kind, date: target.date, ...(target.hour === null ? {} : { hour: String(target.hour) }) });
    await deps.catalog.forgetKey(target.key);
    await deps.store.put(target.key, tmp, { sha256: info.sha256, rows: info.rows, contentType: 'application/vnd.apache.parquet' });
    const snap: Snapshot = { ...target, size: info.size, rows: info.rows, checksum: info.sha256, schema: info.schema, createdAt: Math.floor(deps.clock.now() / 1000) };
    await deps.catalog.upsert(snap);
    return snap;
  } finally {
    await rm(tmp, { force: true });
  }
}

export async function* concatHours(log: FeedLog, feed: FeedId, hourStarts: readonly number[]): AsyncIterable<string> {
  for (const h of hourStarts) yield* log.readHourBlocks(feed, h);
}

/** Deletes the files of a flat directory last modified before `cutoffMs`; returns how many went. */
export async function sweepOld(dir: string, cutoffMs: number): Promise<number> {
  let n = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = join(dir, name);
    const st = await stat(file).catch(() => undefined);
    if (st && (st.isFile() || st.isFIFO()) && st.mtimeMs < cutoffMs) {
      await rm(file, { force: true });
      n++;
    }
  }
  return n;
}

/** Removes parquet files and spools left in the work dir by jobs that died (older than an hour: no live job is). */
export const sweepWorkDir = (deps: Pick<ExportJobDeps, 'workDir' | 'clock'>, olderThanMs = 3_600_000): Promise<number> =>
  sweepOld(deps.workDir, deps.clock.now() - olderThanMs);
