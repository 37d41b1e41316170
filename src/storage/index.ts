import type { Config } from '../config.ts';
import type { AccountStore } from '../modules/accounts/account-store.ts';
import type { CreditLedger } from '../modules/credits/credit-ledger.ts';
import type { RateLimiter } from '../modules/ratelimit/rate-limiter.ts';
import { MemoryRateLimiter } from './embedded/memory-rate-limiter.ts';
import { SqliteAccountStore } from './embedded/sqlite-account-store.ts';
import { SqliteCreditLedger } from './embedded/sqlite-credit-ledger.ts';
import { openSqlite } from './embedded/sqlite-db.ts';

export interface Stores {
  accounts: AccountStore;
  ledger: CreditLedger;
  limiter: RateLimiter;
  /** Problems that make the service unhealthy right now (empty when healthy). */
  health(): Promise<string[]>;
  close(): Promise<void>;
}

/** The only place that chooses a backend. */
export function createStores(config: Pick<Config, 'storage' | 'sqliteFile'>): Stores {
  switch (config.storage) {
    case 'embedded': {
      const db = openSqlite(config.sqliteFile);
      return {
        accounts: new SqliteAccountStore(db),
        ledger: new SqliteCreditLedger(db),
        limiter: new MemoryRateLimiter(),
        health: async () => {
          try {
            db.prepare('SELECT 1').get();
            return [];
          } catch (e) {
            return [`embedded database: ${(e as Error).message}`];
          }
        },
        close: async () => {
          if (db.open) db.close();
        },
      };
    }
  }
}
