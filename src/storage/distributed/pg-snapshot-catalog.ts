import type { FeedId } from '../../modules/feeds/feed-catalog.ts';
import type {
  PublishIntent,
  RollupState,
  Snapshot,
  SnapshotCatalog,
  SnapshotCursor,
  SnapshotKind,
} from '../../modules/exports/snapshot-catalog.ts';
import { periodStartMs } from '../../modules/exports/snapshot-catalog.ts';
import type { PgPool, PgQueryable } from './pg-pool.ts';

interface Row {
  feed: string;
  kind: string;
  date: string;
  hour: number;
  key: string;
  size: number;
  rows: number;
  checksum: string;
  schema: Snapshot['schema'];
  created_at: number;
  source_version: string | null;
}

const COLS = 'feed, kind, date, hour, key, size, rows, checksum, schema, created_at, source_version';
// Newest first; at the same period start an hourly row (kind 'hourly' > 'daily') comes first.
const ORDER = 'ORDER BY period_start_ms DESC, kind DESC';

const toSnapshot = (r: Row): Snapshot => ({
  feed: r.feed as FeedId,
  kind: r.kind as SnapshotKind,
  date: r.date,
  hour: r.hour < 0 ? null : r.hour,
  key: r.key,
  size: r.size,
  rows: r.rows,
  checksum: r.checksum,
  schema: r.schema,
  createdAt: r.created_at,
  ...(r.source_version === null ? {} : { sourceVersion: r.source_version }),
});

/**
 * A snapshot as statement values: $1 feed, $2 kind, $3 date, $4 hour (-1 for a daily row, so the
 * primary key covers it), $5 key, $6 size, $7 rows, $8 checksum, $9 schema, $10 created_at,
 * $11 source_version, $12 period_start_ms.
 */
const valuesOf = (s: Snapshot): unknown[] => {
  if ((s.kind === 'hourly') !== (s.hour !== null)) throw new Error('an hourly snapshot has an hour, a daily one none');
  return [
    s.feed,
    s.kind,
    s.date,
    s.hour ?? -1,
    s.key,
    s.size,
    s.rows,
    s.checksum,
    JSON.stringify(s.schema),
    s.createdAt,
    s.sourceVersion ?? null,
    periodStartMs(s),
  ];
};

// A key belongs to one snapshot: the rows of other (feed, kind, date, hour) holding it go.
const DROP_KEY = 'DELETE FROM export_snapshots WHERE key = $5 AND NOT (feed = $1 AND kind = $2 AND date = $3 AND hour = $4)';
const UPSERT = `INSERT INTO export_snapshots (${COLS}, period_start_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
  ON CONFLICT (feed, kind, date, hour) DO UPDATE SET period_start_ms = excluded.period_start_ms, key = excluded.key, size = excluded.size,
    rows = excluded.rows, checksum = excluded.checksum, schema = excluded.schema, created_at = excluded.created_at,
    source_version = excluded.source_version`;

/** Records `values` (valuesOf) in one transaction's statements: the key's other rows go, the row is inserted or replaced. */
async function record(q: PgQueryable, values: unknown[]): Promise<void> {
  await q.query(DROP_KEY, values.slice(0, 5));
  const r = await q.query(UPSERT, values);
  if (r.rowCount !== 1) throw new Error('the snapshot row was not written');
}

/** The export snapshot index in PostgreSQL (tables export_snapshots, export_rollups, export_publish_intents). */
export class PgSnapshotCatalog implements SnapshotCatalog {
  constructor(private readonly db: PgPool) {}

  async upsert(s: Snapshot): Promise<void> {
    const values = valuesOf(s);
    await this.db.tx((q) => record(q, values));
  }

  async beginPublish(s: Snapshot, startedAtMs: number): Promise<void> {
    const values = valuesOf(s);
    const r = await this.db.query(
      `INSERT INTO export_publish_intents (${COLS}, started_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (key) DO UPDATE SET feed = excluded.feed, kind = excluded.kind, date = excluded.date, hour = excluded.hour,
         size = excluded.size, rows = excluded.rows, checksum = excluded.checksum, schema = excluded.schema,
         created_at = excluded.created_at, source_version = excluded.source_version, started_at_ms = excluded.started_at_ms`,
      [...values.slice(0, 11), startedAtMs],
    );
    if (r.rowCount !== 1) throw new Error('the publish intent was not recorded');
  }

