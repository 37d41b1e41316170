import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AccountStore, NewOrg } from '../../modules/accounts/account-store.ts';

/** Behaviour every AccountStore backend must have. `make` returns a fresh, empty store. */
export function accountStoreContract(backend: string, make: () => Promise<{ store: AccountStore; close(): Promise<void> }>): void {
  const org = (id: string, name: string): NewOrg => ({
    id,
    name,
    creditAllotment: 1000,
    resetPeriodSeconds: 86400,
    maxStreams: 10,
    createdAt: 1,
  });

  describe(`AccountStore contract: ${backend}`, () => {
    it('should create an org once and find it by id or case-insensitive name', async () => {
      const { store, close } = await make();
      try {
        assert.equal(await store.createOrg(org('org_a', 'Acme')), true);
        assert.equal(await store.createOrg(org('org_b', 'acme')), false, 'names are unique regardless of case');
        assert.equal((await store.findOrg('org_a'))?.name, 'Acme');
        assert.equal((await store.findOrg('ACME'))?.id, 'org_a');
        assert.equal(await store.findOrg('nope'), undefined);
        assert.deepEqual(
          (await store.listOrgs()).map((o) => o.id),
          ['org_a'],
        );
      } finally {
        await close();
      }
    });

    it('should store keys by hash and resolve their owner', async () => {
      const { store, close } = await make();
      try {
        await store.createOrg(org('org_a', 'Acme'));
        await store.createMember({ id: 'mem_1', orgId: 'org_a', email: 'a@acme.test', firstName: 'Ada', lastName: 'L', relation: 'OWNER' });
        assert.equal(await store.countMembers('org_a'), 1);
        assert.equal((await store.findMember('org_a', 'A@acme.test'))?.id, 'mem_1');
        await store.createKey({
          id: 'key_1',
          orgId: 'org_a',
          memberId: 'mem_1',
          name: 'ci',
          scopes: ['BASIC', 'PROXY_FEEDS'],
          createdAt: 5,
          revokedAt: null,
          hash: 'h1',
        });
        const owner = await store.findKeyByHash('h1');
        assert.equal(owner?.key.id, 'key_1');
        assert.deepEqual(owner?.key.scopes, ['BASIC', 'PROXY_FEEDS']);
        assert.equal(owner?.org.id, 'org_a');
        assert.equal(owner?.member.email, 'a@acme.test');
        assert.equal(owner?.hash, 'h1');
        assert.equal(await store.findKeyByHash('h2'), undefined);
        assert.deepEqual(
          (await store.listKeys('org_a')).map((k) => k.id),
          ['key_1'],
        );
      } finally {
        await close();
      }
    });

    it('should revoke a key once', async () => {
      const { store, close } = await make();
      try {
        await store.createOrg(org('org_a', 'Acme'));
        await store.createMember({ id: 'mem_1', orgId: 'org_a', email: 'a@acme.test', firstName: '', lastName: '', relation: 'OWNER' });
        await store.createKey({
          id: 'key_1',
          orgId: 'org_a',
          memberId: 'mem_1',
          name: null,
          scopes: ['BASIC'],
          createdAt: 5,
          revokedAt: null,
          hash: 'h1',
        });
        assert.equal(await store.revokeKey('key_1', 9), true);
        assert.equal(await store.revokeKey('key_1', 10), false);
        assert.equal(await store.revokeKey('key_x', 10), false);
        assert.equal((await store.findKeyByHash('h1'))?.key.revokedAt, 9);
      } finally {
        await close();
      }
    });
  });
}
