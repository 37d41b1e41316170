import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { HeldLock, JobLock } from '../../modules/exports/job-lock.ts';
import { pgFault, type PgPool } from './pg-pool.ts';

/**
 * Job locks as PostgreSQL session advisory locks, each on a connection of its own kept for as long as
 * the lock is held: a node that dies (kill -9, a lost network) closes its connection and the database
 * frees the lock at once, so another node's next pass (within a minute) takes over. The lock key is
 * derived from the schema and the name, so deployments sharing a database do not block each other.
 */
export class PgJobLock implements JobLock {
  constructor(
    private readonly db: PgPool,
    private readonly schema: string,
  ) {}

  async tryAcquire(name: string): Promise<HeldLock | undefined> {
    const [k1, k2] = lockKeys(`${this.schema}:${name}`);
    let client: PoolClient;
    try {
      client = await this.db.pool.connect();
    } catch (e) {
      throw pgFault(e) ?? e;
    }
    let got = false;
    try {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [k1, k2]);
      got = rows[0]?.got === true;
    } catch (e) {
      client.release(true);
      throw pgFault(e) ?? e;
    }
    if (!got) {
      client.release();
      return undefined;
    }
    const lost = new AbortController();
    const onError = () => lost.abort();
    client.on('error', onError);
    let released = false;
    return {
      lost: lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        client.off('error', onError);
        try {
          await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2]);
          client.release();
        } catch {
          // Closing the connection frees the lock as surely.
          client.release(true);
        }
      },
    };
  }
}

/** Two int4 keys from a name (pg_try_advisory_lock(int, int)). */
function lockKeys(name: string): [number, number] {
  const h = createHash('sha256').update(name).digest();
  return [h.readInt32BE(0), h.readInt32BE(4)];
}
