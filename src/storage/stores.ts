import type { StoreVitals } from '../metrics.ts';
import type { AccountStore } from '../modules/accounts/account-store.ts';
import type { CreditLedger } from '../modules/credits/credit-ledger.ts';
import type { JobLock } from '../modules/exports/job-lock.ts';
import type { ObjectStore } from '../modules/exports/object-store.ts';
import type { SnapshotCatalog } from '../modules/exports/snapshot-catalog.ts';
import type { FeedBus } from '../modules/feeds/feed-bus.ts';
import type { FeedLog } from '../modules/feeds/feed-log.ts';
import type { IngestKeyStore } from '../modules/feeds/ingest-keys.ts';
import type { StreamSlots } from '../modules/feeds/stream-slots.ts';
import type { IntelListStore } from '../modules/intel/lists/intel-list.ts';
import type { OverlayStore } from '../modules/intel/overlays/overlay-store.ts';
import type { LimitStore } from '../modules/ratelimit/limit-store.ts';
import type { RateLimiter } from '../modules/ratelimit/rate-limiter.ts';
import type { DiskSpace } from './embedded/disk-space.ts';

/** Every port a running umbra uses, from one backend family (embedded or distributed). */
export interface Stores {
  accounts: AccountStore;
  /** Per-team rate-limit overrides. */
  limits: LimitStore;
  ledger: CreditLedger;
  limiter: RateLimiter;
  feedLog: FeedLog;
  /** Idempotency keys of ingestion. */
  ingestKeys: IngestKeyStore;
  bus: FeedBus;
  slots: StreamSlots;
  objects: ObjectStore;
  snapshots: SnapshotCatalog;
  lists: IntelListStore;
  overlays: OverlayStore;
  /** Whose turn it is to run export jobs among the nodes. */
  jobLock: JobLock;
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

/** Where the stores report faults they ride out (a locked database, charges not yet written). */
export interface StoreLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLog: StoreLog = { warn: () => {}, info: () => {}, error: () => {} };

/** What the operator's account verbs use (`umbra admin`): no feed log, bus, buckets or objects. */
export type AdminStores = Pick<Stores, 'accounts' | 'limits' | 'ledger' | 'overlays' | 'close'>;

/** The feed log and bus alone (`umbra ingest` writing without a server). */
export interface FeedStores {
  feedLog: FeedLog;
  ingestKeys: IngestKeyStore;
  bus: FeedBus;
  close(): Promise<void>;
}
