import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Who holds a data dir, as its owner record says. */
export interface DirOwner {
  pid: number;
  /** The verb: `serve`, `ingest`, `exports rollup`, … */
  command: string;
  /** ISO time the lock was taken. */
  started_at: string;
  /** Base URL of its HTTP listener (serve, once listening): `http://127.0.0.1:8080`. */
  http?: string;
  /** Its gRPC listener (serve): `127.0.0.1:50051`. */
  grpc?: string;
}

export const LOCK_FILE = 'umbra.lock';
export const OWNER_FILE = 'umbra-owner.json';

export class DataDirBusy extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: DirOwner | undefined,
  ) {
    super(`the data dir ${dataDir} is in use by ${describeOwner(owner)}`);
  }
}

export function describeOwner(owner: DirOwner | undefined): string {
  if (!owner) return 'another umbra process';
  const where = [owner.http, owner.grpc && `gRPC ${owner.grpc}`].filter(Boolean).join(', ');
  return `umbra ${owner.command} (pid ${owner.pid}${where ? `, ${where}` : ''}, since ${owner.started_at})`;
}

const tryLock = (dataDir: string): Database.Database | undefined => {
  mkdirSync(dataDir, { recursive: true });
  // A lock the kernel holds for this process (SQLite's fcntl lock on the file): it is released when
  // the process ends in any way, kill -9 included, so a crashed server never leaves a stale lock.
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (at TEXT); INSERT INTO held VALUES (datetime()); DELETE FROM held; COMMIT;');
    return db;
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) return undefined;
    throw e;
  }
};

const readOwner = (dataDir: string): DirOwner | undefined => {
  try {
    return JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')) as DirOwner;
  } catch {
    return undefined;
  }
};

/**
 * One owner per data dir: `umbra serve` holds it while it runs, and CLI verbs that write the feed log
 * or the exports hold it while they work, so two processes never append to one log, spend one team's
 * credits from two in-memory ledgers or run the same export job. The owner record says who holds it
 * and where a server listens, so CLI verbs find the running server from the data dir, not from a port
 * they assume.
 */
export class DataDirLock {
  private constructor(
    private readonly dataDir: string,
    private db: Database.Database | undefined,
    private owner: DirOwner,
  ) {}

  /**
   * Takes the data dir or throws DataDirBusy naming the holder. Retries for `waitMs`: a CLI verb that
   * only asks who holds it takes the lock for a moment.
   */
  static async acquire(dataDir: string, command: string, waitMs = 2_000): Promise<DataDirLock> {
    const until = Date.now() + waitMs;
    for (;;) {
      const db = tryLock(dataDir);
      if (db) {
        const lock = new DataDirLock(dataDir, db, { pid: process.pid, command, started_at: new Date().toISOString() });
        lock.write();
        return lock;
      }
      if (Date.now() >= until) throw new DataDirBusy(dataDir, readOwner(dataDir));
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Who holds the data dir now; undefined when nobody does (its owner record is then stale and ignored). */
  static holder(dataDir: string): { owner: DirOwner | undefined } | undefined {
    const db = tryLock(dataDir);
    if (!db) return { owner: readOwner(dataDir) };
    db.close();
    return undefined;
  }

  /** Adds where this process listens to its owner record. */
  update(fields: Partial<Pick<DirOwner, 'http' | 'grpc'>>): void {
    this.owner = { ...this.owner, ...fields };
    this.write();
  }

  release(): void {
    if (!this.db) return;
    rmSync(join(this.dataDir, OWNER_FILE), { force: true });
    this.db.close();
    this.db = undefined;
  }

  private write(): void {
    const tmp = join(this.dataDir, `${OWNER_FILE}.${process.pid}.tmp`);
    writeFileSync(tmp, `${JSON.stringify(this.owner)}\n`);
    renameSync(tmp, join(this.dataDir, OWNER_FILE));
  }
}
