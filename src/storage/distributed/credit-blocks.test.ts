import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { requireEngine, testEngines } from '../../../test/helpers/engines.ts';
import { addOrgs, freshSchema, type Schema } from '../../../test/helpers/pg-schema.ts';
import { BlockCreditLedger, type BlockLedgerOptions } from '../../modules/credits/block-credit-ledger.ts';
import { creditLedgerContract } from '../contract/credit-ledger.contract.ts';
import { PgCreditBlocks } from './pg-credit-blocks.ts';
import { PgCreditLedger } from './pg-credit-ledger.ts';

before(() => requireEngine('PostgreSQL', testEngines.databaseUrl));

const T0 = 1_800_000_000; // Unix seconds
const DAY = 86_400;

/** A node: its own pool (as a separate process would have), its own block ledger, a clock the test moves. */
function node(schema: Schema, nodeId: string, clock: { ms: number }, o: Partial<BlockLedgerOptions> = {}): BlockCreditLedger {
  const db = schema.pool();
  return new BlockCreditLedger(new PgCreditLedger(db), new PgCreditBlocks(db), {
    nodeId,
    nowMs: () => clock.ms,
    blockSize: 50,
    leaseSeconds: 30,
    idleReturnMs: 2_000,
    ...o,
  });
}

async function team(schema: Schema, credits: number, periodSeconds = DAY): Promise<void> {
  const db = schema.pool();
  await addOrgs(db, ['org_a']);
  await new PgCreditLedger(db).open('org_a', { allotment: credits, periodSeconds }, T0);
}

const balanceRow = async (schema: Schema): Promise<number> =>
  Number((await schema.pool().query<{ balance: number }>("SELECT balance FROM credit_accounts WHERE org_id = 'org_a'")).rows[0]!.balance);

creditLedgerContract('postgres with block reservations (distributed nodes)', async () => {
  const s = await freshSchema();
  const db = s.pool();
  await addOrgs(db, ['org_a', 'org_b']);
  const clock = { ms: T0 * 1000 };
  const ledger = new BlockCreditLedger(new PgCreditLedger(db), new PgCreditBlocks(db), {
    nodeId: 'n1',
    nowMs: () => clock.ms,
    blockSize: 3,
    leaseSeconds: 30,
    idleReturnMs: 2_000,
  });
  return { ledger, close: s.close };
});

