import { describe, it } from 'node:test';
import { accountStoreContract } from '../contract/account-store.contract.ts';
import { creditLedgerContract } from '../contract/credit-ledger.contract.ts';
import { rateLimiterContract } from '../contract/rate-limiter.contract.ts';
import { BufferedCreditLedger } from '../../modules/credits/buffered-credit-ledger.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { intelListStoreContract } from '../contract/intel-list-store.contract.ts';
import { FileIntelListStore } from './file-intel-list-store.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedBusContract } from '../contract/feed-bus.contract.ts';
import { feedLogContract } from '../contract/feed-log.contract.ts';
import { streamSlotsContract } from '../contract/stream-slots.contract.ts';
import { jobLockContract } from '../contract/job-lock.contract.ts';
import { LocalJobLock } from '../../modules/exports/job-lock.ts';
import { FileFeedLog } from './file-feed-log.ts';
import { MemoryFeedBus } from './memory-feed-bus.ts';
import { MemoryStreamSlots } from './memory-stream-slots.ts';
import { SqliteAccountStore } from './sqlite-account-store.ts';
import { SqliteLimitStore } from './sqlite-limit-store.ts';
import { ingestKeyStoreContract } from '../contract/ingest-key-store.contract.ts';
import { limitStoreContract } from '../contract/limit-store.contract.ts';
import { SqliteIngestKeyStore } from './sqlite-ingest-key-store.ts';
import { SqliteCreditLedger } from './sqlite-credit-ledger.ts';
import { openSqlite } from './sqlite-db.ts';
import { overlayStoreContract } from '../contract/overlay-store.contract.ts';
import { SqliteOverlayStore } from './sqlite-overlay-store.ts';

accountStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return { store: new SqliteAccountStore(db), close: async () => void db.close() };
});

limitStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  for (const id of ['org_a', 'org_b']) db.prepare('INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)').run(id, id);
  return { store: new SqliteLimitStore(db), close: async () => void db.close() };
});

creditLedgerContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  // The ledger's rows reference orgs, as they do in a real deployment.
  for (const id of ['org_a', 'org_b']) db.prepare('INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)').run(id, id);
  return { ledger: new SqliteCreditLedger(db), close: async () => void db.close() };
});

creditLedgerContract('sqlite behind the write-behind buffer', async () => {
  const db = openSqlite(':memory:');
  for (const id of ['org_a', 'org_b']) db.prepare('INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)').run(id, id);
  const ledger = new BufferedCreditLedger(new SqliteCreditLedger(db), () => 0);
  return { ledger, close: async () => void db.close() };
});

rateLimiterContract('memory', async () => ({ limiter: new MemoryRateLimiter(), close: async () => {} }));

feedLogContract('files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-feedlog-'));
  const log = new FileFeedLog(dir);
  return {
    log,
    close: async () => {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

feedBusContract('memory', async () => {
  const bus = new MemoryFeedBus();
  return { bus, close: () => bus.close() };
});

streamSlotsContract('memory', async (setup) => ({ slots: new MemoryStreamSlots(setup), close: async () => {} }));

jobLockContract('in-process (one process holds the data dir)', async () => {
  const lock = new LocalJobLock();
  return { a: lock, b: lock, close: async () => {} };
});

intelListStoreContract('files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'umbra-lists-'));
  const dir = join(root, 'lists');
  return {
    store: new FileIntelListStore(dir),
    other: () => new FileIntelListStore(dir),
    close: async () => {
      // Nothing may have been written beside the lists directory (a kind or provider never becomes a path).
      const stray = readdirSync(root).filter((n) => n !== 'lists');
      rmSync(root, { recursive: true, force: true });
      assert.deepEqual(stray, []);
    },
  };
});

ingestKeyStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return { store: new SqliteIngestKeyStore(db), close: async () => void db.close() };
});

overlayStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return { store: new SqliteOverlayStore(db), close: async () => void db.close() };
});

describe('FileIntelListStore beyond the contract', () => {
  it('should read a list written before publication times were kept as published at its import', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-lists-old-'));
    try {
      const old = {
        kind: 'TOR_NODE',
        provider: 'TOR',
        version: '0123456789abcdef',
        imported_at: 1_795_000_000,
        format: 'tor-bulk-exit-list',
        cidrs: ['185.220.101.18/32'],
      };
      writeFileSync(join(dir, 'TOR_NODE--TOR.json'), JSON.stringify(old));
      assert.deepEqual(await new FileIntelListStore(dir).all(), [{ ...old, published_at: 1_795_000_000, published_from: 'import' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
