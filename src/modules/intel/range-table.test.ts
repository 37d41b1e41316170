import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { find4, find6, NONE, V4TableBuilder, V6TableBuilder } from './range-table.ts';

describe(V4TableBuilder.name, () => {
  it('should answer exact edges, gaps, merged neighbours and clipped overlaps', () => {
    const b = new V4TableBuilder();
    b.add(10, 19, 1);
    b.add(20, 29, 1); // merges with the previous
    b.add(40, 49, 2);
    b.add(45, 60, 3); // overlap clipped to 50..60
    b.add(0xfffffff0, 0xffffffff, 4);
    const { starts, vals } = b.finish();
    const at = (ip: number) => find4(starts, vals, ip);
    assert.deepEqual([at(0), at(9), at(10), at(29), at(30), at(39), at(40), at(49), at(50), at(60), at(61)], [NONE, NONE, 1, 1, NONE, NONE, 2, 2, 3, 3, NONE]);
    assert.equal(at(0xffffffff), 4);
    assert.equal(at(0xffffffef), NONE);
    assert.equal(starts.length, 7);
  });
});

describe(V6TableBuilder.name, () => {
  it('should answer edges across word boundaries and the top of the space', () => {
    const w = (a: number, b: number, c: number, d: number) => new Uint32Array([a, b, c, d]);
    const b = new V6TableBuilder();
    b.add(w(0x20010db8, 0, 0, 0), w(0x20010db8, 0, 0xffffffff, 0xffffffff), 7);
    b.add(w(0x20010db8, 1, 0, 0), w(0x20010db8, 1, 0, 0), 8);
    b.add(w(0xffffffff, 0xffffffff, 0xffffffff, 0), w(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), 9);
    const { starts, vals } = b.finish();
    const at = (ip: Uint32Array) => find6(starts, vals, ip);
    assert.equal(at(w(0x20010db7, 0xffffffff, 0xffffffff, 0xffffffff)), NONE);
    assert.equal(at(w(0x20010db8, 0, 0, 0)), 7);
    assert.equal(at(w(0x20010db8, 0, 0xffffffff, 0xffffffff)), 7);
    assert.equal(at(w(0x20010db8, 1, 0, 0)), 8);
    assert.equal(at(w(0x20010db8, 1, 0, 1)), NONE);
    assert.equal(at(w(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff)), 9);
    assert.equal(at(w(0, 0, 0, 1)), NONE);
  });
});
