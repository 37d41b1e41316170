import type { NewOverlay, Overlay, OverlayStore } from '../../modules/intel/overlays/overlay-store.ts';
import type { PgPool } from './pg-pool.ts';
import { bumpRevision, readRevision } from './pg-revisions.ts';

const COLS = 'id, org_id, cidr, category, provider, action, created_at';

/** Overlays in PostgreSQL (table intel_overlays); every node polls revision() to pick up changes made anywhere. */
export class PgOverlayStore implements OverlayStore {
  constructor(private readonly db: PgPool) {}

  async add(o: NewOverlay): Promise<Overlay> {
    return this.db.tx(async (q) => {
      const { rows } = await q.query<Overlay>(
        `INSERT INTO intel_overlays (org_id, cidr, category, provider, action, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING ${COLS}`,
        [o.org_id, o.cidr, o.category, o.provider, o.action, o.created_at],
      );
      if (!rows[0]) throw new Error('the overlay was not stored');
      await bumpRevision(q, 'intel_overlays');
      return rows[0];
    });
  }

  async list(orgId: string): Promise<Overlay[]> {
    return (await this.db.query<Overlay>(`SELECT ${COLS} FROM intel_overlays WHERE org_id = $1 ORDER BY id`, [orgId])).rows;
  }

  async clear(orgId: string, cidr?: string): Promise<number> {
    return this.db.tx(async (q) => {
      const r = await q.query('DELETE FROM intel_overlays WHERE org_id = $1 AND ($2::text IS NULL OR cidr = $2)', [orgId, cidr ?? null]);
      const n = r.rowCount ?? 0;
      // Clearing nothing changes nothing, and leaves the revision as the embedded store does.
      if (n > 0) await bumpRevision(q, 'intel_overlays');
      return n;
    });
  }

  async all(): Promise<Overlay[]> {
    return (await this.db.query<Overlay>(`SELECT ${COLS} FROM intel_overlays ORDER BY id`)).rows;
  }

  async revision(): Promise<string> {
    return readRevision(this.db, 'intel_overlays');
  }
}
