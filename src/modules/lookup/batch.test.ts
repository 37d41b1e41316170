import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchCost, planBatch } from './batch.ts';

describe('batchCost', () => {
  it('should charge ceil(n × 0.9)', () => {
    assert.equal(batchCost(100), 90);
    assert.equal(batchCost(1000), 900);
    assert.equal(batchCost(1), 1);
    assert.equal(batchCost(10), 9);
    assert.equal(batchCost(11), 10);
    assert.equal(batchCost(0), 0);
    // 0.9 × 30 is 27.000000000000004 in floating point; the charge must still be 27.
    assert.equal(batchCost(30), 27);
  });
});

describe('planBatch', () => {
  it('should keep unique valid addresses in first-appearance order and list invalid inputs once', () => {
    const plan = planBatch(['8.8.8.8', 'nope', '2001:DB8::1', '::ffff:8.8.8.8', '1.1.1.1', 'nope', '2001:db8:0::1', '300.1.1.1']);
    assert.deepEqual(
      plan.addresses.map((a) => a.text),
      ['8.8.8.8', '2001:db8::1', '1.1.1.1'],
    );
    assert.deepEqual(plan.invalid, ['nope', '300.1.1.1']);
    assert.equal(plan.cost, 3);
  });
});
