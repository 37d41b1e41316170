import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NewOverlay, OverlayStore } from '../../modules/intel/overlays/overlay-store.ts';

/** Behaviour every OverlayStore backend must have. `make` returns a fresh, empty store. */
export function overlayStoreContract(backend: string, make: () => Promise<{ store: OverlayStore; close(): Promise<void> }>): void {
  const o = (org_id: string, cidr: string, action: 'allow' | 'deny' = 'deny', provider: string | null = null): NewOverlay => ({
    org_id,
    cidr,
    category: 'TOR_NODE',
    provider,
    action,
    created_at: 100,
  });

  describe(`OverlayStore contract: ${backend}`, () => {
    it('should keep each team its own overlays, oldest first, with ids', async () => {
      const { store, close } = await make();
      try {
        const a = await store.add(o('org_a', '192.0.2.0/24'));
        const b = await store.add(o('org_a', '198.51.100.7/32', 'allow', 'TOR'));
        await store.add(o('org_b', '192.0.2.0/24'));
        assert.ok(b.id > a.id);
        assert.deepEqual(await store.list('org_a'), [a, b]);
        assert.deepEqual(
          (await store.list('org_b')).map((x) => x.org_id),
          ['org_b'],
        );
        assert.deepEqual(await store.list('org_c'), []);
        assert.equal((await store.all()).length, 3);
      } finally {
        await close();
      }
    });

    it('should clear a team by CIDR or whole, never another team', async () => {
      const { store, close } = await make();
      try {
        await store.add(o('org_a', '192.0.2.0/24'));
        await store.add(o('org_a', '198.51.100.0/24'));
        await store.add(o('org_b', '192.0.2.0/24'));
        assert.equal(await store.clear('org_a', '192.0.2.0/24'), 1);
        assert.deepEqual(
          (await store.list('org_a')).map((x) => x.cidr),
          ['198.51.100.0/24'],
        );
        assert.equal(await store.clear('org_a'), 1);
        assert.equal(await store.clear('org_a'), 0);
        assert.equal((await store.list('org_b')).length, 1);
      } finally {
        await close();
      }
    });

    it('should change its revision with every add and clear', async () => {
      const { store, close } = await make();
      try {
        const seen = new Set([await store.revision()]);
        await store.add(o('org_a', '192.0.2.0/24'));
        seen.add(await store.revision());
        await store.clear('org_a');
        seen.add(await store.revision());
        await store.add(o('org_a', '192.0.2.0/24'));
        seen.add(await store.revision());
        assert.equal(seen.size, 4);
        assert.equal(await store.revision(), await store.revision(), 'stable without changes');
      } finally {
        await close();
      }
    });
  });
}
