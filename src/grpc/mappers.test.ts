import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MethodDefinition } from '@grpc/proto-loader';
import { FEEDS } from '../modules/feeds/feed-catalog.ts';
import type { Evidence } from '../modules/lookup/intelligence.ts';
import type { IpResult } from '../modules/lookup/lookup-service.ts';
import { evidenceSourceToProto, feedRecordToProto, ipResultToProto, toStruct, toTimestamp, toValue } from './mappers.ts';
import { packageDefinition, protoRoot, SERVICE_NAME } from '../proto.ts';

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
    const out = feedRecordToProto(FEEDS.honeypot_https, {
      timestamp: 1_779_818_967_250,
      meta: { pool_id: 'eu' },
      details: null,
      domain: 'x.test',
    });
    assert.deepEqual(out.timestamp, { seconds: 1_779_818_967, nanos: 250_000_000 });
    assert.deepEqual(out.meta, { pool_id: { string_value: 'eu' } });
    assert.equal(out.details, undefined);
    assert.equal(out.domain, 'x.test');
  });
});

const S = 1_795_000_000;
const feedSource = { source: 'feed', feed: 'honeypot_http', first_seen: S - 3600, last_seen: S, count: 2 } as const;
const listSource = {
  source: 'list',
  kind: 'TOR_NODE',
  provider: 'TOR',
  version: '0123456789abcdef',
  format: 'tor-bulk-exit-list',
  imported_at: S - 60,
  published_at: S - 7200,
  published_from: 'content',
  state: 'current',
  strength: 1,
  first_seen: S - 7200,
  last_seen: S - 7200,
  count: 1,
} as const;
const overlaySource = { source: 'overlay', action: 'deny', cidr: '185.220.101.0/24', created_at: S - 10 } as const;

describe(evidenceSourceToProto.name, () => {
  it('should turn exactly the instants each kind of source has into Timestamps, leaving the members it lacks unset', () => {
    assert.deepEqual(evidenceSourceToProto(feedSource), {
      ...feedSource,
      first_seen: { seconds: S - 3600, nanos: 0 },
      last_seen: { seconds: S, nanos: 0 },
    });
    assert.deepEqual(evidenceSourceToProto(listSource), {
      ...listSource,
      imported_at: { seconds: S - 60, nanos: 0 },
      published_at: { seconds: S - 7200, nanos: 0 },
      first_seen: { seconds: S - 7200, nanos: 0 },
      last_seen: { seconds: S - 7200, nanos: 0 },
    });
    assert.deepEqual(evidenceSourceToProto(overlaySource), { ...overlaySource, created_at: { seconds: S - 10, nanos: 0 } });
  });
});

