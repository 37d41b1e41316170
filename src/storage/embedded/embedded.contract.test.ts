import { accountStoreContract } from '../contract/account-store.contract.ts';
import { creditLedgerContract } from '../contract/credit-ledger.contract.ts';
import { rateLimiterContract } from '../contract/rate-limiter.contract.ts';
import { BufferedCreditLedger } from '../../modules/credits/buffered-credit-ledger.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { SqliteAccountStore } from './sqlite-account-store.ts';
import { SqliteCreditLedger } from './sqlite-credit-ledger.ts';
import { openSqlite } from './sqlite-db.ts';

accountStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return { store: new SqliteAccountStore(db), close: async () => void db.close() };
});

creditLedgerContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  // The ledger's rows reference orgs, as they do in a real deployment.
  for (const id of ['org_a', 'org_b']) db.prepare("INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)").run(id, id);
  return { ledger: new SqliteCreditLedger(db), close: async () => void db.close() };
});

creditLedgerContract('sqlite behind the write-behind buffer', async () => {
  const db = openSqlite(':memory:');
  for (const id of ['org_a', 'org_b']) db.prepare("INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)").run(id, id);
  const ledger = new BufferedCreditLedger(new SqliteCreditLedger(db), () => 0);
  return { ledger, close: async () => void db.close() };
});

rateLimiterContract('memory', async () => ({ limiter: new MemoryRateLimiter(), close: async () => {} }));
