import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../errors.ts';
import { ManualClock } from '../../lib/clock.ts';
import { isPromise } from '../../lib/maybe-promise.ts';
import { openSqlite } from '../../storage/embedded/sqlite-db.ts';
import { SqliteLimitStore } from '../../storage/embedded/sqlite-limit-store.ts';
import { MemoryRateLimiter } from '../../storage/embedded/memory-rate-limiter.ts';
import type { LimitStore } from './limit-store.ts';
import { LimitPolicy } from './limit-policy.ts';

function setup() {
  const db = openSqlite(':memory:');
  db.prepare("INSERT INTO orgs VALUES ('org_a', 'a', 0, 1, 1, 0), ('org_b', 'b', 0, 1, 1, 0)").run();
  const real = new SqliteLimitStore(db);
  let down = false;
  const store = new Proxy(real, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function'
        ? (...a: unknown[]) => (down ? Promise.reject(new AppError('UNAVAILABLE', 'locked')) : v.apply(target, a))
        : v;
    },
  }) as LimitStore;
  const clock = new ManualClock();
  const policy = new LimitPolicy(store, new MemoryRateLimiter(), clock, 2_000);
  return { real, policy, clock, setDown: (d: boolean) => (down = d) };
}

describe(LimitPolicy.name, () => {
  it("should keep a known team's last rules while the store is unavailable, and refuse an unknown team", async () => {
    const { real, policy, clock, setDown } = setup();
    await real.setLimit('org_a', 'lookup', { rate: 1, burst: 3 });
    assert.equal((await policy.take('org_a', 'lookup')).limit, 3);
    setDown(true);
    clock.advance(2_500);
    assert.equal((await policy.take('org_a', 'lookup')).limit, 3, 'the last rules, once the store failed');
    const next = policy.take('org_a', 'lookup');
    assert.equal(isPromise(next), false, 'answered at once while the store is known to fail');
    await assert.rejects(Promise.resolve(policy.take('org_b', 'lookup')), (e: AppError) => e.code === 'UNAVAILABLE');
    setDown(false);
    await real.setLimit('org_a', 'lookup', { rate: 1, burst: 9 });
    await policy.take('org_a', 'lookup');
    await new Promise((r) => setImmediate(r));
    assert.equal((await policy.take('org_a', 'lookup')).limit, 9, 'read again once the store answers');
  });
});
