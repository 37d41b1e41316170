import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IntelList, IntelListStore } from '../../modules/intel/lists/intel-list.ts';

const list = (kind: string, provider: string, extra: Partial<IntelList> = {}): IntelList => ({
  kind,
  provider,
  version: '0123456789abcdef',
  imported_at: 1_795_000_000,
  published_at: 1_794_990_000,
  published_from: 'content',
  format: 'cidr-lines',
  cidrs: ['66.249.64.0/27', '192.178.4.0/27', '2001:4860:4801:10::/64'],
  ...extra,
});
const byName = (lists: IntelList[]) => [...lists].sort((a, b) => `${a.kind}/${a.provider}`.localeCompare(`${b.kind}/${b.provider}`));

export interface IntelListStoreHandle {
  store: IntelListStore;
  /** A second handle on the same backing state, as another process (the CLI beside the server) would open it. */
  other(): IntelListStore;
  close(): Promise<void>;
}

/** Behaviour every IntelListStore backend must have. */
export function intelListStoreContract(backend: string, make: () => Promise<IntelListStoreHandle>): void {
  describe(`IntelListStore contract: ${backend}`, () => {
    const withStore = async (fn: (h: IntelListStoreHandle) => Promise<void>) => {
      const h = await make();
      try {
        await fn(h);
      } finally {
        await h.close();
      }
    };

    it('should keep every field of every list, one per kind and provider', async () => {
      await withStore(async ({ store }) => {
        assert.deepEqual(await store.all(), []);
        const tor = list('TOR_NODE', 'TOR', { format: 'tor-bulk-exit-list', cidrs: ['185.220.101.18/32'] });
        const gb = list('SEARCH_ENGINE', 'GOOGLEBOT');
        const bing = list('SEARCH_ENGINE', 'BINGBOT', {
          version: 'fedcba9876543210',
          imported_at: 1_795_000_123,
          published_at: 1_795_000_123,
          published_from: 'import',
        });
        for (const l of [tor, gb, bing]) await store.put(l);
        assert.deepEqual(byName(await store.all()), byName([tor, gb, bing]));
      });
    });

    it('should replace the list of a kind and provider when it is put again', async () => {
      await withStore(async ({ store }) => {
        await store.put(list('TOR_NODE', 'TOR'));
        await store.put(list('DATACENTER', 'TOR'));
        const next = list('TOR_NODE', 'TOR', {
          version: 'aaaaaaaaaaaaaaaa',
          imported_at: 1_795_000_999,
          published_at: 1_640_000_000,
          published_from: 'option',
          cidrs: ['23.184.48.209/32'],
        });
        await store.put(next);
        const all = byName(await store.all());
        assert.equal(all.length, 2, 'the same provider under another kind is another list');
        assert.deepEqual(
          all.find((l) => l.kind === 'TOR_NODE'),
          next,
          'the publication time and its origin are replaced with the rest',
        );
      });
    });

    it('should remove a list and say whether there was one', async () => {
      await withStore(async ({ store }) => {
        await store.put(list('SEARCH_ENGINE', 'GOOGLEBOT'));
        await store.put(list('SEARCH_ENGINE', 'BINGBOT'));
        assert.equal(await store.remove('SEARCH_ENGINE', 'GOOGLEBOT'), true);
        assert.equal(await store.remove('SEARCH_ENGINE', 'GOOGLEBOT'), false);
        assert.equal(await store.remove('TOR_NODE', 'TOR'), false);
        assert.deepEqual(
          (await store.all()).map((l) => l.provider),
          ['BINGBOT'],
        );
      });
    });

    it('should change the revision on every put and remove, also those of another process', async () => {
      await withStore(async ({ store, other }) => {
        // A poller compares with the last revision it saw; returning to an earlier state may give an earlier value.
        let last = '';
        const step = async (what: string, change: () => Promise<unknown>) => {
          await change();
          const r = await store.revision();
          assert.equal(await store.revision(), r, `${what}: stable while nothing changes`);
          assert.notEqual(r, last, `${what}: a new revision`);
          last = r;
        };
        await step('empty', async () => {});
        const peer = other();
        await step('put by another process', () => peer.put(list('TOR_NODE', 'TOR')));
        assert.equal((await store.all()).length, 1, 'lists put by another process are seen');
        await step('replaced by another process', () =>
          peer.put(list('TOR_NODE', 'TOR', { version: 'bbbbbbbbbbbbbbbb', cidrs: ['1.2.3.4/32', '5.6.7.8/32'] })),
        );
        await step('put here', () => store.put(list('SEARCH_ENGINE', 'GOOGLEBOT')));
        await step('removed by another process', () => peer.remove('SEARCH_ENGINE', 'GOOGLEBOT'));
        assert.equal(await peer.revision(), await store.revision(), 'both handles agree');
        const before = await store.revision();
        await store.remove('SEARCH_ENGINE', 'GOOGLEBOT');
        assert.equal(await store.revision(), before, 'removing nothing changes nothing');
      });
    });

    it('should refuse a kind or provider that is not an upper-case tag, storing nothing', async () => {
      await withStore(async ({ store }) => {
        for (const [kind, provider] of [
          ['../TOR_NODE', 'TOR'],
          ['TOR_NODE', '../../etc/passwd'],
          ['TOR_NODE', 'a/b'],
          ['tor_node', 'TOR'],
          ['TOR_NODE', ''],
          ['TOR_NODE', 'X'.repeat(65)],
          ['TOR_NODE', 'TOR\0'],
        ] as const) {
          await assert.rejects(async () => store.put(list(kind, provider)), `${kind} ${provider}`);
          await assert.rejects(async () => store.remove(kind, provider), `${kind} ${provider}`);
        }
        assert.deepEqual(await store.all(), []);
      });
    });
  });
}
