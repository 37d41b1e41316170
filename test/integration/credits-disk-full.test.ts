import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '../../src/storage/embedded/sqlite-db.ts';
import { SqliteCreditLedger } from '../../src/storage/embedded/sqlite-credit-ledger.ts';
import { BufferedCreditLedger } from '../../src/modules/credits/buffered-credit-ledger.ts';
import { fillDisk, privateTmpfs } from '../helpers/tmpfs.ts';
import { umbraCli } from '../helpers/umbra-cli.ts';

const DAY = 86_400;

describe('Credit writes on a full disk', () => {
  it('should fail every credit write that SQLite cannot commit, and change nothing', async (t) => {
    const dir = privateTmpfs(t, 8);
    const db = openSqlite(join(dir, 'umbra.db'));
    t.after(() => db.close());
    db.prepare("INSERT INTO orgs VALUES ('org_a', 'a', 0, 1, 1, 0)").run();
    const ledger = new SqliteCreditLedger(db);
    await ledger.open('org_a', { allotment: 500, periodSeconds: DAY }, 0);
    const filler = fillDisk(dir, 0);
    await assert.rejects(ledger.add('org_a', 100, 10), (e: { code?: string }) => e.code === 'SQLITE_FULL');
    await assert.rejects(ledger.set('org_a', 7, 10), (e: { code?: string }) => e.code === 'SQLITE_FULL');
    await assert.rejects(ledger.consume('org_a', 3, 10), (e: { code?: string }) => e.code === 'SQLITE_FULL');
    await assert.rejects(ledger.debit('org_a', 3, 10), (e: { code?: string }) => e.code === 'SQLITE_FULL');
    assert.equal((await ledger.get('org_a', 10))?.balance, 500, 'no write took effect');
    rmSync(filler);
    assert.equal((await ledger.add('org_a', 100, 10)).balance, 600);
  });

  it('should keep charges that a flush could not write and write them once the disk has room', async (t) => {
    const dir = privateTmpfs(t, 8);
    const db = openSqlite(join(dir, 'umbra.db'));
    t.after(() => db.close());
    db.prepare("INSERT INTO orgs VALUES ('org_a', 'a', 0, 1, 1, 0)").run();
    const inner = new SqliteCreditLedger(db);
    await inner.open('org_a', { allotment: 500, periodSeconds: DAY }, 0);
    const buffered = new BufferedCreditLedger(inner, () => 10_000);
    for (let i = 0; i < 40; i++) assert.equal((await buffered.debit('org_a', 1, 10)).ok, true);
    const filler = fillDisk(dir, 0);
    for (let i = 0; i < 3; i++) await assert.rejects(buffered.flush(10), (e: { code?: string }) => e.code === 'SQLITE_FULL');
    assert.equal(buffered.unsentCredits, 40, 'the charges are still held');
    assert.equal((await buffered.get('org_a', 10))?.balance, 460, 'and still count against the team');
    rmSync(filler);
    await buffered.flush(10);
    assert.equal(buffered.unsentCredits, 0);
    assert.equal((await inner.get('org_a', 10))?.balance, 460, 'every charge reached the database exactly once');
  });

  it('should make `umbra admin credits add|set` exit non-zero with one line naming the cause, balance unchanged', async (t) => {
    const dir = privateTmpfs(t, 16);
    const made = umbraCli(dir, ['admin', 'org', 'create', '--name', 'Acme', '--credits', '500']);
    assert.equal(made.code, 0, made.stderr);
    // A connection held open, as a running server holds one: the database's shared-memory file stays
    // sized, so the verb gets as far as its write and meets the full disk there.
    const held = openSqlite(join(dir, 'umbra.db'));
    t.after(() => held.close());
    held.prepare('SELECT count(*) FROM orgs').get();
    const filler = fillDisk(dir, 0);
    for (const args of [
      ['add', '--org', 'Acme', '100'],
      ['set', '--org', 'Acme', '5'],
    ]) {
      const r = umbraCli(dir, ['admin', 'credits', ...args]);
      assert.equal(r.code, 2, `credits ${args[0]}: ${r.stderr}`);
      assert.equal(r.json.error, 'INSUFFICIENT_STORAGE');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /^umbra: the disk holding the data dir is full \(SQLITE_(FULL|IOERR_SHMSIZE)\); nothing was changed/);
    }
    rmSync(filler);
    const shown = umbraCli(dir, ['admin', 'org', 'show', 'Acme']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.credits.balance, 500);
  });
});
