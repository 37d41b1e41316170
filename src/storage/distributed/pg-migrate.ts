import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import { checkSchemaName, pgFault } from './pg-pool.ts';

/**
 * The `migrations/` folder at the package root. This file is src/storage/distributed/pg-migrate.ts in
 * the sources and dist/storage/distributed/pg-migrate.js in the build: the root is three levels up
 * from both, and the .sql files are read from there, never compiled.
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** node-pg-migrate's own table of applied migrations, in the migrated schema (its CLI's default name). */
const MIGRATIONS_TABLE = 'pgmigrations';

export interface MigrateOptions {
  /** The schema to create (if missing) and migrate; default `public`. */
  schema?: string;
  /** Progress lines (which files run); default: none. */
  log?: (msg: string) => void;
  /** How long to wait for another node's migration of the same schema, or for a lock a migration needs (ms, default 60000). */
  lockWaitMs?: number;
}

/**
 * Brings the schema up to date with `migrations/`; returns the names of the migrations this call
 * applied (none when it already was). Safe to run from every node at start: the runs of one schema
 * take turns on an advisory lock, and each applies what the previous left undone, all its pending
 * migrations in one transaction. A database that cannot be reached fails within about two seconds.
 */
export async function migrate(databaseUrl: string, opts: MigrateOptions = {}): Promise<{ applied: string[] }> {
  const schema = checkSchemaName(opts.schema ?? 'public');
  if (!existsSync(MIGRATIONS_DIR)) throw new Error(`the migrations folder is missing: ${MIGRATIONS_DIR}`);
  const log = opts.log ?? (() => {});
  const ran = await runner({
    databaseUrl: {
      connectionString: databaseUrl,
      connectionTimeoutMillis: 2_000,
      keepAlive: true,
      application_name: 'umbra migrate',
      // No statement deadline (a migration may rebuild a large table), but waiting for a lock is bounded,
      // the advisory lock of another node's run included.
      lock_timeout: opts.lockWaitMs ?? 60_000,
    },
    dir: MIGRATIONS_DIR,
    schema,
    createSchema: true,
    migrationsTable: MIGRATIONS_TABLE,
    direction: 'up',
    checkOrder: true,
    singleTransaction: true,
    // Another node migrating this schema: wait for it rather than fail, then find nothing left to do.
    advisoryLockMode: 'wait',
    lockValue: lockValueOf(schema),
    logger: { debug: log, info: log, warn: log, error: log },
  }).catch((e: unknown) => {
    // A database that cannot be reached reads as it does for every store: UNAVAILABLE, the cause named.
    throw pgFault(e) ?? e;
  });
  return { applied: ran.map((m) => m.name) };
}

/**
 * The advisory lock of one schema's migrations. node-pg-migrate's default is one value for the whole
 * database, which would make unrelated schemas (each test run has its own) wait for each other.
 */
function lockValueOf(schema: string): number {
  // 48 bits: a positive bigint the SQL text can carry as a plain number.
  return Number.parseInt(createHash('sha256').update(`umbra migrate ${schema}`).digest('hex').slice(0, 12), 16);
}
