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
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

interface Row {
  feed: string;
  kind: string;
  date: string;
  hour: number;
  period_start_ms: number;
  key: string;
  size: number;
  rows: number;
  checksum: string;
  schema: string;
  created_at: number;
  source_version: string | null;
}

const COLS = 'feed, kind, date, hour, period_start_ms, key, size, rows, checksum, schema, created_at, source_version';
const INTENT_COLS = 'key, feed, kind, date, hour, size, rows, checksum, schema, created_at, source_version, started_at_ms';
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
  schema: JSON.parse(r.schema) as Snapshot['schema'],
  createdAt: r.created_at,
  ...(r.source_version === null ? {} : { sourceVersion: r.source_version }),
});

type Params = Record<string, string | number | null>;

const paramsOf = (s: Snapshot): Params => {
  if ((s.kind === 'hourly') !== (s.hour !== null)) throw new Error('an hourly snapshot has an hour, a daily one none');
  return {
    feed: s.feed,
    kind: s.kind,
    date: s.date,
    hour: s.hour ?? -1,
    period_start_ms: periodStartMs(s),
    key: s.key,
    size: s.size,
    rows: s.rows,
    checksum: s.checksum,
    schema: JSON.stringify(s.schema),
    created_at: s.createdAt,
    source_version: s.sourceVersion ?? null,
  };
};

export class SqliteSnapshotCatalog implements SnapshotCatalog {
  private readonly q;
  private readonly upsertTx;
  private readonly completeTx;
  /** Every statement goes through the gate: a lock held elsewhere is waited for on timers, never on the loop. */
  private readonly gate: SqliteGate;

  constructor(db: SqliteDb) {
    this.gate = sqliteGate(db);
    this.q = {
      dropKey: db.prepare(
        'DELETE FROM export_snapshots WHERE key = @key AND NOT (feed = @feed AND kind = @kind AND date = @date AND hour = @hour)',
      ),
      upsert: db.prepare(
        `INSERT INTO export_snapshots (${COLS}) VALUES (@feed, @kind, @date, @hour, @period_start_ms, @key, @size, @rows, @checksum, @schema, @created_at, @source_version)
         ON CONFLICT (feed, kind, date, hour) DO UPDATE SET period_start_ms = excluded.period_start_ms, key = excluded.key, size = excluded.size,
           rows = excluded.rows, checksum = excluded.checksum, schema = excluded.schema, created_at = excluded.created_at, source_version = excluded.source_version`,
      ),
      get: db.prepare<[string, string, string, number], Row>(
        `SELECT ${COLS} FROM export_snapshots WHERE feed = ? AND kind = ? AND date = ? AND hour = ?`,
      ),
      first: db.prepare<[string, number], Row>(`SELECT ${COLS} FROM export_snapshots WHERE feed = ? ${ORDER} LIMIT ?`),
      after: db.prepare<Record<string, string | number>, Row>(
        `SELECT ${COLS} FROM export_snapshots WHERE feed = @feed
           AND (period_start_ms < @p OR (period_start_ms = @p AND kind < @kind)) ${ORDER} LIMIT @limit`,
      ),
      count: db.prepare<Record<string, string | null>, { n: number }>(
        'SELECT count(*) AS n FROM export_snapshots WHERE (@feed IS NULL OR feed = @feed) AND (@kind IS NULL OR kind = @kind)',
      ),
      latest: db.prepare<[string], Row>(`SELECT ${COLS} FROM export_snapshots WHERE feed = ? AND kind = 'hourly' ${ORDER} LIMIT 1`),
      hourlyOf: db.prepare<[string, string], Row>(
        `SELECT ${COLS} FROM export_snapshots WHERE feed = ? AND kind = 'hourly' AND date = ? ORDER BY hour`,
      ),
      forgetKey: db.prepare('DELETE FROM export_snapshots WHERE key = ?'),
      deleteHourly: db.prepare("DELETE FROM export_snapshots WHERE feed = ? AND kind = 'hourly' AND date = ?"),
      setRollup: db.prepare(
        'INSERT INTO export_rollups (feed, date, state, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (feed, date) DO UPDATE SET state = ' +
          'excluded.state, updated_at = excluded.updated_at',
      ),
      rollup: db.prepare<[string, string], { state: string; updated_at: number }>(
        'SELECT state, updated_at FROM export_rollups WHERE feed = ? AND date = ?',
      ),
      begin: db.prepare(
        `INSERT OR REPLACE INTO export_publish_intents (${INTENT_COLS})
         VALUES (@key, @feed, @kind, @date, @hour, @size, @rows, @checksum, @schema, @created_at, @source_version, @started_at_ms)`,
      ),
      pending: db.prepare<Params, { one: number }>('SELECT 1 AS one FROM export_publish_intents WHERE key = @key AND checksum = @checksum'),
      dropIntent: db.prepare('DELETE FROM export_publish_intents WHERE key = ? AND checksum = ?'),
      intents: db.prepare<[], Row & { started_at_ms: number }>(
        `SELECT ${INTENT_COLS} FROM export_publish_intents ORDER BY started_at_ms, key`,
      ),
    };
    this.upsertTx = db.transaction((p: Params) => {
      this.q.dropKey.run(p);
      this.q.upsert.run(p);
    });
    // One transaction: a reader sees the old row or the new one, never neither.
    this.completeTx = db.transaction((p: Params, onlyIfPending: boolean): boolean => {
      if (onlyIfPending && !this.q.pending.get(p)) return false;
      this.q.dropKey.run(p);
      this.q.upsert.run(p);
      this.q.dropIntent.run(p.key, p.checksum);
      return true;
    });
  }

