import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, type Clock } from '../../lib/clock.ts';
import type { StreamLease, StreamSlots } from '../../modules/feeds/stream-slots.ts';

/** What a backend is built with: the suite moves the clock by hand, so leases expire without sleeping. */
export interface StreamSlotsSetup {
  clock: Clock;
  ttlMs: number;
}

const TTL_MS = 30_000;

/** Behaviour every StreamSlots backend must have. */
export function streamSlotsContract(
  backend: string,
  make: (setup: StreamSlotsSetup) => Promise<{ slots: StreamSlots; close(): Promise<void> }>,
): void {
  describe(`StreamSlots contract: ${backend}`, () => {
    const withSlots = async (test: (slots: StreamSlots, clock: ManualClock) => Promise<void>) => {
      const clock = new ManualClock();
      const { slots, close } = await make({ clock, ttlMs: TTL_MS });
      try {
        assert.equal(slots.ttlMs, TTL_MS);
        await test(slots, clock);
      } finally {
        await close();
      }
    };

    it('should grant exactly max of many concurrent acquires, each its own lease', () =>
      withSlots(async (slots) => {
        const grants = await Promise.all(Array.from({ length: 10 }, () => slots.acquire('org_a', 3)));
        const leases = grants.filter((g): g is StreamLease => g !== undefined);
        assert.equal(leases.length, 3);
        assert.equal(new Set(leases.map((l) => l.id)).size, 3, 'distinct lease ids');
        assert.ok(leases.every((l) => l.orgId === 'org_a'));
        assert.equal(await slots.count('org_a'), 3);
        assert.equal(await slots.acquire('org_a', 3), undefined);
      }));

    it('should keep teams apart', () =>
      withSlots(async (slots) => {
        for (let i = 0; i < 2; i++) assert.ok(await slots.acquire('org_a', 2));
        assert.equal(await slots.acquire('org_a', 2), undefined);
        assert.ok(await slots.acquire('org_b', 2), 'another team has its own allowance');
        assert.equal(await slots.count('org_b'), 1);
        assert.equal(await slots.count('org_c'), 0, 'a team never seen holds nothing');
      }));

    it('should free a slot on release, and a second release of the same lease frees nothing more', () =>
      withSlots(async (slots) => {
        const [a, b, c] = await Promise.all([slots.acquire('org_a', 3), slots.acquire('org_a', 3), slots.acquire('org_a', 3)]);
        await slots.release(a!);
        assert.equal(await slots.count('org_a'), 2);
        await slots.release(a!);
        assert.equal(await slots.count('org_a'), 2, 'releasing twice is harmless: the other leases stay');
        const d = await slots.acquire('org_a', 3);
        assert.ok(d);
        assert.equal(await slots.acquire('org_a', 3), undefined);
        for (const l of [b, c, d]) await slots.release(l!);
        assert.equal(await slots.count('org_a'), 0);
        assert.equal(await slots.renew(b!), false, 'a released lease cannot be renewed');
      }));

    it('should let an unrenewed lease expire after the TTL and free its slot', () =>
      withSlots(async (slots, clock) => {
        const held = await slots.acquire('org_a', 1);
        assert.ok(held);
        clock.advance(TTL_MS - 1);
        assert.equal(await slots.count('org_a'), 1, 'live until its TTL');
        assert.equal(await slots.acquire('org_a', 1), undefined);
        clock.advance(1);
        assert.equal(await slots.count('org_a'), 0, 'a stream whose node stopped renewing no longer counts');
        const next = await slots.acquire('org_a', 1);
        assert.ok(next, 'its slot can be taken again');
        assert.equal(await slots.renew(held), false, 'the expired lease cannot be renewed, even with its slot taken');
        assert.equal(await slots.count('org_a'), 1, 'a failed renew does not bring the lease back');
      }));

    it('should keep a renewed lease past its first TTL, for another TTL from each renew', () =>
      withSlots(async (slots, clock) => {
        const renewed = await slots.acquire('org_a', 2);
        const idle = await slots.acquire('org_a', 2);
        assert.ok(renewed && idle);
        for (let i = 0; i < 5; i++) {
          clock.advance(TTL_MS / 3);
          assert.equal(await slots.renew(renewed), true);
        }
        assert.equal(await slots.count('org_a'), 1, 'the idle lease expired, the renewed one did not');
        clock.advance(TTL_MS - 1);
        assert.equal(await slots.count('org_a'), 1);
        clock.advance(1);
        assert.equal(await slots.count('org_a'), 0);
        assert.equal(await slots.renew(renewed), false);
        assert.equal(await slots.renew(idle), false);
      }));
  });
}
