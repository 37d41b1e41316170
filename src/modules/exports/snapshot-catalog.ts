import type { FeedId } from '../feeds/feed-catalog.ts';
import type { ParquetSchema } from './parquet-writer.ts';

export type SnapshotKind = 'hourly' | 'daily';

export interface Snapshot {
  feed: FeedId;
  kind: SnapshotKind;
  /** UTC date `YYYY-MM-DD`. */
  date: string;
  /** UTC hour 0..23 for hourly snapshots, null for daily ones. */
  hour: number | null;
  /** Object-store key of the file. */
  key: string;
  size: number;
  rows: number;
  /** Lower-case hex SHA-256 of the stored bytes. */
  checksum: string;
  schema: ParquetSchema;
  /** Unix seconds. */
  createdAt: number;
  /**
   * For an hourly snapshot made from a log partition that has versions (FeedLog.hourFile): the
   * version read. The rollup reuses the hourly file only while the partition still has it.
   */
  sourceVersion?: string;
}

/** Position in a newest-first listing; opaque to clients once the HTTP layer encodes and signs it. */
export interface SnapshotCursor {
  /** Start of the snapshot's period, Unix ms (a daily snapshot sorts at 00:00 of its date). */
  periodStartMs: number;
  kind: SnapshotKind;
}

export type RollupState = 'assembling' | 'done';

/** A publish that has recorded its row-to-be and not yet completed (in progress, or cut short by a crash). */
export interface PublishIntent {
  /** The row to record once the object at `snapshot.key` holds bytes with `snapshot.checksum`. */
  snapshot: Snapshot;
  /** Unix ms when the publish began. */
  startedAtMs: number;
}

/**
 * The index of export snapshots, read by the HTTP list/meta/download operations and written by the
 * jobs. A key belongs to at most one snapshot: hourly keys repeat every day (`{feed}/latest/{HH}_…`),
 * so recording a new hour drops the row of the same hour of an earlier day, whose file it replaced.
 *
 * Publishing is three steps so that a crash never unlists a snapshot whose bytes are still stored:
 * beginPublish records the row-to-be as an intent, the object is uploaded (replacing the old bytes
 * atomically), then completePublish swaps the rows of the key and drops the intent in one step. Until
 * then the old row stays listed. An intent left by a crash is settled by recovery (publish-recovery.ts).
 */
export interface SnapshotCatalog {
  /** Inserts or replaces the snapshot of (feed, kind, date, hour). */
  upsert(s: Snapshot): Promise<void>;
  /** The daily snapshot when `hour` is omitted or null, else that hour's. */
  get(feed: FeedId, date: string, hour?: number | null): Promise<Snapshot | undefined>;
  /** Newest first, daily and hourly interleaved by period start; `next` only when more rows exist. */
  list(feed: FeedId, opts: { limit: number; before?: SnapshotCursor }): Promise<{ items: Snapshot[]; next?: SnapshotCursor }>;
  /** How many snapshots are listed: of one feed, or of all; of one kind, or of both. Intents are not counted. */
  count(feed?: FeedId, kind?: SnapshotKind): Promise<number>;
  /** The `latest` alias: the most recent hourly snapshot. */
  latestHourly(feed: FeedId): Promise<Snapshot | undefined>;
  /** The hourly snapshots of a date, by hour. */
  hourlyOf(feed: FeedId, date: string): Promise<Snapshot[]>;
  /** Removes the row (if any) whose file is at `key`; returns how many went. */
  forgetKey(key: string): Promise<number>;
  /** Records the intent to publish `s` (replacing any intent of the same key); no row changes. */
  beginPublish(s: Snapshot, startedAtMs: number): Promise<void>;
  /**
   * Once `s.key` holds the bytes of `s`, as one atomic step: the other rows of the key go, `s` is
   * inserted or replaces the row of its (feed, kind, date, hour), and the intent of the key for
   * `s.checksum` is removed. With `onlyIfPending` (recovery settling another process's publish),
   * nothing happens unless that intent is still recorded; returns whether the row was recorded.
   */
  completePublish(s: Snapshot, opts?: { onlyIfPending?: boolean }): Promise<boolean>;
  /** Removes the intent of `key` if it is still the one for `checksum`; rows untouched. Returns whether it went. */
  abandonPublish(key: string, checksum: string): Promise<boolean>;
  /** Intents neither completed nor abandoned, oldest first. */
  publishIntents(): Promise<PublishIntent[]>;
  /** Removes the hourly rows of a date; returns how many went. */
  deleteHourly(feed: FeedId, date: string): Promise<number>;
  setRollupState(feed: FeedId, date: string, state: RollupState, atSec: number): Promise<void>;
  /** undefined when no rollup of that date ever started. */
  rollupState(feed: FeedId, date: string): Promise<{ state: RollupState; updatedAt: number } | undefined>;
}

export const periodStartMs = (s: Pick<Snapshot, 'date' | 'hour'>): number => Date.parse(`${s.date}T00:00:00Z`) + (s.hour ?? 0) * 3_600_000;
