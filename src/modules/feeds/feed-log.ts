import type { FeedId } from './feed-catalog.ts';

export interface FeedLogEntry {
  /** The record's own time (ms): it picks the hour partition. */
  timeMs: number;
  /** Canonical JSON of the record, without a newline. */
  line: string;
  /**
   * The record's idempotent id (keyed ingestion), for a log that can drop an entry it already holds
   * under the same id; a log without that ignores it.
   */
  id?: string;
}

/**
 * An hour partition as a local file, for bulk readers on the same machine (the parquet writer hands
 * it to DuckDB instead of streaming the lines through JS).
 */
export interface HourFile {
  /** Absolute path of the partition: NDJSON, one record per line, each line ending in '\n'. */
  path: string;
  /**
   * False when the file ends in a torn line (a crash mid-append, never acknowledged): only
   * readHour/readHourBlocks know to skip it, so a bulk reader must use them instead.
   */
  whole: boolean;
  /**
   * Changes whenever the partition's valid lines change; taken before reading, so whatever a reader
   * then reads holds at least the lines this version names. Opaque; compare for equality only.
   */
  version: string;
}

/**
 * The durable record log that exports read back: append-only, one partition per feed and UTC hour of
 * the records' own timestamps. append() resolves only once the records would survive a crash, so an
 * acknowledged record is never lost.
 */
export interface FeedLog {
  append(feed: FeedId, entries: readonly FeedLogEntry[]): Promise<void>;
  /**
   * The lines of one hour partition in append order; a torn last line left by a crash is skipped.
   * Other lines are returned as stored, and may be damaged (a torn write an older version glued the
   * next record to, disk corruption): readers that need records go through log-lines.ts.
   */
  readHour(feed: FeedId, hourStartMs: number): AsyncIterable<string>;
  /**
   * The same lines in blocks: each item is one or more whole lines joined by '\n' (no empty line, no
   * trailing newline), so bulk readers (the parquet writer) pay one await per block, not per line.
   */
  readHourBlocks(feed: FeedId, hourStartMs: number): AsyncIterable<string>;
  /**
   * Optional fast path: the partition as a local file, or undefined when the hour has no records.
   * Backends without local files (a networked log) leave it out; readers then use readHourBlocks.
   */
  hourFile?(feed: FeedId, hourStartMs: number): Promise<HourFile | undefined>;
  /** Start (ms) of every hour partition that exists for the feed, ascending. */
  hours(feed: FeedId): Promise<number[]>;
  /** Deletes partitions whose hour starts before the given time; returns how many went. */
  dropBefore(feed: FeedId, hourStartMs: number): Promise<number>;
  close(): Promise<void>;
}