  async upsert(s: Snapshot): Promise<void> {
    await this.gate.run(() => this.upsertTx.immediate(paramsOf(s)));
  }

  async beginPublish(s: Snapshot, startedAtMs: number): Promise<void> {
    await this.gate.run(() => this.q.begin.run({ ...paramsOf(s), started_at_ms: startedAtMs }));
  }

  async completePublish(s: Snapshot, opts: { onlyIfPending?: boolean } = {}): Promise<boolean> {
    return this.gate.run(() => this.completeTx.immediate(paramsOf(s), opts.onlyIfPending === true));
  }

  async abandonPublish(key: string, checksum: string): Promise<boolean> {
    return (await this.gate.run(() => this.q.dropIntent.run(key, checksum))).changes > 0;
  }

  async publishIntents(): Promise<PublishIntent[]> {
    return (await this.gate.run(() => this.q.intents.all())).map((r) => ({ snapshot: toSnapshot(r), startedAtMs: r.started_at_ms }));
  }

  async get(feed: FeedId, date: string, hour?: number | null): Promise<Snapshot | undefined> {
    const r = await this.gate.run(() =>
      hour === undefined || hour === null ? this.q.get.get(feed, 'daily', date, -1) : this.q.get.get(feed, 'hourly', date, hour),
    );
    return r && toSnapshot(r);
  }

  async list(feed: FeedId, opts: { limit: number; before?: SnapshotCursor }): Promise<{ items: Snapshot[]; next?: SnapshotCursor }> {
    const limit = Math.max(1, Math.floor(opts.limit));
    // One extra row tells whether another page exists.
    const before = opts.before;
    const rows = await this.gate.run(() =>
      before ? this.q.after.all({ feed, p: before.periodStartMs, kind: before.kind, limit: limit + 1 }) : this.q.first.all(feed, limit + 1),
    );
    const items = rows.slice(0, limit).map(toSnapshot);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: { periodStartMs: periodStartMs(last), kind: last.kind } } : { items };
  }

  async count(feed?: FeedId, kind?: SnapshotKind): Promise<number> {
    return (await this.gate.run(() => this.q.count.get({ feed: feed ?? null, kind: kind ?? null })))!.n;
  }

  async latestHourly(feed: FeedId): Promise<Snapshot | undefined> {
    const r = await this.gate.run(() => this.q.latest.get(feed));
    return r && toSnapshot(r);
  }

  async hourlyOf(feed: FeedId, date: string): Promise<Snapshot[]> {
    return (await this.gate.run(() => this.q.hourlyOf.all(feed, date))).map(toSnapshot);
  }

  async forgetKey(key: string): Promise<number> {
    return (await this.gate.run(() => this.q.forgetKey.run(key))).changes;
  }

  async deleteHourly(feed: FeedId, date: string): Promise<number> {
    return (await this.gate.run(() => this.q.deleteHourly.run(feed, date))).changes;
  }

  async setRollupState(feed: FeedId, date: string, state: RollupState, atSec: number): Promise<void> {
    await this.gate.run(() => this.q.setRollup.run(feed, date, state, atSec));
  }

  async rollupState(feed: FeedId, date: string): Promise<{ state: RollupState; updatedAt: number } | undefined> {
    const r = await this.gate.run(() => this.q.rollup.get(feed, date));
    return r && { state: r.state as RollupState, updatedAt: r.updated_at };
  }
}
