import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MethodDefinition } from '@grpc/proto-loader';
import { packageDefinition, protoRoot, SERVICE_NAME } from '../proto.ts';
import { frozenPartsEncoder } from './frozen-parts-encoder.ts';

// The bytes must be those of proto-loader's serializer (what grpc-js sent before), whether a part
// comes from the cache or not; parity.test.ts checks the decoded answers against HTTP.
const serializer = (packageDefinition()[SERVICE_NAME] as Record<string, MethodDefinition<object, object>>).LookupIP!.responseSerialize;
const encode = frozenPartsEncoder(protoRoot().lookupType('example.v1.IPLookupResult'), ['network', 'location', 'intelligence']);

const network = Object.freeze({
  asn: 15169,
  isp: 'Google LLC',
  type: 'DATACENTER',
  org: 'Google LLC',
  domain: null,
  bogon: false,
  anycast: true,
});
const location = Object.freeze({
  country: 'US',
  state: '',
  city: 'Mountain View',
  timezone: '',
  latitude: 37.4,
  longitude: null,
  precision: 'city',
});
const intelligence = {
  risk_score: 15,
  behavior: ['scanner'],
  categories: [],
  devices: [{ os: 'linux', last_seen: { seconds: 1_779_818_967, nanos: 0 } }],
  providers: [],
};

describe(frozenPartsEncoder.name, () => {
  it("should write the serializer's bytes, from the cache too, with fields before, between and after the kept parts", () => {
    const answers = [
      { ip: '8.8.8.8', network, location, intelligence },
      { ip: '8.8.4.4', network, location, intelligence: { ...intelligence, risk_score: 0 } },
      {
        ip: '2002:808:808::1',
        embedded_ipv4: { ip: '8.8.8.8', kind: '6to4' },
        network,
        location,
        intelligence,
        evidence: { risk: { score: 3 } },
      },
      // Not frozen: encoded anew every time, never kept.
      { ip: '1.1.1.1', network: { ...network, asn: 13335 }, location: { ...location }, intelligence },
      { ip: '10.0.0.1', intelligence },
      // The address written as a string run: empty, outside ASCII, long enough for a two-byte length.
      { ip: '', network, location, intelligence },
      { ip: 'Łódź ✓ \u0000', network, location, intelligence },
      { ip: 'x'.repeat(300), network },
      { network, location, intelligence: Object.freeze({ ...intelligence }) },
      { ip: null, network, evidence: null },
    ];
    for (let round = 0; round < 2; round++) for (const a of answers) assert.deepEqual(encode(a), serializer(a), `${a.ip}, round ${round}`);
  });

  it('should keep a frozen part once and give the same bytes for it again', () => {
    const a = encode({ ip: '8.8.8.8', network, location, intelligence });
    const b = encode({ ip: '8.8.8.8', network, location, intelligence });
    assert.deepEqual(a, b);
    assert.notEqual(a, b);
  });
});
