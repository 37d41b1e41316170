import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FEEDS } from '../modules/feeds/feed-catalog.ts';
import { feedRecordToProto, toStruct, toTimestamp, toValue } from './mappers.ts';

describe(toTimestamp.name, () => {
  it('should denote the same instant: seconds as they are, milliseconds split into seconds and nanos', () => {
    assert.deepEqual(toTimestamp(1_779_818_967), { seconds: 1_779_818_967, nanos: 0 });
    assert.deepEqual(toTimestamp(1_779_818_967_123, 'ms'), { seconds: 1_779_818_967, nanos: 123_000_000 });
    assert.deepEqual(toTimestamp(1_779_818_967_000, 'ms'), { seconds: 1_779_818_967, nanos: 0 });
    // Before the epoch the nanos stay non-negative, as the Timestamp type requires.
    assert.deepEqual(toTimestamp(-1, 'ms'), { seconds: -1, nanos: 999_000_000 });
  });
});

describe(toValue.name, () => {
  it('should encode every JSON kind as google.protobuf.Value', () => {
    assert.deepEqual(toValue(7), { number_value: 7 });
    assert.deepEqual(toValue('p-1'), { string_value: 'p-1' });
    assert.deepEqual(toValue(null), { null_value: 'NULL_VALUE' });
    assert.deepEqual(toValue([true]), { list_value: { values: [{ bool_value: true }] } });
    assert.deepEqual(toStruct({ a: { b: 1 } }), { fields: { a: { struct_value: { fields: { b: { number_value: 1 } } } } } });
  });
});

describe(feedRecordToProto.name, () => {
  it('should turn the honeypot millisecond timestamp into a Timestamp and a null ClientHello into an unset field', () => {
    const out = feedRecordToProto(FEEDS.honeypot_https, { timestamp: 1_779_818_967_250, meta: { pool_id: 'eu' }, details: null, domain: 'x.test' });
    assert.deepEqual(out.timestamp, { seconds: 1_779_818_967, nanos: 250_000_000 });
    assert.deepEqual(out.meta, { pool_id: { string_value: 'eu' } });
    assert.equal(out.details, undefined);
    assert.equal(out.domain, 'x.test');
  });
});
