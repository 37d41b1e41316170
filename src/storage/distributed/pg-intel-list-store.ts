import type { IntelList, IntelListStore } from '../../modules/intel/lists/intel-list.ts';
import type { PgPool } from './pg-pool.ts';
import { bumpRevision, readRevision } from './pg-revisions.ts';

const TAG = /^[A-Z0-9_]{1,64}$/;

const checkTags = (kind: string, provider: string): void => {
  if (!TAG.test(kind) || !TAG.test(provider)) throw new Error(`invalid list kind or provider: ${kind}/${provider}`);
};

/**
 * Imported lists in PostgreSQL (table intel_lists, the ranges as text[]), one row per kind and
 * provider; every node polls revision() to reload when a list changed anywhere.
 */
export class PgIntelListStore implements IntelListStore {
  constructor(private readonly db: PgPool) {}

  async put(list: IntelList): Promise<void> {
    checkTags(list.kind, list.provider);
    await this.db.tx(async (q) => {
      const r = await q.query(
        `INSERT INTO intel_lists (kind, provider, version, imported_at, published_at, published_from, format, cidrs)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (kind, provider) DO UPDATE SET version = excluded.version, imported_at = excluded.imported_at,
           published_at = excluded.published_at, published_from = excluded.published_from,
           format = excluded.format, cidrs = excluded.cidrs`,
        [list.kind, list.provider, list.version, list.imported_at, list.published_at, list.published_from, list.format, list.cidrs],
      );
      if (r.rowCount !== 1) throw new Error(`the list ${list.kind}/${list.provider} was not stored`);
      await bumpRevision(q, 'intel_lists');
    });
  }

  async remove(kind: string, provider: string): Promise<boolean> {
    checkTags(kind, provider);
    return this.db.tx(async (q) => {
      const r = await q.query('DELETE FROM intel_lists WHERE kind = $1 AND provider = $2', [kind, provider]);
      // Removing nothing changes nothing, the revision included.
      if (r.rowCount !== 1) return false;
      await bumpRevision(q, 'intel_lists');
      return true;
    });
  }

  async all(): Promise<IntelList[]> {
    const { rows } = await this.db.query<IntelList>(
      'SELECT kind, provider, version, imported_at, published_at, published_from, format, cidrs FROM intel_lists ORDER BY kind, provider',
    );
    return rows;
  }

  async revision(): Promise<string> {
    return readRevision(this.db, 'intel_lists');
  }
}
