import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobLock } from '../../modules/exports/job-lock.ts';

/**
 * Behaviour every JobLock backend must have. `make` gives two handles on one lock space: two nodes
 * (distributed), or the same process twice (embedded).
 */
export function jobLockContract(backend: string, make: () => Promise<{ a: JobLock; b: JobLock; close(): Promise<void> }>): void {
  describe(`JobLock contract: ${backend}`, () => {
    it('should let one holder at a time have a name, and the next one once it is released', async () => {
      const { a, b, close } = await make();
      try {
        const first = await a.tryAcquire('exports');
        assert.ok(first, 'a free lock is taken');
        assert.equal(await b.tryAcquire('exports'), undefined, 'held elsewhere');
        assert.equal(await a.tryAcquire('exports'), undefined, 'held, also for its own holder');
        const other = await b.tryAcquire('other-job');
        assert.ok(other, 'names are independent');
        await first.release();
        const second = await b.tryAcquire('exports');
        assert.ok(second, 'released: the next holder gets it');
        assert.equal(second.lost.aborted, false);
        await second.release();
        await other.release();
        await first.release(); // twice: harmless
      } finally {
        await close();
      }
    });

    it('should give the lock to exactly one of many concurrent takers', async () => {
      const { a, b, close } = await make();
      try {
        const got = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).tryAcquire('exports')));
        const held = got.filter((g) => g !== undefined);
        assert.equal(held.length, 1);
        await held[0]!.release();
      } finally {
        await close();
      }
    });
  });
}
