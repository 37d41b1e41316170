import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freezeWithJson, RECORD_JSON, recordJson } from './record-json.ts';
import { answeredLocation, networkRecord } from '../modules/lookup/honest-location.ts';
import type { LocationRecord } from '../modules/lookup/ip-dataset.ts';

const BERLIN: LocationRecord = {
  country: 'DE',
  state: 'Berlin',
  city: 'Berlin',
  timezone: 'Europe/Berlin',
  latitude: 52.52,
  longitude: 13.405,
  geo_hash: 'u33dc0',
};

describe('records carrying their JSON', () => {
  it('keeps the JSON of the members alone, whether the literal has a slot for it or not', () => {
    const slotted = freezeWithJson({ a: 1, b: 'é"', c: null, [RECORD_JSON]: undefined });
    const plain = freezeWithJson({ a: 1, b: 'é"', c: null });
    for (const r of [slotted, plain]) {
      assert.equal(recordJson(r), '{"a":1,"b":"é\\"","c":null}');
      assert.ok(Object.isFrozen(r));
    }
  });

  it('is seen by no copy or comparison of the record: not enumerable, not spread, not compared', () => {
    const slotted = freezeWithJson({ a: 1, [RECORD_JSON]: undefined });
    assert.equal(Object.prototype.propertyIsEnumerable.call(slotted, RECORD_JSON), false);
    assert.deepEqual(Object.keys(slotted), ['a']);
    assert.equal(recordJson({ ...slotted }), undefined, 'a spread copy may differ, so it carries no JSON');
    assert.deepStrictEqual(slotted, { a: 1 });
    assert.equal(JSON.stringify(slotted), '{"a":1}');
  });

  it('is made with every network and location answer, in their schema order, as nothing else sees it', () => {
    const net = networkRecord(
      {
        asn: 4_200_000_001,
        isp: 'Example',
        type: 'RESIDENTIAL',
        org: 'Example Org',
        domain: 'example.net',
        abuse_email: '',
        abuse_phone: '',
      },
      false,
      true,
    );
    assert.equal(
      recordJson(net),
      '{"asn":4200000001,"isp":"Example","type":"RESIDENTIAL","org":"Example Org","domain":"example.net","abuse_email":"","abuse_phone":"","bogon":false,"anycast":true}',
    );
    assert.deepStrictEqual(Object.keys(net), ['asn', 'isp', 'type', 'org', 'domain', 'abuse_email', 'abuse_phone', 'bogon', 'anycast']);
    const loc = answeredLocation(BERLIN);
    assert.equal(recordJson(loc), JSON.stringify({ ...loc }));
    assert.equal(
      recordJson(loc),
      '{"country":"DE","state":"Berlin","city":"Berlin","timezone":"Europe/Berlin","latitude":52.52,"longitude":13.405,"geo_hash":"u33dc0","precision":"city","accuracy_radius_km":50}',
    );
    assert.equal(Object.prototype.propertyIsEnumerable.call(loc, RECORD_JSON), false);
  });
});
