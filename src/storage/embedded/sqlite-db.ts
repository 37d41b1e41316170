import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqliteGate, type SqliteGateOptions } from './sqlite-gate.ts';

export type SqliteDb = Database.Database;

/**
 * Schema migrations, applied in order; PRAGMA user_version records how many ran.
 * Never edit a released entry: append a new one.
 */
const MIGRATIONS: string[] = [
  `CREATE TABLE orgs (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE COLLATE NOCASE,
     credit_allotment INTEGER NOT NULL,
     reset_period_s INTEGER NOT NULL,
     max_streams INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE members (
     id TEXT PRIMARY KEY,
     org_id TEXT NOT NULL REFERENCES orgs(id),
     email TEXT NOT NULL COLLATE NOCASE,
     first_name TEXT NOT NULL,
     last_name TEXT NOT NULL,
     relation TEXT NOT NULL,
     UNIQUE (org_id, email)
   );
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     org_id TEXT NOT NULL REFERENCES orgs(id),
     member_id TEXT NOT NULL REFERENCES members(id),
     name TEXT,
     hash TEXT NOT NULL UNIQUE,
     scopes TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     revoked_at INTEGER
   );
   CREATE INDEX api_keys_org ON api_keys(org_id);
   CREATE TABLE credit_accounts (
     org_id TEXT PRIMARY KEY REFERENCES orgs(id),
     balance INTEGER NOT NULL,
     allotment INTEGER NOT NULL,
     period_s INTEGER NOT NULL,
     period_end INTEGER NOT NULL
   );
   CREATE TABLE rate_limits (
     org_id TEXT NOT NULL REFERENCES orgs(id),
     bucket TEXT NOT NULL,
     rate REAL NOT NULL,
     burst INTEGER NOT NULL,
     PRIMARY KEY (org_id, bucket)
   );`,
  // Exports: hour is -1 for daily rows so (feed, kind, date, hour) can be a primary key.
  `CREATE TABLE export_snapshots (
     feed TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('hourly', 'daily')),
     date TEXT NOT NULL,
     hour INTEGER NOT NULL,
     period_start_ms INTEGER NOT NULL,
     key TEXT NOT NULL UNIQUE,
     size INTEGER NOT NULL,
     rows INTEGER NOT NULL,
     checksum TEXT NOT NULL,
     schema TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (feed, kind, date, hour)
   );
   CREATE INDEX export_snapshots_order ON export_snapshots(feed, period_start_ms DESC, kind DESC);
   CREATE TABLE export_rollups (
     feed TEXT NOT NULL,
     date TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('assembling', 'done')),
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (feed, date)
   );`,
  // The log partition version an hourly snapshot was made from (NULL: unknown), for the rollup.
  'ALTER TABLE export_snapshots ADD COLUMN source_version TEXT;',
  // Per-team intelligence overlays (umbra admin overlay). AUTOINCREMENT: ids are never reused, which
  // the store's revision relies on.
  `CREATE TABLE intel_overlays (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     org_id TEXT NOT NULL,
     cidr TEXT NOT NULL,
     category TEXT NOT NULL,
     provider TEXT,
     action TEXT NOT NULL CHECK (action IN ('allow', 'deny')),
     created_at INTEGER NOT NULL
   );
   CREATE INDEX intel_overlays_org ON intel_overlays(org_id, cidr);`,
  // Export publishes under way: the row to record once the key holds these bytes (at most one per
  // key). Left by a crash, recovery completes it if the upload finished, else drops it.
  `CREATE TABLE export_publish_intents (
     key TEXT PRIMARY KEY,
     feed TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('hourly', 'daily')),
     date TEXT NOT NULL,
     hour INTEGER NOT NULL,
     size INTEGER NOT NULL,
     rows INTEGER NOT NULL,
     checksum TEXT NOT NULL,
     schema TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     source_version TEXT,
     started_at_ms INTEGER NOT NULL
   );`,
  // Ingestion idempotency keys: how far an ingest under a key stored its input, its answer, and once
  // it read its whole input the digest of its records; owner holds a running ingest's claim.
  `CREATE TABLE ingest_keys (
     key TEXT PRIMARY KEY,
     feed TEXT NOT NULL,
     owner TEXT,
     lease_until INTEGER NOT NULL,
     stored_through INTEGER NOT NULL DEFAULT 0,
     summary TEXT,
     records_sha256 TEXT,
     updated_ms INTEGER NOT NULL
   );
   CREATE INDEX ingest_keys_updated ON ingest_keys(updated_ms);`,
];

const gates = new WeakMap<SqliteDb, SqliteGate>();

/** How every store runs its statements on this database (made with the defaults when not opened here). */
export function sqliteGate(db: SqliteDb): SqliteGate {
  let gate = gates.get(db);
  if (!gate) gates.set(db, (gate = new SqliteGate({})));
  return gate;
}

/**
 * Opens (creating if needed) the embedded database. WAL lets the server and the admin CLI use the
 * file at once. SQLite's own busy wait would sleep on the event loop, so it is off once the schema is
 * migrated: a statement that meets another process's lock fails at once, and the stores retry it
 * through the gate with timers, up to its deadline, while the loop keeps serving.
 */
export function openSqlite(file: string, options: SqliteGateOptions = {}): SqliteDb {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  // At start nothing is served yet: waiting for an admin command's lock here blocks nobody.
  db.pragma('busy_timeout = 10000');
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a committed transaction survives a process crash; only an OS crash may
  // lose the last transactions, never corrupt the file.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  db.pragma('busy_timeout = 0');
  gates.set(db, new SqliteGate(options));
  return db;
}

function migrate(db: SqliteDb): void {
  const apply = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let i = current; i < MIGRATIONS.length; i++) db.exec(MIGRATIONS[i]!);
    if (current < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  apply.immediate();
}
