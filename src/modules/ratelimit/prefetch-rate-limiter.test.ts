import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../storage/embedded/memory-rate-limiter.ts';
import type { BucketRule } from './buckets.ts';
import { PrefetchRateLimiter } from './prefetch-rate-limiter.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';

/** One shared bucket, answering asynchronously as Redis does, and counting the takes that reach it. */
class SharedBucket implements RateLimiter {
  readonly inner = new MemoryRateLimiter();
  takes = 0;
  down = false;
  async take(key: string, rule: BucketRule, nowMs: number, cost = 1): Promise<RateDecision> {
    this.takes++;
    await new Promise((r) => setImmediate(r));
    if (this.down) throw new Error('Redis unavailable');
    return this.inner.take(key, rule, nowMs, cost);
  }
}

const OPTIONS = { chunkFraction: 0.02, holdMs: 1_000 };
const nodes = (shared: SharedBucket, n: number) => Array.from({ length: n }, () => new PrefetchRateLimiter(shared, OPTIONS));

describe('PrefetchRateLimiter', () => {
  it('should never let nodes sharing a bucket admit more than it holds, and admit at least 90 % of it', async () => {
    const rule = { rate: 100, burst: 2_000 };
    const shared = new SharedBucket();
    const three = nodes(shared, 3);
    // 6,000 concurrent requests at one instant, spread over three nodes: no refill, the burst alone.
    const decisions = await Promise.all(Array.from({ length: 6_000 }, (_, i) => three[i % 3]!.take('team', rule, 1_000_000)));
    const admitted = decisions.filter((d) => d.allowed).length;
    assert.ok(admitted <= 2_000, `admitted ${admitted} of a 2,000 burst`);
    assert.ok(admitted >= 1_800, `admitted ${admitted}, under 90 % of the burst`);
    assert.ok(shared.takes < 6_000 / 5, `${shared.takes} takes reached the shared bucket for 6,000 requests`);
  });

  it('should keep a sustained load within 90–100 % of the rate, across three nodes, over time', async () => {
    const rule = { rate: 500, burst: 1_000 };
    const shared = new SharedBucket();
    const three = nodes(shared, 3);
    let admitted = 0;
    // 10 s at 3,000 requests/s (6 times the rate), one request every 1/3 ms, round-robin over the nodes.
    for (let i = 0; i < 30_000; i++) if ((await three[i % 3]!.take('team', rule, 1_000_000 + i / 3)).allowed) admitted++;
    const allowed = rule.burst + rule.rate * 10;
    assert.ok(admitted <= allowed, `admitted ${admitted}, one bucket allows ${allowed}`);
    assert.ok(admitted >= 0.9 * allowed, `admitted ${admitted}, under 90 % of ${allowed}`);
    // Over the limit, a node asks the shared bucket about once per token it refills, not per request.
    assert.ok(shared.takes < 3 * allowed, `${shared.takes} shared takes for 30,000 requests, ${admitted} admitted`);
  });

  it('should reach the shared bucket about once per chunk under the limit', async () => {
    const rule = { rate: 10_000, burst: 20_000 };
    const shared = new SharedBucket();
    const three = nodes(shared, 3);
    let admitted = 0;
    for (let i = 0; i < 30_000; i++) if ((await three[i % 3]!.take('team', rule, 1_000_000 + i / 3)).allowed) admitted++;
    assert.equal(admitted, 30_000);
    // Chunks of 400: 75 would do; a refill in flight when tokens ran short adds a few.
    assert.ok(shared.takes <= 120, `${shared.takes} shared takes for 30,000 requests`);
  });

  it('should answer as the bucket does: RateLimit numbers near the truth, and Retry-After when refused', async () => {
    const rule = { rate: 1, burst: 100 };
    const limiter = new PrefetchRateLimiter(new SharedBucket(), OPTIONS);
    const first = await limiter.take('team', rule, 0);
    assert.deepEqual([first.allowed, first.limit, first.remaining], [true, 100, 99]);
    let last = first;
    for (let i = 0; i < 120 && last.allowed; i++) last = await limiter.take('team', rule, 0);
    assert.equal(last.allowed, false);
    assert.equal(last.retryAfterSeconds, 1);
  });

  it('should refuse (the shared fault, a 503) once its tokens are spent while the shared bucket cannot be reached', async () => {
    const rule = { rate: 10, burst: 500 };
    const shared = new SharedBucket();
    const limiter = new PrefetchRateLimiter(shared, OPTIONS);
    assert.equal((await limiter.take('team', rule, 0)).allowed, true);
    shared.down = true;
    let served = 0;
    let error: unknown;
    for (let i = 0; i < 50 && !error; i++) {
      try {
        await limiter.take('team', rule, 1);
        served++;
      } catch (e) {
        error = e;
      }
    }
    assert.match(String(error), /Redis unavailable/);
    assert.ok(served < 20, `served ${served} from the tokens it held`);
  });
});
