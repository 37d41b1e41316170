import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COUNTER_KEEP, COUNTER_LIMIT, bump, topCounts } from './top-counts.ts';

describe('bump', () => {
  it('should keep counts exact up to the limit, then keep the heavy keys', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 50; i++) bump(counts, 'heavy');
    for (let i = 0; i < COUNTER_LIMIT - 1; i++) bump(counts, `k${i}`);
    assert.equal(counts.size, COUNTER_LIMIT);
    bump(counts, 'one-too-many');
    assert.equal(counts.size, COUNTER_KEEP + 1);
    assert.equal(counts.get('heavy'), 50);
    assert.equal(counts.get('one-too-many'), 1);
  });
});

describe('topCounts', () => {
  it('should rank by count, then key, and cap', () => {
    const counts = new Map<number, number>([[10, 1], [2, 1], [443, 5], [1, 1], [80, 5]]);
    assert.deepEqual(topCounts(counts, 4), [[80, 5], [443, 5], [1, 1], [2, 1]]);
    assert.deepEqual(topCounts(new Map(), 10), []);
  });
});
