import type { FeedId } from '../../modules/feeds/feed-catalog.ts';
import { type IngestKeyClaim, type IngestKeyState, type IngestKeyStore, IngestKeyLost } from '../../modules/feeds/ingest-keys.ts';
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

interface Row {
  feed: string;
  owner: string | null;
  lease_until: number;
  stored_through: number;
  summary: string | null;
  records_sha256: string | null;
}

/** Ingestion idempotency keys in the embedded database (table `ingest_keys`), shared by the server and `umbra ingest --local`. */
export class SqliteIngestKeyStore implements IngestKeyStore {
  private readonly gate: SqliteGate;
  private readonly q;
  private readonly claimTx;

  constructor(db: SqliteDb) {
    this.gate = sqliteGate(db);
    this.q = {
      get: db.prepare<[string], Row>(
        'SELECT feed, owner, lease_until, stored_through, summary, records_sha256 FROM ingest_keys WHERE key = ?',
      ),
      insert: db.prepare('INSERT INTO ingest_keys (key, feed, owner, lease_until, stored_through, updated_ms) VALUES (?, ?, ?, ?, 0, ?)'),
      take: db.prepare('UPDATE ingest_keys SET owner = ?, lease_until = ?, updated_ms = ? WHERE key = ?'),
      progress: db.prepare(
        'UPDATE ingest_keys SET stored_through = ?, summary = ?, lease_until = ?, updated_ms = ? WHERE key = ? AND owner = ?',
      ),
      finish: db.prepare(
        'UPDATE ingest_keys SET stored_through = ?, summary = ?, records_sha256 = ?, owner = NULL, lease_until = 0, updated_ms = ? ' +
          'WHERE key = ? AND owner = ?',
      ),
      release: db.prepare('UPDATE ingest_keys SET owner = NULL, lease_until = 0 WHERE key = ? AND owner = ?'),
      purge: db.prepare('DELETE FROM ingest_keys WHERE updated_ms < ? AND (owner IS NULL OR lease_until < ?)'),
    };
    // One transaction: the read and the take cannot be split by another process's claim.
    this.claimTx = db.transaction((key: string, feed: FeedId, owner: string, nowMs: number, leaseMs: number): IngestKeyClaim => {
      const row = this.q.get.get(key);
      if (!row) {
        this.q.insert.run(key, feed, owner, nowMs + leaseMs, nowMs);
        return { kind: 'claimed' };
      }
      if (row.feed !== feed) return { kind: 'other_feed', feed: row.feed as FeedId };
      const state = toState(row);
      if (row.records_sha256 !== null) return { kind: 'finished', state: state! };
      if (row.owner !== null && row.lease_until > nowMs) return { kind: 'busy', leaseUntilMs: row.lease_until };
      this.q.take.run(owner, nowMs + leaseMs, nowMs, key);
      return state ? { kind: 'claimed', prior: state } : { kind: 'claimed' };
    });
  }

  claim(key: string, feed: FeedId, owner: string, nowMs: number, leaseMs: number): Promise<IngestKeyClaim> {
    return this.gate.run(() => this.claimTx.immediate(key, feed, owner, nowMs, leaseMs));
  }

  async progress(key: string, owner: string, s: IngestKeyState, nowMs: number, leaseMs: number): Promise<void> {
    const r = await this.gate.run(() =>
      this.q.progress.run(s.storedThrough, JSON.stringify(s.summary), nowMs + leaseMs, nowMs, key, owner),
    );
    if (r.changes !== 1) throw new IngestKeyLost(key);
  }

  async finish(key: string, owner: string, s: IngestKeyState, nowMs: number): Promise<void> {
    const r = await this.gate.run(() =>
      this.q.finish.run(s.storedThrough, JSON.stringify(s.summary), s.recordsSha256 ?? '', nowMs, key, owner),
    );
    if (r.changes !== 1) throw new IngestKeyLost(key);
  }

  async release(key: string, owner: string): Promise<void> {
    await this.gate.run(() => this.q.release.run(key, owner));
  }

  async purge(beforeMs: number): Promise<number> {
    return (await this.gate.run(() => this.q.purge.run(beforeMs, beforeMs))).changes;
  }
}

function toState(row: Row): IngestKeyState | undefined {
  if (row.summary === null) return undefined;
  const state: IngestKeyState = { feed: row.feed as FeedId, storedThrough: row.stored_through, summary: JSON.parse(row.summary) };
  if (row.records_sha256 !== null) state.recordsSha256 = row.records_sha256;
  return state;
}
