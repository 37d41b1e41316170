import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FEEDS, type FeedId } from '../feeds/feed-catalog.ts';
import type { HourFile } from '../feeds/feed-log.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { fetchToFile, hourSource, recordsOnly, streamHours, validHours, type ExportJobDeps } from './export-job.ts';
import { digest, schemaOf, type ParquetFileInfo } from './parquet-writer.ts';
import type { Snapshot } from './snapshot-catalog.ts';
import { dayStartMs } from '../../lib/time.ts';

/** How the rollup got each hour: a verified hourly file, a fresh write from the log, or one pass over the log. */
export interface DaySources {
  reused: number[];
  rewritten: number[];
  /** Hours read in one pass from the log (nothing was reusable, or the log cannot tell). */
  fromLog: number[];
  /**
   * How the hour files became the day (absent on the one-pass path): `merge`, their row groups
   * copied under one new footer, or `copy`, DuckDB reading and writing every row (their schemas
   * differ from what the writer gives the feed today).
   */
  concat?: 'merge' | 'copy';
}

/**
 * Writes a UTC date of a feed to `outFile`, reusing hourly snapshots where that is safe.
 *
 * An hourly file is reused only when the log partition still has the version the snapshot was made
 * from (no late record since), its schema is the feed's current one, and the bytes fetched from the
 * store hash to the checksum the catalog recorded (a key is reused daily, so the object may be a
 * newer day's). Any other hour with records is written again from the log into the work dir. Then
 * the hour files are merged in hour order at the row-group level (ParquetWriter.concatParquet: their
 * column chunks copied under one new footer; a DuckDB COPY when their schemas do not allow it). When nothing is reusable, or the log
 * has no versions (FeedLog.hourFile), the day is written straight from the log in one pass.
 * Rows are the log's valid records either way, in log order: hour by hour, append order within.
 */
export async function writeDay(
  deps: ExportJobDeps,
  feed: FeedId,
  date: string,
  outFile: string,
  kv: Record<string, string>,
): Promise<ParquetFileInfo & { sources: DaySources }> {
  const def = FEEDS[feed];
  const hours = Array.from({ length: 24 }, (_, h) => dayStartMs(date) + h * HOUR_MS);
  const hourFile = deps.feedLog.hourFile?.bind(deps.feedLog);
  if (!hourFile) {
    const info = await streamHours(deps, feed, hours)(outFile, kv);
    return { ...info, sources: { reused: [], rewritten: [], fromLog: hours.map((_, h) => h) } };
  }
  const wanted = JSON.stringify(schemaOf(def));
  const recorded = new Map((await deps.catalog.hourlyOf(feed, date)).map((s) => [s.hour, s]));
  const present: { hour: number; start: number; file: HourFile; snap?: Snapshot }[] = [];
  for (const [hour, start] of hours.entries()) {
    // No partition, or only a torn line: the hour has no records, whatever a snapshot says.
    const file = await hourFile(feed, start);
    if (!file) continue;
    const snap = recorded.get(hour);
    const current = snap && snap.sourceVersion === file.version && JSON.stringify(snap.schema) === wanted;
    present.push({ hour, start, file, ...(current ? { snap } : {}) });
  }

  const onePass = async (): Promise<ParquetFileInfo & { sources: DaySources }> => {
    const sources = { reused: [], rewritten: [], fromLog: present.map((p) => p.hour) };
    const starts = present.map((p) => p.start);
    // The log's own files when all end on whole lines; a half-written concurrent append or a damaged
    // line reads the lines one by one (each damaged hour reported), as streaming does when refused.
    const info = present.every((p) => p.file.whole)
      ? await recordsOnly(deps.writer, (o, k) =>
          deps.writer.writeNdjsonFiles(
            def,
            present.map((p) => p.file.path),
            o,
            k,
          ),
        )(outFile, kv).catch(() => deps.writer.write(def, validHours(deps, feed, starts), outFile, kv))
      : await streamHours(deps, feed, starts)(outFile, kv);
    return { ...info, sources };
  };
  if (!present.some((p) => p.snap)) return onePass();

  const dir = join(deps.workDir, `rollup-${feed}-${randomBytes(6).toString('hex')}`);
  const fileOf = (hour: number) => join(dir, `${String(hour).padStart(2, '0')}.parquet`);
  await mkdir(dir, { recursive: true });
  try {
    /** Rows of the hours written again from the log (once, even when a second merge follows). */
    const rewritten = new Map<number, number>();
    /** The hours merged in order: `trusted` ones from their hourly file, the rest written again. */
    const merge = async (trusted: readonly boolean[]) => {
      const sources: DaySources = { reused: [], rewritten: [], fromLog: [] };
      let expect = 0;
      for (const [i, p] of present.entries()) {
        if (trusted[i]) {
          expect += p.snap!.rows;
          sources.reused.push(p.hour);
          continue;
        }
        let rows = rewritten.get(p.hour);
        if (rows === undefined) {
          await rm(fileOf(p.hour), { force: true });
          rows = (await (await hourSource(deps, feed, p.start)).write(fileOf(p.hour), {})).rows;
          rewritten.set(p.hour, rows);
        }
        expect += rows;
        sources.rewritten.push(p.hour);
      }
      const { via, ...info } = await deps.writer.concatParquet(
        def,
        present.map((p) => fileOf(p.hour)),
        outFile,
        kv,
        expect,
      );
      return { ...info, sources: { ...sources, concat: via } };
    };
    // A fetch that fails (a remote store's hiccup) only costs that hour a rewrite from the log.
    const fetch = (key: string, file: string) =>
      fetchToFile(deps.store, key, file).catch(async () => {
        await rm(file, { force: true });
        return false;
      });
    const fetched = await Promise.all(present.map((p) => (p.snap ? fetch(p.snap.key, fileOf(p.hour)) : false)));
    // The fetched files are hashed while they are already being merged: a mismatch is rare, and then
    // those hours are written again and the merge redone. The merge reads the very files hashed.
    const verifying = Promise.all(
      present.map(async (p, i) => fetched[i] === true && (await digest(fileOf(p.hour))).sha256 === p.snap!.checksum),
    );
    const [first, verified] = await Promise.all([
      merge(fetched).then(
        (r) => ({ r }),
        (e: unknown) => ({ e }),
      ),
      verifying,
    ]);
    if (verified.every((v, i) => v === fetched[i])) {
      if ('e' in first) throw first.e;
      return first.r;
    }
    return await merge(verified);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