describe(ipResultToProto.name, () => {
  const serialize = (packageDefinition()[SERVICE_NAME] as Record<string, MethodDefinition<unknown, unknown>>).LookupIP!.responseSerialize;
  const IPLookupResult = protoRoot().lookupType('example.v1.IPLookupResult');
  /** Through the server's own serializer, decoded as a client would (unset members absent). */
  const wire = (r: IpResult) =>
    IPLookupResult.toObject(IPLookupResult.decode(serialize(ipResultToProto(r))), { longs: Number }) as Record<string, any>;
  const base: IpResult = {
    ip: '185.220.101.1',
    network: {
      asn: 4294967294,
      isp: 'Tor',
      type: 'DATACENTER',
      org: null,
      domain: null,
      abuse_email: null,
      abuse_phone: null,
      bogon: false,
      anycast: false,
    },
    location: {
      country: 'DE',
      state: '',
      city: '',
      timezone: '',
      latitude: null,
      longitude: null,
      geo_hash: '',
      precision: 'country',
      accuracy_radius_km: null,
    },
    intelligence: {
      risk_score: 74,
      behavior: ['MALICIOUS_TRAFFIC'],
      categories: ['TOR_NODE'],
      devices: [{ os: 'WINDOWS', version: '10', last_seen: S }],
      providers: [{ provider: 'TOR', type: 'TOR_NODE', last_seen: S - 60 }],
    },
  };
  const evidence: Evidence = {
    categories: [{ category: 'TOR_NODE', sources: [listSource, overlaySource] }],
    providers: [{ provider: 'TOR', type: 'TOR_NODE', sources: [listSource] }],
    behavior: [{ behavior: 'MALICIOUS_TRAFFIC', sources: [feedSource] }],
    devices: [{ os: 'WINDOWS', version: '10', sources: [feedSource] }],
    risk: {
      score: 74,
      prior: { value: 15, from: 'DATACENTER' },
      category: { value: 60, from: 'TOR_NODE' },
      behavior: { value: 80, from: null },
      volume: { value: 0.66, observations: 2 },
      diversity: { value: 1.15, behaviors: 2 },
      shared: { value: 0.6, from: 'TOR_NODE' },
      evidence: 36.29,
      benign_cap: false,
    },
  };

  it('should leave evidence unset when the lookup did not explain', () => {
    const out = wire(base);
    assert.equal(out.evidence, undefined);
    assert.deepEqual(out.intelligence.devices, [{ os: 'WINDOWS', version: '10', last_seen: { seconds: S, nanos: 0 } }]);
  });

  it('should send the location precision, the bogon and anycast flags, and the carried IPv4 address', () => {
    const out = wire({
      ...base,
      ip: '2002:b9dc:6501::1',
      embedded_ipv4: { ip: '185.220.101.1', via: '6to4' },
      network: { ...base.network, anycast: true },
      location: { ...base.location, city: 'Berlin', latitude: 52.52, longitude: 13.405, precision: 'city', accuracy_radius_km: 50 },
    });
    assert.deepEqual(out.embedded_ipv4, { ip: '185.220.101.1', via: '6to4' });
    assert.deepEqual([out.network.bogon, out.network.anycast], [false, true]);
    assert.deepEqual([out.location.precision, out.location.accuracy_radius_km], ['city', 50]);
    // A null radius is unset, as every null member is.
    const coarse = wire(base);
    assert.deepEqual(
      [coarse.location.precision, coarse.location.accuracy_radius_km, coarse.embedded_ipv4],
      ['country', undefined, undefined],
    );
  });

  it('should send the evidence whole: every source kind, instants as the same seconds, a null `from` unset', () => {
    const ts = (seconds: number) => ({ seconds, nanos: 0 });
    const feed = { source: 'feed', feed: 'honeypot_http', first_seen: ts(S - 3600), last_seen: ts(S), count: 2 };
    const list = {
      source: 'list',
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      format: 'tor-bulk-exit-list',
      imported_at: ts(S - 60),
      published_at: ts(S - 7200),
      published_from: 'content',
      state: 'current',
      strength: 1,
      first_seen: ts(S - 7200),
      last_seen: ts(S - 7200),
      count: 1,
    };
    const overlay = { source: 'overlay', action: 'deny', cidr: '185.220.101.0/24', created_at: ts(S - 10) };
    assert.deepEqual(wire({ ...base, evidence }).evidence, {
      categories: [{ category: 'TOR_NODE', sources: [list, overlay] }],
      providers: [{ provider: 'TOR', type: 'TOR_NODE', sources: [list] }],
      behavior: [{ behavior: 'MALICIOUS_TRAFFIC', sources: [feed] }],
      devices: [{ os: 'WINDOWS', version: '10', sources: [feed] }],
      risk: {
        score: 74,
        prior: { value: 15, from: 'DATACENTER' },
        category: { value: 60, from: 'TOR_NODE' },
        behavior: { value: 80 },
        volume: { value: 0.66, observations: 2 },
        diversity: { value: 1.15, behaviors: 2 },
        shared: { value: 0.6, from: 'TOR_NODE' },
        evidence: 36.29,
        benign_cap: false,
      },
    });
    assert.equal(
      wire({ ...base, evidence: { ...evidence, risk: { ...evidence.risk, score: 5, benign_cap: true } } }).evidence.risk.benign_cap,
      true,
    );
  });
});
