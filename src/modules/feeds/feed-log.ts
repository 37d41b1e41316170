import type { FeedId } from './feed-catalog.ts';

export interface FeedLogEntry {
  /** The record's own time (ms): it picks the hour partition. */
  timeMs: number;
  /** Canonical JSON of the record, without a newline. */
  line: string;
}

export const HOUR_MS = 3_600_000;
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * The durable record log that exports read back: append-only, one partition per feed and UTC hour of
 * the records' own timestamps. append() resolves only once the records would survive a crash, so an
 * acknowledged record is never lost.
 */
export interface FeedLog {
  append(feed: FeedId, entries: readonly FeedLogEntry[]): Promise<void>;
  /** The lines of one hour partition in append order; a torn last line left by a crash is skipped. */
  readHour(feed: FeedId, hourStartMs: number): AsyncIterable<string>;
  /**
   * The same lines in blocks: each item is one or more whole lines joined by '\n' (no empty line, no
   * trailing newline), so bulk readers (the parquet writer) pay one await per block, not per line.
   */
  readHourBlocks(feed: FeedId, hourStartMs: number): AsyncIterable<string>;
  /** Start (ms) of every hour partition that exists for the feed, ascending. */
  hours(feed: FeedId): Promise<number[]>;
  /** Deletes partitions whose hour starts before the given time; returns how many went. */
  dropBefore(feed: FeedId, hourStartMs: number): Promise<number>;
  close(): Promise<void>;
}
