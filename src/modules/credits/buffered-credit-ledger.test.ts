import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteCreditLedger } from '../../storage/embedded/sqlite-credit-ledger.ts';
import { BufferedCreditLedger } from './buffered-credit-ledger.ts';

const DAY = 86400;

function setup() {
  const db = openSqlite(':memory:');
  db.prepare("INSERT INTO orgs VALUES ('org_a', 'a', 0, 1, 1, 0)").run();
  const inner = new SqliteCreditLedger(db);
  let now = 0;
  const buffered = new BufferedCreditLedger(inner, () => now * 1000);
  return { inner, buffered, at: (s: number) => (now = s) };
}

describe(BufferedCreditLedger.name, () => {
  it('should write charges to the backing ledger on flush', async () => {
    const { inner, buffered, at } = setup();
    await inner.open('org_a', { allotment: 100, periodSeconds: DAY }, 0);
    for (let i = 0; i < 30; i++) assert.equal((await buffered.debit('org_a', 1, 10)).ok, true);
    assert.equal((await inner.get('org_a', 10))?.balance, 100, 'not yet sent');
    at(10);
    await buffered.flush();
    assert.equal((await inner.get('org_a', 10))?.balance, 70);
    assert.equal((await buffered.get('org_a', 10))?.balance, 70);
  });

  it("should pick up another process's change at the next flush, keeping its own unsent charges", async () => {
    const { inner, buffered, at } = setup();
    await inner.open('org_a', { allotment: 100, periodSeconds: DAY }, 0);
    await buffered.debit('org_a', 5, 10);
    await inner.set('org_a', 40, 10); // the admin CLI, another process
    at(11);
    await buffered.flush();
    assert.equal((await buffered.get('org_a', 11))?.balance, 35);
    assert.equal((await inner.get('org_a', 11))?.balance, 35);
  });

  it('should charge unsent debits of an ended period to that period, not the new one', async () => {
    const { inner, buffered, at } = setup();
    await inner.open('org_a', { allotment: 10, periodSeconds: DAY }, 0);
    await buffered.debit('org_a', 8, DAY - 5);
    const after = await buffered.debit('org_a', 3, DAY + 5);
    assert.deepEqual(after, { ok: true, balance: 7, resetsAt: 2 * DAY });
    at(DAY + 6);
    await buffered.flush();
    assert.deepEqual(await inner.get('org_a', DAY + 6), { balance: 7, resetsAt: 2 * DAY, allotment: 10, periodSeconds: DAY });
  });

  it('should keep charges for the next flush when the backing ledger fails', async () => {
    const { inner, buffered, at } = setup();
    await inner.open('org_a', { allotment: 100, periodSeconds: DAY }, 0);
    await buffered.debit('org_a', 9, 10);
    const consume = inner.consume.bind(inner);
    inner.consume = async () => {
      throw new Error('disk full');
    };
    at(10);
    await assert.rejects(buffered.flush(), /disk full/);
    assert.equal((await buffered.get('org_a', 10))?.balance, 91, 'still charged locally');
    inner.consume = consume;
    await buffered.flush();
    assert.equal((await inner.get('org_a', 10))?.balance, 91);
  });

  it('should not charge twice when the ended period was written and the current one was not', async () => {
    const { inner, buffered, at } = setup();
    await inner.open('org_a', { allotment: 10, periodSeconds: DAY }, 0);
    await buffered.debit('org_a', 8, DAY - 5);
    await buffered.debit('org_a', 3, DAY + 5);
    const consume = inner.consume.bind(inner);
    let calls = 0;
    // The first consume (the ended period's 8) commits; the second (the new period's 3) fails.
    inner.consume = async (...a) => {
      if (++calls === 2) throw new Error('disk full');
      return consume(...a);
    };
    at(DAY + 6);
    await assert.rejects(buffered.flush(), /disk full/);
    assert.equal(buffered.unsentCredits, 3, 'only the charge that did not commit is kept');
    assert.equal((await buffered.get('org_a', DAY + 6))?.balance, 7, 'the balance a client sees does not move');
    inner.consume = consume;
    await buffered.flush();
    assert.deepEqual(await inner.get('org_a', DAY + 6), { balance: 7, resetsAt: 2 * DAY, allotment: 10, periodSeconds: DAY });
  });

  it('should retry failed flushes with backoff, say once that it fails and once that it recovered, and lose nothing', async () => {
    const { inner, buffered } = setup();
    await inner.open('org_a', { allotment: 100, periodSeconds: DAY }, 0);
    const consume = inner.consume.bind(inner);
    let attempts = 0;
    inner.consume = async () => {
      attempts++;
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    };
    const events: string[] = [];
    buffered.flushEvery(5, { onFailing: (e, n) => events.push(`failing ${e.message} ${n}`), onRecovered: () => events.push('recovered') });
    for (let i = 0; i < 12; i++) await buffered.debit('org_a', 1, 10);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(events, ['failing database is locked 12']);
    assert.ok(attempts >= 3 && attempts <= 12, `backed off: ${attempts} attempts in 300 ms at a 5 ms interval`);
    assert.match(buffered.problems()[0]!, /^credits: 12 charged credits not yet written for \d+ s \(database is locked\)/);
    inner.consume = consume;
    await new Promise((r) => setTimeout(r, 1_200));
    buffered.stopFlushing();
    assert.deepEqual(events, ['failing database is locked 12', 'recovered']);
    assert.deepEqual(buffered.problems(), []);
    assert.equal((await inner.get('org_a', 10))?.balance, 88);
  });
});
