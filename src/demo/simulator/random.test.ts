import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32, randomBits, seedFrom, weighted } from './random.ts';

describe('mulberry32', () => {
  it('should repeat the same sequence for the same seed and stay in [0, 1)', () => {
    const a = mulberry32(123);
    const b = mulberry32(123);
    for (let i = 0; i < 1000; i++) {
      const x = a();
      assert.equal(x, b());
      assert.ok(x >= 0 && x < 1);
    }
    assert.notEqual(mulberry32(1)(), mulberry32(2)());
  });
});

describe('seedFrom', () => {
  it('should give a stable unsigned 32-bit seed per label', () => {
    assert.equal(seedFrom('BRIGHTDATA'), seedFrom('BRIGHTDATA'));
    assert.notEqual(seedFrom('BRIGHTDATA'), seedFrom('OXYLABS'));
    assert.ok(Number.isInteger(seedFrom('x')) && seedFrom('x') >= 0 && seedFrom('x') < 2 ** 32);
  });
});

describe('weighted', () => {
  it('should never pick a zero-weight entry and roughly follow the weights', () => {
    const rng = mulberry32(9);
    const counts = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 10_000; i++)
      counts[
        weighted(rng, [
          ['a', 3],
          ['b', 1],
          ['c', 0],
        ] as const)
      ]++;
    assert.equal(counts.c, 0);
    assert.ok(counts.a > 2 * counts.b && counts.a < 4 * counts.b);
  });
});

describe('randomBits', () => {
  it('should stay below 2^bits', () => {
    const rng = mulberry32(5);
    for (const bits of [1, 8, 31, 32, 33, 64, 100]) for (let i = 0; i < 200; i++) assert.ok(randomBits(rng, bits) < 1n << BigInt(bits));
  });
});
