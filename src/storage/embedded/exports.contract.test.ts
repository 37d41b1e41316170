import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filesUnder, objectStoreContract } from '../contract/object-store.contract.ts';
import { snapshotCatalogContract } from '../contract/snapshot-catalog.contract.ts';
import { FsObjectStore } from './fs-object-store.ts';
import { openSqlite } from './sqlite-db.ts';
import { SqliteSnapshotCatalog } from './sqlite-snapshot-catalog.ts';

objectStoreContract('fs', async ({ clock }) => {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-objects-'));
  return {
    store: new FsObjectStore({ dataDir: dir, clock }),
    leftovers: async () => filesUnder(join(dir, 'exports', '.tmp')),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

snapshotCatalogContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-catalog-'));
  const dbs = [openSqlite(join(dir, 'umbra.db'))];
  return {
    catalog: new SqliteSnapshotCatalog(dbs[0]!),
    // A second connection to the same file, the first left open: what a restarted process sees.
    reopen: async () => new SqliteSnapshotCatalog(dbs[dbs.push(openSqlite(join(dir, 'umbra.db'))) - 1]!),
    close: async () => {
      for (const db of dbs) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
