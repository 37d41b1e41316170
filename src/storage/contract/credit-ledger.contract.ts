import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CreditLedger } from '../../modules/credits/credit-ledger.ts';

/** Behaviour every CreditLedger backend must have. `make` returns a ledger where team 'org_a' may be opened. */
export function creditLedgerContract(backend: string, make: () => Promise<{ ledger: CreditLedger; close(): Promise<void> }>): void {
  const DAY = 86400;
  describe(`CreditLedger contract: ${backend}`, () => {
    it('should charge only when the balance covers the whole cost', async () => {
      const { ledger, close } = await make();
      try {
        await ledger.open('org_a', { allotment: 3, periodSeconds: DAY }, 1000);
        const results = [];
        for (let i = 0; i < 4; i++) results.push(await ledger.debit('org_a', 1, 1000));
        assert.deepEqual(
          results.map((r) => [r.ok, r.balance]),
          [
            [true, 2],
            [true, 1],
            [true, 0],
            [false, 0],
          ],
        );
        assert.equal(results[0]!.resetsAt, 1000 + DAY);
        const big = await ledger.debit('org_a', 5, 1000);
        assert.equal(big.ok, false);
      } finally {
        await close();
      }
    });

    it('should not overdraw under concurrent debits', async () => {
      const { ledger, close } = await make();
      try {
        await ledger.open('org_a', { allotment: 50, periodSeconds: DAY }, 0);
        const results = await Promise.all(Array.from({ length: 80 }, () => ledger.debit('org_a', 1, 10)));
        assert.equal(results.filter((r) => r.ok).length, 50);
        assert.equal((await ledger.get('org_a', 10))?.balance, 0);
      } finally {
        await close();
      }
    });

    it('should refill to the allotment when the period ends, back to back', async () => {
      const { ledger, close } = await make();
      try {
        await ledger.open('org_a', { allotment: 10, periodSeconds: DAY }, 0);
        await ledger.debit('org_a', 10, 100);
        assert.equal((await ledger.get('org_a', DAY - 1))?.balance, 0);
        assert.deepEqual(await ledger.get('org_a', DAY), { balance: 10, resetsAt: 2 * DAY, allotment: 10, periodSeconds: DAY });
        // Three and a half periods later the next reset is at the start of the fifth period.
        const r = await ledger.debit('org_a', 4, 3 * DAY + DAY / 2);
        assert.deepEqual(r, { ok: true, balance: 6, resetsAt: 4 * DAY });
      } finally {
        await close();
      }
    });

    it('should consume granted charges, applying a due refill and never going below zero', async () => {
      const { ledger, close } = await make();
      try {
        await ledger.open('org_a', { allotment: 10, periodSeconds: DAY }, 0);
        assert.equal((await ledger.consume('org_a', 4, 5)).balance, 6);
        assert.equal((await ledger.consume('org_a', 40, 6)).balance, 0);
        assert.equal((await ledger.get('org_a', 7))?.balance, 0);
        await ledger.consume('org_a', 3, DAY + 1);
        assert.deepEqual(await ledger.get('org_a', DAY + 2), { balance: 7, resetsAt: 2 * DAY, allotment: 10, periodSeconds: DAY });
      } finally {
        await close();
      }
    });

    it('should set, add and refund as the operator says', async () => {
      const { ledger, close } = await make();
      try {
        await ledger.open('org_a', { allotment: 10, periodSeconds: DAY }, 0);
        assert.deepEqual(await ledger.set('org_a', 3, 5), { balance: 3, resetsAt: DAY });
        assert.deepEqual(await ledger.add('org_a', 4, 5), { balance: 7, resetsAt: DAY });
        await ledger.refund('org_a', 2);
        assert.equal((await ledger.get('org_a', 5))?.balance, 9);
        await ledger.setPlan('org_a', { allotment: 100 });
        assert.equal((await ledger.get('org_a', DAY))?.balance, 100);
        assert.equal(await ledger.get('org_b', 5), undefined);
        const missing = await ledger.debit('org_b', 1, 5);
        assert.equal(missing.ok, false);
      } finally {
        await close();
      }
    });
  });
}
