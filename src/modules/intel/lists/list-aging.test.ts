import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../lib/clock.ts';
import { AGING_RULES, agingRule, DEFAULT_AGING, listAge } from './list-aging.ts';

const DAY_S = 86_400;

describe(listAge.name, () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 28, 12, 0, 0));
  const nowS = () => Math.floor(clock.now() / 1000);
  const at = (kind: string, days: number) => listAge({ kind, published_at: nowS() - days * DAY_S }, nowS());

  it('should keep a fresh list at full strength, halve it every half-life after, and expire it', () => {
    // TOR_NODE: full for 1 day, halves every 2, nothing from 14.
    assert.deepEqual(at('TOR_NODE', 0), { age_days: 0, state: 'current', strength: 1 });
    assert.deepEqual(at('TOR_NODE', 1), { age_days: 1, state: 'current', strength: 1 });
    assert.deepEqual(at('TOR_NODE', 3), { age_days: 3, state: 'stale', strength: 0.5 });
    assert.deepEqual(at('TOR_NODE', 5), { age_days: 5, state: 'stale', strength: 0.25 });
    assert.deepEqual(at('TOR_NODE', 14), { age_days: 14, state: 'expired', strength: 0 });
  });

  it('should not count a Tor exit list of two years ago at all, while a VPN list of a month ago still counts', () => {
    assert.equal(at('TOR_NODE', 730).state, 'expired');
    assert.equal(at('TOR_NODE', 730).strength, 0);
    assert.deepEqual(at('COMMERCIAL_VPN', 30), { age_days: 30, state: 'current', strength: 1 });
    assert.deepEqual(at('COMMERCIAL_VPN', 60), { age_days: 60, state: 'stale', strength: 0.5 });
    assert.equal(at('COMMERCIAL_VPN', 180).state, 'expired');
  });

  it('should age with the clock', () => {
    const l = { kind: 'PUBLIC_PROXY', published_at: nowS() };
    assert.equal(listAge(l, nowS()).state, 'current');
    clock.advance(5 * DAY_S * 1000);
    assert.deepEqual(listAge(l, nowS()), { age_days: 5, state: 'stale', strength: 0.5 });
    clock.advance(25 * DAY_S * 1000);
    assert.equal(listAge(l, nowS()).state, 'expired');
  });

  it('should give crawler, service and cloud lists the slow default, and treat a time ahead of the clock as age 0', () => {
    for (const kind of ['SEARCH_ENGINE', 'WEBHOOK_PROVIDER', 'DATACENTER']) assert.deepEqual(agingRule(kind), DEFAULT_AGING, kind);
    assert.deepEqual(at('SEARCH_ENGINE', 90), { age_days: 90, state: 'current', strength: 1 });
    assert.equal(at('SEARCH_ENGINE', 400).state, 'stale');
    assert.deepEqual(at('TOR_NODE', -1), { age_days: 0, state: 'current', strength: 1 });
  });

  it('should give every rule fresh < expire and a positive half-life', () => {
    for (const [kind, r] of Object.entries({ ...AGING_RULES, default: DEFAULT_AGING })) {
      assert.ok(r.fresh_days < r.expire_days && r.half_life_days > 0, kind);
    }
  });
});
