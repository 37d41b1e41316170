import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bencode } from './bencode.ts';

describe('bencode', () => {
  it('should encode BEP 3 examples', () => {
    assert.equal(bencode('spam').toString(), '4:spam');
    assert.equal(bencode(3).toString(), 'i3e');
    assert.equal(bencode(-3).toString(), 'i-3e');
    assert.equal(bencode(['spam', 'eggs']).toString(), 'l4:spam4:eggse');
    assert.equal(bencode({ spam: 'eggs', cow: 'moo' }).toString(), 'd3:cow3:moo4:spam4:eggse');
  });

  it('should count string lengths in UTF-8 bytes and sort keys as bytes', () => {
    assert.equal(bencode('né').toString(), '3:né');
    assert.equal(bencode({ b: 1, 'piece length': 2, a: 3 }).toString(), 'd1:ai3e1:bi1e12:piece lengthi2ee');
    assert.equal(bencode(6_203_355_136).toString(), 'i6203355136e');
  });

  it('should refuse non-integers', () => {
    assert.throws(() => bencode(1.5));
  });
});
