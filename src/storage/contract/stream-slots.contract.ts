import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamSlots } from '../../modules/feeds/stream-slots.ts';

/** Behaviour every StreamSlots backend must have. */
export function streamSlotsContract(backend: string, make: () => Promise<{ slots: StreamSlots; close(): Promise<void> }>): void {
  describe(`StreamSlots contract: ${backend}`, () => {
    it('should grant up to max slots per team, atomically, and free them on release', async () => {
      const { slots, close } = await make();
      try {
        const grants = await Promise.all(Array.from({ length: 10 }, () => slots.acquire('org_a', 3)));
        assert.equal(grants.filter(Boolean).length, 3);
        assert.equal(await slots.count('org_a'), 3);
        assert.equal(await slots.acquire('org_b', 3), true, 'teams are independent');
        await slots.release('org_a');
        assert.equal(await slots.count('org_a'), 2);
        assert.equal(await slots.acquire('org_a', 3), true);
        assert.equal(await slots.acquire('org_a', 3), false);
        for (let i = 0; i < 3; i++) await slots.release('org_a');
        assert.equal(await slots.count('org_a'), 0);
      } finally {
        await close();
      }
    });
  });
}
