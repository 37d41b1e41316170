import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COUNTER_KEEP, COUNTER_LIMIT, bumpKeyDay, topCounts, topInWindow, trimKeyDays, type KeyDays } from './top-counts.ts';

const DAY = 20_000;
const total = (counts: KeyDays<string>, key: string) => topInWindow(counts, 0, Infinity, COUNTER_LIMIT).find(([k]) => k === key)?.[1];

describe('bumpKeyDay', () => {
  it('should keep counts exact up to the limit, then keep the heavy keys', () => {
    const counts: KeyDays<string> = new Map();
    for (let i = 0; i < 50; i++) bumpKeyDay(counts, 'heavy', DAY + (i % 3), DAY - 31);
    for (let i = 0; i < COUNTER_LIMIT - 1; i++) bumpKeyDay(counts, `k${i}`, DAY, DAY - 31);
    assert.equal(counts.size, COUNTER_LIMIT);
    bumpKeyDay(counts, 'one-too-many', DAY, DAY - 31);
    assert.equal(counts.size, COUNTER_KEEP + 1);
    assert.equal(total(counts, 'heavy'), 50);
    assert.equal(total(counts, 'one-too-many'), 1);
  });

  it('should count per day, late days included, and forget days before the ring', () => {
    const counts: KeyDays<string> = new Map();
    for (const d of [DAY, DAY + 2, DAY + 1, DAY + 2, DAY]) bumpKeyDay(counts, 'k', d, DAY - 31);
    assert.deepEqual(topInWindow(counts, DAY + 1, DAY + 3, 10), [['k', 3]]);
    assert.deepEqual(topInWindow(counts, DAY, DAY + 1, 10), [['k', 2]]);
    trimKeyDays(counts, DAY + 1);
    assert.deepEqual(topInWindow(counts, 0, Infinity, 10), [['k', 3]]);
    trimKeyDays(counts, DAY + 3);
    assert.equal(counts.size, 0);
  });
});

describe('topCounts', () => {
  it('should rank by count, then key, and cap', () => {
    const counts = new Map<number, number>([
      [10, 1],
      [2, 1],
      [443, 5],
      [1, 1],
      [80, 5],
    ]);
    assert.deepEqual(topCounts(counts, 4), [
      [80, 5],
      [443, 5],
      [1, 1],
      [2, 1],
    ]);
    assert.deepEqual(topCounts(new Map(), 10), []);
  });
});
