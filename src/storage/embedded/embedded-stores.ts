import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Clock } from '../../lib/clock.ts';
import type { Config } from '../../config.ts';
import { LocalJobLock } from '../../modules/exports/job-lock.ts';
import { BufferedCreditLedger } from '../../modules/credits/buffered-credit-ledger.ts';
import type { FeedStores, StoreLog, Stores } from '../stores.ts';
import { DiskSpace } from './disk-space.ts';
import { FileFeedLog } from './file-feed-log.ts';
import { FileIntelListStore } from './file-intel-list-store.ts';
import { FsObjectStore } from './fs-object-store.ts';
import { MemoryFeedBus } from './memory-feed-bus.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { MemoryStreamSlots } from './memory-stream-slots.ts';
import { SqliteAccountStore } from './sqlite-account-store.ts';
import { SqliteCreditLedger } from './sqlite-credit-ledger.ts';
import { SqliteIngestKeyStore } from './sqlite-ingest-key-store.ts';
import { openSqlite, sqliteGate } from './sqlite-db.ts';
import { SqliteLimitStore } from './sqlite-limit-store.ts';
import { SqliteOverlayStore } from './sqlite-overlay-store.ts';
import { SqliteSnapshotCatalog } from './sqlite-snapshot-catalog.ts';

/** How long close() keeps trying to write buffered charges before it reports them lost (ms). */
const CLOSE_FLUSH_MS = 10_000;

export type EmbeddedConfig = Pick<
  Config,
  'sqliteFile' | 'creditsFlushMs' | 'feedLogDir' | 'listsDir' | 'dataDir' | 'signingKeys' | 'diskReserveBytes'
>;

/**
 * The embedded backends: SQLite, files in the data dir, in-process buckets, slots and bus.
 * `busyDeadlineMs`: how long a database statement is retried while another process holds the lock
 * (the server answers 503 after 2 s; a CLI verb may wait longer).
 */
export function createEmbeddedStores(config: EmbeddedConfig, clock: Clock, log: StoreLog, busyDeadlineMs: number): Stores {
  const db = openSqlite(config.sqliteFile, {
    deadlineMs: busyDeadlineMs,
    onUnavailable: (reason) =>
      log.warn({ reason }, 'embedded database unavailable (locked by another process?): requests that need it answer 503'),
    onRecovered: (ms) => log.info({ unavailable_ms: ms }, 'embedded database available again'),
  });
  const gate = sqliteGate(db);
  const ping = db.prepare('SELECT count(*) FROM orgs');
  // One process owns the buckets and decides debits in memory; SQLite gets them every flush.
  const ledger = new BufferedCreditLedger(new SqliteCreditLedger(db), () => clock.now());
  ledger.flushEvery(config.creditsFlushMs, {
    onFailing: (err, credits) =>
      log.warn({ err: err.message, unsent_credits: credits }, 'credit charges cannot be written yet; they are kept and retried'),
    onRecovered: (ms) => log.info({ failing_ms: ms }, 'credit charges written again'),
  });
  mkdirSync(config.dataDir, { recursive: true });
  const disk = new DiskSpace({ dir: config.dataDir, reserveBytes: config.diskReserveBytes });
  disk.start();
  const feedLog = new FileFeedLog(config.feedLogDir, disk);
  const bus = new MemoryFeedBus();
  // Without configured keys (tests), an ephemeral one: URLs then last as long as the process.
  const signingKeys = config.signingKeys ?? [{ id: 'k0', secret: randomBytes(32).toString('base64url') }];
  const objects = new FsObjectStore({ dataDir: config.dataDir, clock });
  // Temp files of uploads a crash interrupted (never visible) are removed once an hour old.
  void objects.sweepTemp().catch(() => {});
  return {
    objects,
    snapshots: new SqliteSnapshotCatalog(db),
    lists: new FileIntelListStore(config.listsDir),
    overlays: new SqliteOverlayStore(db),
    signingKeys,
    jobLock: new LocalJobLock(),
    feedLog,
    ingestKeys: new SqliteIngestKeyStore(db),
    bus,
    slots: new MemoryStreamSlots({ clock }),
    accounts: new SqliteAccountStore(db),
    limits: new SqliteLimitStore(db),
    ledger,
    limiter: new MemoryRateLimiter(),
    disk,
    vitals: () => {
      const d = disk.snapshot();
      return {
        diskFreeBytes: d.free_bytes,
        diskReserveBytes: d.reserve_bytes,
        unsentCredits: ledger.unsentCredits,
        databaseUnavailable: gate.problems().length > 0 ? 1 : 0,
      };
    },
    health: async () => {
      const problems = [...(await bus.health()), ...disk.problems(), ...gate.problems(), ...ledger.problems()];
      try {
        // One attempt, no wait: a probe must answer at once.
        gate.tryNow(() => ping.get());
      } catch (e) {
        problems.push(`embedded database: ${(e as { code?: string }).code ?? (e as Error).message}`);
      }
      return problems;
    },
    close: async () => {
      ledger.stopFlushing();
      disk.stop();
      await bus.close();
      await feedLog.close();
      if (db.open) {
        await flushBeforeClose(ledger, log);
        db.close();
      }
    },
  };
}

/** The last flush, retried while the database is busy; charges it cannot write are logged, never dropped silently. */
async function flushBeforeClose(ledger: BufferedCreditLedger, log: StoreLog): Promise<void> {
  const until = Date.now() + CLOSE_FLUSH_MS;
  for (;;) {
    try {
      await ledger.flush();
      return;
    } catch (e) {
      if (Date.now() >= until) {
        log.error(
          { err: (e as Error).message, unsent_credits: ledger.unsentCredits, teams: ledger.unsentByTeam() },
          'credit charges could not be written before exit',
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The data dir's feed log and an in-process bus, for `umbra ingest` holding the data dir itself. */
export function createEmbeddedFeedStores(config: Pick<Config, 'feedLogDir' | 'dataDir' | 'diskReserveBytes' | 'sqliteFile'>): FeedStores {
  mkdirSync(config.dataDir, { recursive: true });
  // The server's database, for the idempotency keys: this process holds the data dir, no server runs.
  const db = openSqlite(config.sqliteFile, { deadlineMs: 10_000 });
  // The same reserve as the server's: an ingest never fills the disk the database and exports need.
  const disk = new DiskSpace({ dir: config.dataDir, reserveBytes: config.diskReserveBytes });
  disk.start();
  const feedLog = new FileFeedLog(config.feedLogDir, disk);
  const bus = new MemoryFeedBus();
  return {
    feedLog,
    ingestKeys: new SqliteIngestKeyStore(db),
    bus,
    close: async () => {
      disk.stop();
      await bus.close();
      await feedLog.close();
      db.close();
    },
  };
}
