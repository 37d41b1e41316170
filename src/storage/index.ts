import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { IntelListStore } from '../modules/intel/lists/intel-list.ts';
import {
  createDistributedAdminStores,
  createDistributedFeedStores,
  createDistributedListStore,
  createDistributedStores,
  migrateDistributed,
} from './distributed/distributed-stores.ts';
import { createEmbeddedFeedStores, createEmbeddedStores } from './embedded/embedded-stores.ts';
import { FileIntelListStore } from './embedded/file-intel-list-store.ts';
import { type AdminStores, type FeedStores, silentLog, type StoreLog, type Stores } from './stores.ts';

export type { AdminStores, FeedStores, StoreLog, Stores } from './stores.ts';

/**
 * The only place that chooses a backend: the embedded one on the data dir, or the distributed one on
 * the configured engines. `busyDeadlineMs`: how long an embedded database statement is retried while
 * another process holds the lock (the server answers 503 after 2 s; a CLI verb may wait longer).
 */
export async function createStores(
  config: Config,
  clock: Clock = systemClock,
  log: StoreLog = silentLog,
  busyDeadlineMs = 2_000,
): Promise<Stores> {
  switch (config.storage) {
    case 'embedded':
      return createEmbeddedStores(config, clock, log, busyDeadlineMs);
    case 'distributed':
      return createDistributedStores(config, clock, log);
  }
}

/** The account verbs' stores (`umbra admin`): in distributed mode PostgreSQL alone. */
export async function createAdminStores(
  config: Config,
  clock: Clock = systemClock,
  log: StoreLog = silentLog,
  busyDeadlineMs = 2_000,
): Promise<AdminStores> {
  switch (config.storage) {
    case 'embedded':
      return createEmbeddedStores(config, clock, log, busyDeadlineMs);
    case 'distributed':
      return createDistributedAdminStores(config, clock, log);
  }
}

/** The intelligence list store alone, for the CLI verbs that need nothing else (`umbra data import-list`). */
export function createListStore(config: Config): { store: IntelListStore; close(): Promise<void> } {
  switch (config.storage) {
    case 'embedded':
      return { store: new FileIntelListStore(config.listsDir), close: async () => {} };
    case 'distributed':
      return createDistributedListStore(config);
  }
}

/** The feed log and bus alone, for `umbra ingest` writing without a server. */
export async function createFeedStores(config: Config, log: StoreLog = silentLog): Promise<FeedStores> {
  switch (config.storage) {
    case 'embedded':
      return createEmbeddedFeedStores(config);
    case 'distributed':
      return createDistributedFeedStores(config, log);
  }
}

/**
 * Creates or upgrades the storage schema (`umbra migrate`); returns what it applied. The embedded
 * database upgrades itself when it is opened, so there is nothing to run for it.
 */
export async function migrateStorage(config: Config, progress: (line: string) => void): Promise<string[] | undefined> {
  switch (config.storage) {
    case 'embedded':
      return undefined;
    case 'distributed':
      return migrateDistributed(config, progress);
  }
}
