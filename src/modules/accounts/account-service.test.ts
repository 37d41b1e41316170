import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../errors.ts';
import { ManualClock } from '../../lib/clock.ts';
import { nodeKeyCrypto } from '../../lib/key-crypto.ts';
import { isPromise } from '../../lib/maybe-promise.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteAccountStore } from '../../storage/embedded/sqlite-account-store.ts';
import { SqliteCreditLedger } from '../../storage/embedded/sqlite-credit-ledger.ts';
import { SqliteLimitStore } from '../../storage/embedded/sqlite-limit-store.ts';
import type { AccountStore } from './account-store.ts';
import { AccountService, STALE_VERDICT_MAX_MS } from './account-service.ts';
import { AdminService } from './admin-service.ts';

/** The real store, with a switch that makes it fail as a locked database does (UNAVAILABLE). */
function switchable(store: AccountStore): { store: AccountStore; down: (d: boolean) => void } {
  let isDown = false;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => (isDown ? Promise.reject(new AppError('UNAVAILABLE', 'locked')) : v.apply(target, args));
    },
  });
  return { store: proxy, down: (d) => (isDown = d) };
}

async function setup() {
  const db = openSqlite(':memory:');
  const clock = new ManualClock();
  const real = new SqliteAccountStore(db);
  const ledger = new SqliteCreditLedger(db);
  const admin = new AdminService(real, new SqliteLimitStore(db), ledger, nodeKeyCrypto, clock);
  const org = await admin.createOrg({ name: 'acme', credits: 10 });
  const known = (await admin.createKey({ org: org.id, email: 'a@acme.test', scopes: ['BASIC'] })).secret;
  const other = (await admin.createKey({ org: org.id, email: 'b@acme.test', scopes: ['BASIC'] })).secret;
  const { store, down } = switchable(real);
  const accounts = new AccountService(store, ledger, nodeKeyCrypto, clock, { cacheMs: 1_000 });
  return { accounts, admin, clock, down, known, other };
}

describe(AccountService.name, () => {
  it('should keep answering keys it verified before while the store is unavailable, without waiting on it', async () => {
    const { accounts, clock, down, known } = await setup();
    assert.equal((await accounts.verifyKey(known)).ok, true);
    down(true);
    clock.advance(1_500);
    assert.equal((await accounts.verifyKey(known)).ok, true, 'the last verdict, once the store failed');
    const next = accounts.verifyKey(known);
    assert.equal(isPromise(next), false, 'answered at once while the store is known to fail');
    assert.equal((next as { ok: boolean }).ok, true);
  });

  it('should refuse with UNAVAILABLE a key it never verified, and a verdict older than the stale limit', async () => {
    const { accounts, clock, down, known, other } = await setup();
    assert.equal((await accounts.verifyKey(known)).ok, true);
    down(true);
    await assert.rejects(Promise.resolve(accounts.verifyKey(other)), (e: AppError) => e.code === 'UNAVAILABLE');
    clock.advance(1_000 + STALE_VERDICT_MAX_MS);
    await assert.rejects(Promise.resolve(accounts.verifyKey(known)), (e: AppError) => e.code === 'UNAVAILABLE');
  });

  it('should apply a revocation made during the outage once the store answers again', async () => {
    const { accounts, admin, clock, down, known } = await setup();
    const verified = await accounts.verifyKey(known);
    assert.equal(verified.ok, true);
    down(true);
    clock.advance(1_500);
    assert.equal((await accounts.verifyKey(known)).ok, true);
    down(false);
    await admin.revokeKey(verified.ok ? verified.caller.keyId : '');
    // The next request starts a verification in the background; the one after sees its verdict.
    await accounts.verifyKey(known);
    await new Promise((r) => setImmediate(r));
    clock.advance(10);
    assert.deepEqual(await accounts.verifyKey(known), { ok: false, reason: 'REVOKED' });
  });
});
