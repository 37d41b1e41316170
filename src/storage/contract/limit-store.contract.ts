import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LimitStore } from '../../modules/ratelimit/limit-store.ts';

/** Every LimitStore backend must pass this suite. `make` gives a store whose teams org_a and org_b exist. */
export function limitStoreContract(name: string, make: () => Promise<{ store: LimitStore; close: () => Promise<void> }>): void {
  describe(`LimitStore contract: ${name}`, () => {
    it('should keep per-team limit overrides and remove them', async () => {
      const { store, close } = await make();
      try {
        assert.deepEqual(await store.getLimits('org_a'), {});
        await store.setLimit('org_a', 'lookup', { rate: 1000, burst: 2000 });
        await store.setLimit('org_a', 'lookup', { rate: 5000, burst: 9000 });
        await store.setLimit('org_a', 'download', { rate: 0.5, burst: 10 });
        assert.deepEqual(await store.getLimits('org_a'), { lookup: { rate: 5000, burst: 9000 }, download: { rate: 0.5, burst: 10 } });
        assert.deepEqual(await store.getLimits('org_b'), {}, 'overrides belong to one team');
        await store.setLimit('org_a', 'lookup', null);
        assert.deepEqual(await store.getLimits('org_a'), { download: { rate: 0.5, burst: 10 } });
        await store.setLimit('org_a', 'stream', null);
        assert.deepEqual(await store.getLimits('org_a'), { download: { rate: 0.5, burst: 10 } }, 'removing an absent override is no error');
      } finally {
        await close();
      }
    });
  });
}
