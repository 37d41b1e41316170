import type { Config } from '../config.ts';
import type { StoreVitals } from '../metrics.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { BufferedCreditLedger } from '../modules/credits/buffered-credit-ledger.ts';
import type { AccountStore } from '../modules/accounts/account-store.ts';
import type { CreditLedger } from '../modules/credits/credit-ledger.ts';
import type { RateLimiter } from '../modules/ratelimit/rate-limiter.ts';
import type { FeedBus } from '../modules/feeds/feed-bus.ts';
import type { FeedLog } from '../modules/feeds/feed-log.ts';
import type { StreamSlots } from '../modules/feeds/stream-slots.ts';
import type { IntelListStore } from '../modules/intel/lists/intel-list.ts';
import type { OverlayStore } from '../modules/intel/overlays/overlay-store.ts';
import { SqliteOverlayStore } from './embedded/sqlite-overlay-store.ts';
import { FileIntelListStore } from './embedded/file-intel-list-store.ts';
import { FileFeedLog } from './embedded/file-feed-log.ts';
import { DiskSpace } from './embedded/disk-space.ts';
import { MemoryFeedBus } from './embedded/memory-feed-bus.ts';
import { MemoryStreamSlots } from './embedded/memory-stream-slots.ts';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { ObjectStore } from '../modules/exports/object-store.ts';
import type { SnapshotCatalog } from '../modules/exports/snapshot-catalog.ts';
import { FsObjectStore } from './embedded/fs-object-store.ts';
import { SqliteSnapshotCatalog } from './embedded/sqlite-snapshot-catalog.ts';
import { MemoryRateLimiter } from './embedded/memory-rate-limiter.ts';
import { SqliteAccountStore } from './embedded/sqlite-account-store.ts';
import { SqliteLimitStore } from './embedded/sqlite-limit-store.ts';
import type { LimitStore } from '../modules/ratelimit/limit-store.ts';
import { SqliteCreditLedger } from './embedded/sqlite-credit-ledger.ts';
import { openSqlite, sqliteGate } from './embedded/sqlite-db.ts';

export interface Stores {
  accounts: AccountStore;
  /** Per-team rate-limit overrides. */
  limits: LimitStore;
  ledger: CreditLedger;
  limiter: RateLimiter;
  feedLog: FeedLog;
  bus: FeedBus;
  slots: StreamSlots;
  objects: ObjectStore;
  snapshots: SnapshotCatalog;
  lists: IntelListStore;
  overlays: OverlayStore;
  /** Download URL and cursor signing secrets, current first. */
  signingKeys: Array<{ id: string; secret: string }>;
  /** Problems that make the service unhealthy right now (empty when healthy). */
  health(): Promise<string[]>;
  /** The data dir's disk, where the backend has one (embedded). */
  disk?: DiskSpace;
  /** Figures for /metrics: free space, credits not yet written, whether the database answers. */
  vitals(): StoreVitals;
  close(): Promise<void>;
}

/** The intelligence list store alone, for the CLI verbs that need nothing else (`umbra data import-list`). */
export function createListStore(config: Pick<Config, 'storage' | 'listsDir'>): IntelListStore {
  switch (config.storage) {
    case 'embedded':
      return new FileIntelListStore(config.listsDir);
  }
}

/** Where the stores report faults they ride out (a locked database, charges not yet written). */
export interface StoreLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const silentLog: StoreLog = { warn: () => {}, info: () => {}, error: () => {} };

/** How long close() keeps trying to write buffered charges before it reports them lost (ms). */
const CLOSE_FLUSH_MS = 10_000;

/**
 * The only place that chooses a backend. `busyDeadlineMs`: how long a database statement is retried
 * while another process holds the lock (the server answers 503 after 2 s; a CLI verb may wait longer).
 */
export function createStores(
  config: Pick<
    Config,
    'storage' | 'sqliteFile' | 'creditsFlushMs' | 'feedLogDir' | 'listsDir' | 'dataDir' | 'signingKeys' | 'diskReserveBytes'
  >,
  clock: Clock = systemClock,
  log: StoreLog = silentLog,
  busyDeadlineMs = 2_000,
): Stores {
  switch (config.storage) {
    case 'embedded': {
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
        lists: createListStore(config),
        overlays: new SqliteOverlayStore(db),
        signingKeys,
        feedLog,
        bus,
        slots: new MemoryStreamSlots(),
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
  }
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