describe('credit blocks across nodes', () => {
  it('should let three nodes spend exactly the balance between them, never more, and leave it at zero', async () => {
    const s = await freshSchema();
    try {
      await team(s, 1_000);
      const clock = { ms: T0 * 1000 };
      const nodes = ['a', 'b', 'c'].map((id) => node(s, id, clock));
      let ok = 0;
      let refused = 0;
      // 1,500 lookups of cost 1, 500 per node, all at once: 1,000 pass, whatever the interleaving.
      await Promise.all(
        Array.from({ length: 1_500 }, async (_, i) => {
          const r = await nodes[i % 3]!.debit('org_a', 1, T0 + 1);
          if (r.ok) ok++;
          else refused++;
          assert.ok(r.balance >= 0);
        }),
      );
      // Blocks a node holds unspent are credits still: spent only once the others' blocks are drained.
      for (;;) {
        const before = ok;
        for (const n of nodes) await n.flush();
        clock.ms += 2_500; // idle: every node gives its block back
        for (const n of nodes) await n.flush();
        for (let i = 0; i < 300; i++) if ((await nodes[i % 3]!.debit('org_a', 1, T0 + 5)).ok) ok++;
        if (ok === before) break;
      }
      assert.equal(ok, 1_000, 'every credit spent, none twice');
      for (const n of nodes) await n.releaseAll();
      assert.equal(await balanceRow(s), 0);
      assert.equal((await nodes[0]!.get('org_a', T0 + 5))!.balance, 0);
      assert.ok(refused > 0);
    } finally {
      await s.close();
    }
  });

  it('should show every node the team total: the balance plus the unspent part of every live block, less its own unsent charges', async () => {
    const s = await freshSchema();
    try {
      await team(s, 500);
      const clock = { ms: T0 * 1000 };
      const a = node(s, 'a', clock);
      const b = node(s, 'b', clock);
      for (let i = 0; i < 7; i++) assert.equal((await a.debit('org_a', 1, T0)).ok, true);
      assert.equal(await balanceRow(s), 450, 'a holds one block of 50');
      assert.equal((await a.get('org_a', T0))!.balance, 493, 'a counts its own unsent charges');
      assert.equal((await b.get('org_a', T0))!.balance, 500, 'b sees the block whole until a reports');
      await a.flush();
      assert.equal((await b.get('org_a', T0))!.balance, 493, 'after a report every node sees it');
    } finally {
      await s.close();
    }
  });

  it("should give a dead node's unspent credits back once its lease ends, losing at most its unreported charges", async () => {
    const s = await freshSchema();
    try {
      await team(s, 500);
      const clock = { ms: T0 * 1000 };
      const dead = node(s, 'dead', clock);
      const alive = node(s, 'alive', clock);
      for (let i = 0; i < 20; i++) await dead.debit('org_a', 1, T0);
      await dead.flush(); // 20 reported
      for (let i = 0; i < 5; i++) await dead.debit('org_a', 1, T0); // 5 never reported: the node is killed here
      assert.equal(await balanceRow(s), 450);
      clock.ms += 29_000;
      await alive.flush();
      assert.equal(await balanceRow(s), 450, 'the lease has not ended yet');
      clock.ms += 2_000;
      await alive.flush();
      assert.equal(await balanceRow(s), 450, 'ended, but nodes look for dead blocks every 5 s, not at every flush');
      clock.ms += 3_000;
      await alive.flush();
      assert.equal(await balanceRow(s), 480, '50 reserved − 20 reported come back; the 5 unreported are lost (under-charged)');
      assert.equal((await alive.get('org_a', T0 + 34))!.balance, 480);
    } finally {
      await s.close();
    }
  });

  it('should make an operator set apply on every node at its next report, charging what a node spent meanwhile to the new balance', async () => {
    const s = await freshSchema();
    try {
      await team(s, 500);
      const clock = { ms: T0 * 1000 };
      const a = node(s, 'a', clock);
      const op = node(s, 'operator', clock);
      await a.debit('org_a', 1, T0); // a holds 49 unspent
      assert.deepEqual(await op.set('org_a', 100, T0), { balance: 100, resetsAt: T0 + DAY });
      await a.debit('org_a', 1, T0); // still from the stale block
      await a.flush();
      assert.equal(
        (await op.get('org_a', T0))!.balance,
        98,
        'charges a node had not reported when the operator set the credits are taken from the new balance',
      );
      assert.equal((await a.debit('org_a', 1, T0)).ok, true, 'a fresh block of the new balance');
      await a.releaseAll();
      assert.equal(await balanceRow(s), 97);
    } finally {
      await s.close();
    }
  });

  it('should refill at the end of the period and drop what was reported for the ended period', async () => {
    const s = await freshSchema();
    try {
      await team(s, 100, 3_600);
      const clock = { ms: T0 * 1000 };
      const a = node(s, 'a', clock);
      for (let i = 0; i < 60; i++) await a.debit('org_a', 1, T0 + 10);
      await a.flush();
      assert.equal((await a.get('org_a', T0 + 10))!.balance, 40);
      await a.debit('org_a', 1, T0 + 20); // unreported, in the ending period
      const next = await a.debit('org_a', 5, T0 + 3_600);
      assert.deepEqual([next.ok, next.balance], [true, 95], 'a new period: the allotment, less this debit');
      await a.releaseAll();
      assert.equal(await balanceRow(s), 95);
    } finally {
      await s.close();
    }
  });

  it('should refuse a cost larger than the team has left and charge nothing', async () => {
    const s = await freshSchema();
    try {
      await team(s, 30);
      const clock = { ms: T0 * 1000 };
      const a = node(s, 'a', clock);
      const r = await a.debit('org_a', 31, T0);
      assert.deepEqual([r.ok, r.balance], [false, 30]);
      assert.equal((await a.debit('org_a', 30, T0)).ok, true);
      await a.releaseAll();
      assert.equal(await balanceRow(s), 0);
      assert.equal((await a.debit('org_a', 1, T0)).ok, false);
    } finally {
      await s.close();
    }
  });
});
