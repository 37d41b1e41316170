import pg from 'pg';
import { after } from 'node:test';
import { migrate } from '../../src/storage/distributed/pg-migrate.ts';
import { PgPool, type PgPoolOptions } from '../../src/storage/distributed/pg-pool.ts';
import { testEngines, uniqueTestName } from './engines.ts';

const url = testEngines.databaseUrl;

/** An admin pool on the test database: schemas are created by migrate() and dropped through it; it outlives every test. */
let adminPool: pg.Pool | undefined;
export const admin = (): pg.Pool => (adminPool ??= new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2_000 }));

after(async () => {
  await adminPool?.end();
});

export const dropSchema = async (schema: string): Promise<void> => {
  await admin().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
};

export interface Schema {
  name: string;
  /** A pool on the schema (another node, or another process, when called again). */
  pool(opts?: PgPoolOptions): PgPool;
  close(): Promise<void>;
}

/** A fresh schema of this run, migrated; close() ends its pools and drops it. */
export async function freshSchema(): Promise<Schema> {
  const name = uniqueTestName('umbra_pg');
  try {
    await migrate(url, { schema: name });
  } catch (e) {
    await dropSchema(name);
    throw e;
  }
  const pools: PgPool[] = [];
  return {
    name,
    pool: (opts = {}) => {
      const p = new PgPool(url, { schema: name, max: 4, ...opts });
      pools.push(p);
      return p;
    },
    close: async () => {
      try {
        await Promise.all(pools.map((p) => p.close()));
      } finally {
        await dropSchema(name);
      }
    },
  };
}

/** Team rows the ledgers' and limit stores' rows reference, as in a real deployment. */
export const addOrgs = async (db: PgPool, ids: string[]) => {
  for (const id of ids) {
    await db.query('INSERT INTO orgs (id, name, credit_allotment, reset_period_s, max_streams, created_at) VALUES ($1, $1, 0, 1, 1, 0)', [
      id,
    ]);
  }
};
