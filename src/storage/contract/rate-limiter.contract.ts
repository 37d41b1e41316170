import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimiter } from '../../modules/ratelimit/rate-limiter.ts';

/** Behaviour every RateLimiter backend must have, driven by explicit times (no sleeping). */
export function rateLimiterContract(backend: string, make: () => Promise<{ limiter: RateLimiter; close(): Promise<void> }>): void {
  describe(`RateLimiter contract: ${backend}`, () => {
    it('should allow the burst, then refill at the rate', async () => {
      const { limiter, close } = await make();
      try {
        const rule = { rate: 5, burst: 10 };
        const t0 = 1_000_000;
        let pattern = '';
        for (let i = 0; i < 14; i++) pattern += (await limiter.take('t:a', rule, t0)).allowed ? '1' : '0';
        assert.equal(pattern, '11111111110000');
        const denied = await limiter.take('t:a', rule, t0);
        assert.deepEqual(denied, { allowed: false, limit: 10, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
        // 450 ms at 5/s refills 2.25 tokens: two more pass.
        pattern = '';
        for (let i = 0; i < 3; i++) pattern += (await limiter.take('t:a', rule, t0 + 450)).allowed ? '1' : '0';
        assert.equal(pattern, '110');
      } finally {
        await close();
      }
    });

    it('should report remaining tokens and seconds to full refill', async () => {
      const { limiter, close } = await make();
      try {
        const rule = { rate: 2, burst: 60 };
        const first = await limiter.take('t:b', rule, 0);
        assert.deepEqual(first, { allowed: true, limit: 60, remaining: 59, resetSeconds: 1, retryAfterSeconds: 0 });
        for (let i = 0; i < 9; i++) await limiter.take('t:b', rule, 0);
        const tenth = await limiter.take('t:b', rule, 0);
        assert.equal(tenth.remaining, 49);
        assert.equal(tenth.resetSeconds, 6);
      } finally {
        await close();
      }
    });

    it('should keep buckets apart by key and honour slow rates', async () => {
      const { limiter, close } = await make();
      try {
        const rule = { rate: 0.1, burst: 2 };
        assert.equal((await limiter.take('t:c', rule, 0)).allowed, true);
        assert.equal((await limiter.take('t:c', rule, 0)).allowed, true);
        const denied = await limiter.take('t:c', rule, 0);
        assert.equal(denied.allowed, false);
        assert.equal(denied.retryAfterSeconds, 10);
        assert.equal((await limiter.take('t:d', rule, 0)).allowed, true, 'another key has its own bucket');
        assert.equal((await limiter.take('t:c', rule, 9_999)).allowed, false);
        assert.equal((await limiter.take('t:c', rule, 10_000)).allowed, true);
      } finally {
        await close();
      }
    });

    it('should neither refill nor rewind a bucket for a take stamped before its last one (a node whose clock is behind)', async () => {
      const { limiter, close } = await make();
      try {
        const rule = { rate: 10, burst: 10 };
        for (let i = 0; i < 10; i++) assert.equal((await limiter.take('t:e', rule, 10_000)).allowed, true);
        const behind = await limiter.take('t:e', rule, 9_000);
        assert.deepEqual(behind, { allowed: false, limit: 10, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 });
        // 100 ms after the bucket's own stamp refills one token, not the 1.1 s since the late take.
        const next = await limiter.take('t:e', rule, 10_100);
        assert.equal(next.allowed, true);
        assert.equal(next.remaining, 0);
        assert.equal((await limiter.take('t:e', rule, 10_100)).allowed, false);
      } finally {
        await close();
      }
    });
  });
}