  async completePublish(s: Snapshot, opts: { onlyIfPending?: boolean } = {}): Promise<boolean> {
    const values = valuesOf(s);
    // One transaction: a reader sees the old row or the new one, never neither.
    return this.db.tx(async (q) => {
      if (opts.onlyIfPending) {
        // Locked until commit: an abandon (or another recovery) of the same intent waits, then finds it gone.
        const pending = await q.query('SELECT 1 FROM export_publish_intents WHERE key = $1 AND checksum = $2 FOR UPDATE', [
          s.key,
          s.checksum,
        ]);
        if (pending.rowCount !== 1) return false;
      }
      await record(q, values);
      await q.query('DELETE FROM export_publish_intents WHERE key = $1 AND checksum = $2', [s.key, s.checksum]);
      return true;
    });
  }

  async abandonPublish(key: string, checksum: string): Promise<boolean> {
    const r = await this.db.query('DELETE FROM export_publish_intents WHERE key = $1 AND checksum = $2', [key, checksum]);
    return (r.rowCount ?? 0) > 0;
  }

  async publishIntents(): Promise<PublishIntent[]> {
    const { rows } = await this.db.query<Row & { started_at_ms: number }>(
      `SELECT ${COLS}, started_at_ms FROM export_publish_intents ORDER BY started_at_ms, key`,
    );
    return rows.map((r) => ({ snapshot: toSnapshot(r), startedAtMs: r.started_at_ms }));
  }

  async get(feed: FeedId, date: string, hour?: number | null): Promise<Snapshot | undefined> {
    const daily = hour === undefined || hour === null;
    const { rows } = await this.db.query<Row>(
      `SELECT ${COLS} FROM export_snapshots WHERE feed = $1 AND kind = $2 AND date = $3 AND hour = $4`,
      [feed, daily ? 'daily' : 'hourly', date, daily ? -1 : hour],
    );
    return rows[0] && toSnapshot(rows[0]);
  }

  async list(feed: FeedId, opts: { limit: number; before?: SnapshotCursor }): Promise<{ items: Snapshot[]; next?: SnapshotCursor }> {
    const limit = Math.max(1, Math.floor(opts.limit));
    const before = opts.before;
    // One extra row tells whether another page exists.
    const { rows } = before
      ? await this.db.query<Row>(
          `SELECT ${COLS} FROM export_snapshots WHERE feed = $1 AND (period_start_ms < $2 OR (period_start_ms = $2 AND kind < $3))
           ${ORDER} LIMIT $4`,
          [feed, before.periodStartMs, before.kind, limit + 1],
        )
      : await this.db.query<Row>(`SELECT ${COLS} FROM export_snapshots WHERE feed = $1 ${ORDER} LIMIT $2`, [feed, limit + 1]);
    const items = rows.slice(0, limit).map(toSnapshot);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: { periodStartMs: periodStartMs(last), kind: last.kind } } : { items };
  }

  async count(feed?: FeedId, kind?: SnapshotKind): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      'SELECT count(*) AS n FROM export_snapshots WHERE ($1::text IS NULL OR feed = $1) AND ($2::text IS NULL OR kind = $2)',
      [feed ?? null, kind ?? null],
    );
    return rows[0]!.n;
  }

  async latestHourly(feed: FeedId): Promise<Snapshot | undefined> {
    const { rows } = await this.db.query<Row>(`SELECT ${COLS} FROM export_snapshots WHERE feed = $1 AND kind = 'hourly' ${ORDER} LIMIT 1`, [
      feed,
    ]);
    return rows[0] && toSnapshot(rows[0]);
  }

  async hourlyOf(feed: FeedId, date: string): Promise<Snapshot[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT ${COLS} FROM export_snapshots WHERE feed = $1 AND kind = 'hourly' AND date = $2 ORDER BY hour`,
      [feed, date],
    );
    return rows.map(toSnapshot);
  }

  async forgetKey(key: string): Promise<number> {
    return (await this.db.query('DELETE FROM export_snapshots WHERE key = $1', [key])).rowCount ?? 0;
  }

  async deleteHourly(feed: FeedId, date: string): Promise<number> {
    return (
      (await this.db.query("DELETE FROM export_snapshots WHERE feed = $1 AND kind = 'hourly' AND date = $2", [feed, date])).rowCount ?? 0
    );
  }

  async setRollupState(feed: FeedId, date: string, state: RollupState, atSec: number): Promise<void> {
    const r = await this.db.query(
      `INSERT INTO export_rollups (feed, date, state, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (feed, date) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      [feed, date, state, atSec],
    );
    if (r.rowCount !== 1) throw new Error('the rollup state was not recorded');
  }

  async rollupState(feed: FeedId, date: string): Promise<{ state: RollupState; updatedAt: number } | undefined> {
    const { rows } = await this.db.query<{ state: string; updated_at: number }>(
      'SELECT state, updated_at FROM export_rollups WHERE feed = $1 AND date = $2',
      [feed, date],
    );
    return rows[0] && { state: rows[0].state as RollupState, updatedAt: rows[0].updated_at };
  }
}
