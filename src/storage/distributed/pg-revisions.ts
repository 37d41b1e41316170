import type { PgQueryable } from './pg-pool.ts';

/*
 * Change counters (table revisions, one row per watched table) that every node polls to notice that
 * lists or overlays changed, wherever the change was made.
 */

/**
 * Moves a change counter (table revisions) inside the transaction of the change it counts, so a poller
 * never sees the change without the new revision or the reverse.
 */
export async function bumpRevision(q: PgQueryable, name: string): Promise<void> {
  const r = await q.query('UPDATE revisions SET value = value + 1 WHERE name = $1', [name]);
  if (r.rowCount !== 1) throw new Error(`the revision row ${name} is missing: is the database migrated?`);
}

export async function readRevision(q: PgQueryable, name: string): Promise<string> {
  const { rows } = await q.query<{ value: number }>('SELECT value FROM revisions WHERE name = $1', [name]);
  if (!rows[0]) throw new Error(`the revision row ${name} is missing: is the database migrated?`);
  return String(rows[0].value);
}
