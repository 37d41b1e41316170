import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IngestKeyState, IngestKeyStore } from '../../modules/feeds/ingest-keys.ts';

const LEASE = 30_000;
const T0 = 1_764_000_000_000;

const state = (storedThrough: number, accepted: number, extra: Partial<IngestKeyState> = {}): IngestKeyState => ({
  feed: 'proxies',
  storedThrough,
  summary: {
    feed: 'proxies',
    accepted,
    rejected: 1,
    by_reason: { invalid_value: 1 },
    errors: [{ record: 2, field: 'ip', message: 'bad', reason: 'invalid_value' }],
  },
  ...extra,
});

/** Every IngestKeyStore backend must pass this suite. */
export function ingestKeyStoreContract(backend: string, make: () => Promise<{ store: IngestKeyStore; close(): Promise<void> }>): void {
  describe(`IngestKeyStore contract: ${backend}`, () => {
    const withStore = (fn: (s: IngestKeyStore) => Promise<void>) => async () => {
      const { store, close } = await make();
      try {
        await fn(store);
      } finally {
        await close();
      }
    };

    it(
      'should give a new key to its first claimant and answer busy, with the lease end, to a second',
      withStore(async (s) => {
        assert.deepEqual(await s.claim('k1', 'proxies', 'a', T0, LEASE), { kind: 'claimed' });
        assert.deepEqual(await s.claim('k1', 'proxies', 'b', T0 + 1_000, LEASE), { kind: 'busy', leaseUntilMs: T0 + LEASE });
        assert.deepEqual(await s.claim('k2', 'proxies', 'b', T0, LEASE), { kind: 'claimed' }, 'keys are independent');
      }),
    );

    it(
      'should hand a released key, with what was stored under it, to the next claimant at once',
      withStore(async (s) => {
        await s.claim('k', 'proxies', 'a', T0, LEASE);
        await s.progress('k', 'a', state(5_000, 4_999), T0 + 10, LEASE);
        await s.release('k', 'a');
        assert.deepEqual(await s.claim('k', 'proxies', 'b', T0 + 20, LEASE), { kind: 'claimed', prior: state(5_000, 4_999) });
      }),
    );

    it(
      "should let a claim be taken over once its lease ran out unrenewed, and refuse the old holder's progress then",
      withStore(async (s) => {
        await s.claim('k', 'proxies', 'a', T0, LEASE);
        await s.progress('k', 'a', state(10, 9), T0 + 20_000, LEASE);
        assert.equal((await s.claim('k', 'proxies', 'b', T0 + 20_000 + LEASE - 1, LEASE)).kind, 'busy', 'progress renewed the lease');
        assert.deepEqual(await s.claim('k', 'proxies', 'b', T0 + 20_000 + LEASE, LEASE), { kind: 'claimed', prior: state(10, 9) });
        await assert.rejects(s.progress('k', 'a', state(20, 19), T0 + 60_000, LEASE), /claim/i);
        await assert.rejects(s.finish('k', 'a', state(20, 19, { recordsSha256: 'ab' }), T0 + 60_000), /claim/i);
        await s.release('k', 'a'); // a lost holder's release changes nothing
        assert.equal((await s.claim('k', 'proxies', 'c', T0 + 60_001, LEASE)).kind, 'busy', "b's claim stands");
      }),
    );

    it(
      'should answer every claim after finish with the finished state, and keep a key to one feed',
      withStore(async (s) => {
        await s.claim('k', 'proxies', 'a', T0, LEASE);
        const done = state(7, 6, { recordsSha256: 'f'.repeat(64) });
        await s.finish('k', 'a', done, T0 + 5);
        assert.deepEqual(await s.claim('k', 'proxies', 'b', T0 + 10, LEASE), { kind: 'finished', state: done });
        assert.deepEqual(await s.claim('k', 'proxies', 'b', T0 + 10 * LEASE, LEASE), { kind: 'finished', state: done });
        assert.deepEqual(await s.claim('k', 'torrents', 'b', T0 + 10, LEASE), { kind: 'other_feed', feed: 'proxies' });
      }),
    );

    it(
      'should give a key to exactly one of many concurrent claimants',
      withStore(async (s) => {
        const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => s.claim('race', 'torrents', `o${i}`, T0, LEASE)));
        assert.equal(claims.filter((c) => c.kind === 'claimed').length, 1);
        assert.equal(claims.filter((c) => c.kind === 'busy').length, 11);
      }),
    );

    it(
      'should forget keys last used before the cutoff, and only those',
      withStore(async (s) => {
        await s.claim('old', 'proxies', 'a', T0, LEASE);
        await s.finish('old', 'a', state(1, 1, { recordsSha256: 'a' }), T0 + 1);
        await s.claim('new', 'proxies', 'a', T0 + 100, LEASE);
        assert.equal(await s.purge(T0 + 50), 1);
        assert.deepEqual(await s.claim('old', 'proxies', 'b', T0 + 200, LEASE), { kind: 'claimed' }, 'a purged key is new again');
        assert.equal((await s.claim('new', 'proxies', 'b', T0 + 200, LEASE)).kind, 'busy');
      }),
    );
  });
}
