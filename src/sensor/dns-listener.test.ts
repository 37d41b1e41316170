import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../lib/clock.ts';
import { SourceRateLimit } from './dns-listener.ts';

describe('the DNS per-source rate limit', () => {
  it('should allow the burst, then the rate, per source, on the injected clock', () => {
    const clock = new ManualClock();
    const limit = new SourceRateLimit(10, 20, () => clock.now());
    const taken = (src: string, n: number) => Array.from({ length: n }, () => limit.take(src)).filter(Boolean).length;
    assert.equal(taken('203.0.113.1', 50), 20, 'the burst');
    assert.equal(taken('203.0.113.2', 5), 5, 'another source has its own bucket');
    clock.advance(500);
    assert.equal(taken('203.0.113.1', 50), 5, 'half a second at 10/s');
    clock.advance(60_000);
    assert.equal(taken('203.0.113.1', 50), 20, 'never more than the burst');
  });
});
