import type { NewOverlay, Overlay, OverlayStore } from '../../modules/intel/overlays/overlay-store.ts';
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

/** Overlays in the embedded database (migration `intel_overlays`). */
export class SqliteOverlayStore implements OverlayStore {
  private readonly insert;
  private readonly byOrg;
  private readonly every;
  private readonly rev;
  private readonly gate: SqliteGate;

  constructor(private readonly db: SqliteDb) {
    this.gate = sqliteGate(db);
    this.insert = db.prepare('INSERT INTO intel_overlays (org_id, cidr, category, provider, action, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    this.byOrg = db.prepare('SELECT * FROM intel_overlays WHERE org_id = ? ORDER BY id');
    this.every = db.prepare('SELECT * FROM intel_overlays ORDER BY id');
    // AUTOINCREMENT's sequence only grows (every add raises it) and between adds only clears happen,
    // each lowering count(*): the pair never repeats.
    this.rev = db.prepare(
      "SELECT (SELECT count(*) FROM intel_overlays) AS n, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'intel_overlays'), 0) AS m",
    );
  }

  async add(o: NewOverlay): Promise<Overlay> {
    const r = await this.gate.run(() => this.insert.run(o.org_id, o.cidr, o.category, o.provider, o.action, o.created_at));
    return { id: Number(r.lastInsertRowid), ...o };
  }

  async list(orgId: string): Promise<Overlay[]> {
    return (await this.gate.run(() => this.byOrg.all(orgId))) as Overlay[];
  }

  async clear(orgId: string, cidr?: string): Promise<number> {
    const r = await this.gate.run(() =>
      cidr === undefined
        ? this.db.prepare('DELETE FROM intel_overlays WHERE org_id = ?').run(orgId)
        : this.db.prepare('DELETE FROM intel_overlays WHERE org_id = ? AND cidr = ?').run(orgId, cidr),
    );
    return r.changes;
  }

  async all(): Promise<Overlay[]> {
    return (await this.gate.run(() => this.every.all())) as Overlay[];
  }

  async revision(): Promise<string> {
    const { n, m } = (await this.gate.run(() => this.rev.get())) as { n: number; m: number };
    return `${n}:${m}`;
  }
}
