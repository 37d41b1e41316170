import type { FeedId } from '../../modules/feeds/feed-catalog.ts';
import { type IngestKeyClaim, type IngestKeyState, type IngestKeyStore, IngestKeyLost } from '../../modules/feeds/ingest-keys.ts';
import type { IngestSummary } from '../../modules/feeds/ingest-summary.ts';
import type { PgPool } from './pg-pool.ts';

interface Row {
  feed: string;
  owner: string | null;
  lease_until: string;
  stored_through: string;
  summary: IngestSummary | null;
  records_sha256: string | null;
}

/** Ingestion idempotency keys in PostgreSQL (table ingest_keys), shared by every node and `umbra ingest`. */
export class PgIngestKeyStore implements IngestKeyStore {
  constructor(private readonly db: PgPool) {}

  async claim(key: string, feed: FeedId, owner: string, nowMs: number, leaseMs: number): Promise<IngestKeyClaim> {
    // One statement takes a new key, or a free one of the same feed that no ingest finished; concurrent
    // claims of one key are serialised on its row, so exactly one gets it.
    const taken = await this.db.query<Row>(
      `INSERT INTO ingest_keys AS k (key, feed, owner, lease_until, updated_ms) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until, updated_ms = excluded.updated_ms
       WHERE k.feed = excluded.feed AND k.records_sha256 IS NULL AND (k.owner IS NULL OR k.lease_until <= $5)
       RETURNING feed, owner, lease_until, stored_through, summary, records_sha256`,
      [key, feed, owner, nowMs + leaseMs, nowMs],
    );
    if (taken.rows[0]) {
      const prior = toState(taken.rows[0]);
      return prior ? { kind: 'claimed', prior } : { kind: 'claimed' };
    }
    const { rows } = await this.db.query<Row>(
      'SELECT feed, owner, lease_until, stored_through, summary, records_sha256 FROM ingest_keys WHERE key = $1',
      [key],
    );
    const row = rows[0];
    // Purged between the two statements: as busy, the client's retry finds it new.
    if (!row) return { kind: 'busy', leaseUntilMs: nowMs };
    if (row.feed !== feed) return { kind: 'other_feed', feed: row.feed as FeedId };
    if (row.records_sha256 !== null) return { kind: 'finished', state: toState(row)! };
    return { kind: 'busy', leaseUntilMs: Number(row.lease_until) };
  }

  async progress(key: string, owner: string, s: IngestKeyState, nowMs: number, leaseMs: number): Promise<void> {
    const r = await this.db.query(
      `UPDATE ingest_keys SET stored_through = $1, summary = $2, lease_until = $3, updated_ms = $4 WHERE key = $5 AND owner = $6`,
      [s.storedThrough, JSON.stringify(s.summary), nowMs + leaseMs, nowMs, key, owner],
    );
    if (r.rowCount !== 1) throw new IngestKeyLost(key);
  }

  async finish(key: string, owner: string, s: IngestKeyState, nowMs: number): Promise<void> {
    const r = await this.db.query(
      `UPDATE ingest_keys SET stored_through = $1, summary = $2, records_sha256 = $3, owner = NULL, lease_until = 0, updated_ms = $4
       WHERE key = $5 AND owner = $6`,
      [s.storedThrough, JSON.stringify(s.summary), s.recordsSha256 ?? '', nowMs, key, owner],
    );
    if (r.rowCount !== 1) throw new IngestKeyLost(key);
  }

  async release(key: string, owner: string): Promise<void> {
    await this.db.query('UPDATE ingest_keys SET owner = NULL, lease_until = 0 WHERE key = $1 AND owner = $2', [key, owner]);
  }

  async purge(beforeMs: number): Promise<number> {
    const r = await this.db.query('DELETE FROM ingest_keys WHERE updated_ms < $1 AND (owner IS NULL OR lease_until < $1)', [beforeMs]);
    return r.rowCount ?? 0;
  }
}

function toState(row: Row): IngestKeyState | undefined {
  if (row.summary === null) return undefined;
  const state: IngestKeyState = { feed: row.feed as FeedId, storedThrough: Number(row.stored_through), summary: row.summary };
  if (row.records_sha256 !== null) state.recordsSha256 = row.records_sha256;
  return state;
}
