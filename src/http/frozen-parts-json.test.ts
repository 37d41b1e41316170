import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Type, type TSchema } from 'typebox';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type LocationRecord, type NetworkRecord } from '../modules/lookup/ip-dataset.ts';
import { NO_INTELLIGENCE, type Intelligence } from '../modules/lookup/intelligence.ts';
import { batchSerializer, frozenPartsSerializer, frozenPartsWriter, JsonWriter, type Serialize } from './frozen-parts-json.ts';
import { BatchResult, IpResult, Location, Network, Intelligence as IntelligenceSchema } from './schemas.ts';
import { recordJson } from '../lib/record-json.ts';
import { answeredLocation, HonestLocations, networkRecord, NO_LOCATION } from '../modules/lookup/honest-location.ts';
import { priorOnly } from '../modules/intel/engine/intel-compose.ts';
import { NETWORK_PRIOR } from '../modules/intel/engine/risk-score.ts';
import { loadDataset } from '../modules/dataset/dataset-reader.ts';
import { parseIp } from '../lib/ip-address.ts';
import { ensureRealDataset } from '../../test/helpers/test-dataset.ts';

/** fastify's own serializer compiler (fast-json-stringify), as the fast path gets it, and the route's serializer of IpResult by $ref. */
async function compilers(): Promise<{ compile: (schema: TSchema) => Serialize; whole: Serialize }> {
  const app = Fastify();
  app.addSchema(IpResult);
  app.get('/x', { schema: { response: { 200: Type.Ref('IpResult') } } }, async () => ({}));
  await app.ready();
  const compiler = app.serializerCompiler!;
  const compile = (schema: TSchema) => compiler({ schema, method: 'GET', url: '/x', httpStatus: '200' }) as Serialize;
  const whole = compile(Type.Ref('IpResult'));
  await app.close();
  return { compile, whole };
}

const network = (over: Partial<NetworkRecord> = {}): NetworkRecord =>
  Object.freeze({
    asn: 15169,
    isp: 'Google LLC',
    type: 'DATACENTER',
    org: null,
    domain: null,
    abuse_email: null,
    abuse_phone: null,
    ...over,
  });
const location = (over: Partial<LocationRecord> = {}): LocationRecord =>
  Object.freeze({
    country: 'US',
    state: 'California',
    city: 'Mountain View',
    timezone: 'America/Los_Angeles',
    latitude: 37.422,
    longitude: -122.085,
    geo_hash: '9q9hvuk',
    ...over,
  });

const NETWORKS: NetworkRecord[] = [
  network(),
  UNKNOWN_NETWORK,
  network({
    asn: 4294967294,
    isp: 'Quote " and backslash \\ and tab \t',
    org: 'Ünïcode Örg',
    domain: 'example.com',
    abuse_email: 'abuse@example.com',
    abuse_phone: '+1 555 0100',
  }),
  network({ isp: 'lone surrogate \ud800 and emoji 🛰️', type: 'SATELLITE' }),
  { ...network(), isp: 'not frozen' },
  // The answered members (honest-location.ts): optional in the schema.
  Object.freeze({ ...network(), bogon: false, anycast: true }),
  Object.freeze({ ...UNKNOWN_NETWORK, bogon: true, anycast: false }),
];
const LOCATIONS: LocationRecord[] = [
  location(),
  EMPTY_LOCATION,
  location({ latitude: null, longitude: null, city: 'São Paulo', state: 'São Paulo', country: 'BR' }),
  { ...location(), city: 'not frozen' },
  Object.freeze({ ...location(), precision: 'city', accuracy_radius_km: 50 }),
  Object.freeze({ ...EMPTY_LOCATION, country: 'US', precision: 'country', accuracy_radius_km: null }),
];
const INTELLIGENCE: Intelligence[] = [
  NO_INTELLIGENCE,
  {
    risk_score: 87,
    behavior: ['TOR_EXIT'],
    categories: ['ANONYMIZER', 'PROXY'],
    devices: [{ os: 'Linux', version: '5.x', last_seen: 1_700_000_000 }],
    providers: [{ provider: 'tor', type: 'TOR', last_seen: 1_700_000_001 }],
  },
];
const EVIDENCE = {
  categories: [{ category: 'PROXY', sources: [{ source: 'feed', feed: 'proxies', first_seen: 1, last_seen: 2, count: 3 }] }],
  providers: [],
  behavior: [],
  devices: [],
  risk: {
    score: 87,
    prior: { value: 15, from: 'DATACENTER' },
    category: { value: 60, from: 'PROXY' },
    behavior: { value: 0, from: null },
    volume: { value: 0.5, observations: 3 },
    diversity: { value: 1, behaviors: 0 },
    shared: { value: 0.6, from: 'PROXY' },
    evidence: 0,
    benign_cap: false,
  },
};

describe(frozenPartsSerializer.name, () => {
  it("should write the very bytes of the route's own serializer, the first time and from its cache", async () => {
    const { compile, whole } = await compilers();
    const serialize = frozenPartsSerializer(IpResult, compile, whole);
    let compared = 0;
    for (const ip of ['8.8.8.8', '2001:4860:4860::8888', 'odd "text"'])
      for (const n of NETWORKS)
        for (const l of LOCATIONS)
          for (const intelligence of INTELLIGENCE)
            for (const evidence of [undefined, EVIDENCE]) {
              const body =
                evidence === undefined
                  ? { ip, network: n, location: l, intelligence }
                  : { ip, network: n, location: l, intelligence, evidence };
              const expected = whole(body);
              assert.equal(serialize(body), expected);
              assert.equal(serialize(body), expected, 'again, with the records now kept');
              assert.deepEqual(JSON.parse(expected).network, n);
              compared++;
            }
    assert.equal(compared, 3 * NETWORKS.length * LOCATIONS.length * INTELLIGENCE.length * 2);
    // The carried IPv4 address of a 6to4 address, with and without evidence.
    for (const evidence of [undefined, EVIDENCE]) {
      const carried = {
        ip: '2002:808:808::1',
        network: NETWORKS[5]!,
        location: LOCATIONS[5]!,
        intelligence: NO_INTELLIGENCE,
        embedded_ipv4: { ip: '8.8.8.8', via: '6to4' },
        evidence,
      };
      assert.equal(serialize(carried), whole(carried));
      assert.match(serialize(carried), /"embedded_ipv4":\{"ip":"8.8.8.8","via":"6to4"\}/);
    }
    // An evidence member present but undefined is left out, members outside the schema are not sent.
    const body = {
      ip: '1.1.1.1',
      network: network(),
      location: location(),
      intelligence: NO_INTELLIGENCE,
      evidence: undefined,
      secret: 'x',
    };
    assert.equal(serialize(body), whole(body));
    assert.doesNotMatch(serialize(body), /secret|evidence/);
  });

  it('should fail as the route serializer fails when a required member is missing or of the wrong kind', async () => {
    const { compile, whole } = await compilers();
    const serialize = frozenPartsSerializer(IpResult, compile, whole);
    const missing = { ip: '1.1.1.1', location: location(), intelligence: NO_INTELLIGENCE };
    assert.throws(() => whole(missing));
    assert.throws(() => serialize(missing), /network/);
    const notAnObject = { ip: '1.1.1.1', network: 'AS15169', location: location(), intelligence: NO_INTELLIGENCE };
    assert.throws(() => whole(notAnObject), /"asn" is required/);
    assert.throws(() => serialize(notAnObject), /"asn" is required/);
  });

  it('should write a frozen record once, an unfrozen one every time, and empty a full cache', async () => {
    const { compile, whole } = await compilers();
    const calls = { network: 0, location: 0 };
    const counting = (schema: TSchema): Serialize => {
      const inner = compile(schema);
      const member = schema === Network ? 'network' : schema === Location ? 'location' : undefined;
      return member === undefined
        ? inner
        : (v) => {
            calls[member]++;
            return inner(v);
          };
    };
    const serialize = frozenPartsSerializer(IpResult, counting, whole, 2);
    const body = (n: NetworkRecord, l: LocationRecord = EMPTY_LOCATION) => ({
      ip: '1.1.1.1',
      network: n,
      location: l,
      intelligence: NO_INTELLIGENCE,
    });

    const [a, b, c] = [network({ asn: 1 }), network({ asn: 2 }), network({ asn: 3 })];
    serialize(body(a));
    serialize(body(a));
    assert.deepEqual(calls, { network: 1, location: 1 });
    serialize(body(b));
    assert.equal(calls.network, 2);
    // Full (capacity 2): c empties the cache, so a is written again, and then kept.
    serialize(body(c));
    serialize(body(a));
    serialize(body(a));
    assert.equal(calls.network, 4);

    const open = { ...network(), isp: 'Before' };
    assert.match(serialize(body(open)), /"isp":"Before"/);
    open.isp = 'After';
    assert.match(serialize(body(open)), /"isp":"After"/);
    assert.equal(calls.network, 6);
    assert.equal(calls.location, 1, 'EMPTY_LOCATION (frozen) was written once');
  });

  it('should write a record that carries its JSON as it carries it, with no member serializer and no cache', async () => {
    const { compile, whole } = await compilers();
    const calls = { network: 0, location: 0, intelligence: 0 };
    const counting = (schema: TSchema): Serialize => {
      const inner = compile(schema);
      const member =
        schema === Network ? 'network' : schema === Location ? 'location' : schema === IntelligenceSchema ? 'intelligence' : undefined;
      return member === undefined
        ? inner
        : (v) => {
            calls[member]++;
            return inner(v);
          };
    };
    const serialize = frozenPartsSerializer(IpResult, counting, whole, 1);
    const honest = new HonestLocations();
    const bodies = [
      {
        ip: '8.8.8.8',
        network: networkRecord(network(), false, true),
        location: honest.countryOnly('US'),
        intelligence: priorOnly('DATACENTER'),
      },
      { ip: '10.0.0.1', network: networkRecord(UNKNOWN_NETWORK, true, false), location: NO_LOCATION, intelligence: NO_INTELLIGENCE },
      {
        ip: '2.2.2.2',
        network: networkRecord(NETWORKS[2]!, false, false),
        location: honest.countryOnly('BR'),
        intelligence: NO_INTELLIGENCE,
      },
    ];
    for (const body of bodies) for (let k = 0; k < 3; k++) assert.equal(serialize(body), whole(body));
    assert.deepEqual(calls, { network: 0, location: 0, intelligence: 0 });
    // A place of the dataset, as answered, carries it too.
    const own = { ...bodies[0]!, location: answeredLocation(location()) };
    for (let k = 0; k < 3; k++) assert.equal(serialize(own), whole(own));
    assert.equal(recordJson(own.location), compile(Location)(own.location));
    assert.equal(calls.location, 0);
    // A frozen record made without it is written once, then kept.
    const bare = { ...bodies[0]!, location: Object.freeze({ ...own.location }) };
    for (let k = 0; k < 3; k++) assert.equal(serialize(bare), whole(bare));
    assert.equal(recordJson(bare.location), undefined);
    assert.equal(calls.location, 1);
    // A spread copy carries no JSON (it may differ): written by the member serializer.
    const changed = { ...bodies[0]!, network: { ...bodies[0]!.network, isp: 'Changed' } };
    assert.match(serialize(changed), /"isp":"Changed"/);
    assert.equal(calls.network, 1);
  });

  it("should find in every network and location record of the real dataset, their variants and the shared answers the JSON of the route's serializer", async () => {
    const { compile } = await compilers();
    const [net, loc, intel] = [compile(Network), compile(Location), compile(IntelligenceSchema)];
    const ds = loadDataset(await ensureRealDataset());
    const ranges = ds.ranges();
    const honest = new HonestLocations();
    const nets = new Set<object>();
    const locs = new Set<object>();
    for (let p = 0; p < ranges.pairCount; p++) {
      const n = ranges.network(p);
      if (n && !nets.has(n)) {
        nets.add(n);
        assert.equal(recordJson(n), net(n), `network record of pair ${p}`);
        // The honest variants of the record (a reserved block in its range, an anycast prefix).
        for (const [bogon, anycast] of [
          [true, false],
          [false, true],
          [false, false],
        ] as const) {
          const v = honest.network(n, bogon, anycast);
          assert.equal(recordJson(v), net(v));
        }
      }
      const l = ranges.location(p);
      if (l && !locs.has(l)) {
        locs.add(l);
        assert.equal(recordJson(l), loc(l), `location record of pair ${p}`);
        const c = honest.countryOnly(l.country);
        assert.equal(recordJson(c), loc(c));
      }
    }
    assert.ok(nets.size > 50_000 && locs.size > 300_000, `${nets.size} networks, ${locs.size} locations`);
    const unrouted = honest.answerNetwork(UNKNOWN_NETWORK, parseIp('10.0.0.1')!);
    for (const r of [unrouted, NO_LOCATION]) assert.equal(recordJson(r), (r === NO_LOCATION ? loc : net)(r));
    for (const type of [...Object.keys(NETWORK_PRIOR), 'UNKNOWN', undefined]) {
      const i = priorOnly(type);
      assert.equal(recordJson(i), intel(i), `prior-only intelligence of ${type}`);
    }
  });
});

describe(frozenPartsWriter.name, () => {
  /** The writer's bytes for one value, written after some bytes already in the buffer (as in a batch). */
  const written = (write: (w: JsonWriter, data: unknown) => void, data: unknown): Buffer => {
    const w = new JsonWriter(8);
    w.text('[');
    write(w, data);
    const out = w.done();
    assert.equal(out[0], 0x5b);
    return out.subarray(1);
  };

  it("should write the very bytes of the route's own serializer, the first time and from its cache", async () => {
    const { compile, whole } = await compilers();
    const write = frozenPartsWriter(IpResult, compile, whole);
    let compared = 0;
    for (const ip of ['8.8.8.8', '2001:4860:4860::8888', 'odd "text"', 'Łódź \u0001'])
      for (const n of NETWORKS)
        for (const l of LOCATIONS)
          for (const intelligence of INTELLIGENCE)
            for (const evidence of [undefined, EVIDENCE]) {
              const body =
                evidence === undefined
                  ? { ip, network: n, location: l, intelligence }
                  : { ip, network: n, location: l, intelligence, evidence };
              const expected = Buffer.from(whole(body), 'utf8');
              assert.deepEqual(written(write, body), expected);
              assert.deepEqual(written(write, body), expected, 'again, with the records now kept');
              compared++;
            }
    assert.equal(compared, 4 * NETWORKS.length * LOCATIONS.length * INTELLIGENCE.length * 2);
    const carried = { ip: '2002:808:808::1', network: NETWORKS[5]!, location: LOCATIONS[5]!, intelligence: NO_INTELLIGENCE };
    const withEmbedded = { ...carried, embedded_ipv4: { ip: '8.8.8.8', via: '6to4' } };
    assert.deepEqual(written(write, withEmbedded), Buffer.from(whole(withEmbedded)));
    const extra = { ...carried, evidence: undefined, secret: 'x' };
    assert.deepEqual(written(write, extra), Buffer.from(whole(extra)));
    // What the schema's serializer refuses, it refuses too, whatever it wrote of the value before.
    assert.throws(() => written(write, { ip: '1.1.1.1', location: location(), intelligence: NO_INTELLIGENCE }), /network/);
    assert.throws(() => written(write, { ...carried, intelligence: 'none' }));
  });

  it('should keep what the last two fills of its cache used, and write an unfrozen record every time', async () => {
    const { compile, whole } = await compilers();
    let calls = 0;
    const counting = (schema: TSchema): Serialize => {
      const inner = compile(schema);
      return schema === Network
        ? (v) => {
            calls++;
            return inner(v);
          }
        : inner;
    };
    const write = frozenPartsWriter(IpResult, counting, whole, 1);
    const body = (n: NetworkRecord) => ({ ip: '1.1.1.1', network: n, location: EMPTY_LOCATION, intelligence: NO_INTELLIGENCE });
    const check = (n: NetworkRecord) => assert.deepEqual(written(write, body(n)), Buffer.from(whole(body(n))));
    const [a, b, c] = [network({ asn: 1 }), network({ asn: 2 }), network({ asn: 3 })];
    check(a);
    check(a);
    assert.equal(calls, 1);
    // Capacity 1: b starts a new fill; a, kept from the fill before, is written from the cache.
    check(b);
    check(a);
    assert.equal(calls, 2);
    // c starts another fill: b, used two fills ago, is written again, and then kept.
    check(c);
    check(b);
    check(b);
    assert.equal(calls, 4);
    const open = { ...network(), isp: 'Before' };
    check(open);
    open.isp = 'After';
    check(open);
    assert.equal(calls, 6);
  });
});

describe(batchSerializer.name, () => {
  it("should write the very bytes of the batch answer's own serializer", async () => {
    const { compile, whole } = await compilers();
    const serialize = batchSerializer(frozenPartsWriter(IpResult, compile, whole), compile(BatchResult));
    const carrying = {
      network: networkRecord(network(), false, true),
      location: answeredLocation(location()),
      intelligence: priorOnly('MOBILE'),
    };
    const results = [
      ...NETWORKS.flatMap((n, i) =>
        LOCATIONS.map((l) => ({ ip: `10.0.0.${i}`, network: n, location: l, intelligence: INTELLIGENCE[i % 2]! })),
      ),
      { ip: '8.8.8.8', ...carrying },
      // Not an address a lookup answers, but a string the writer must escape as the schema's serializer does.
      { ip: 'odd "ip" \\ é \u0007', ...carrying },
      { ip: '2002:808:808::1', ...carrying, embedded_ipv4: { ip: '8.8.8.8', via: '6to4' } },
    ];
    for (const invalid of [[], ['not an ip', 'quote " backslash \\ tab \t', '\u0001', 'Ünïcode', 'Łódź ✓', 'lone \ud800']])
      for (const r of [results, results.slice(0, 1), []]) {
        const body = { results: r, invalid };
        assert.deepEqual(Buffer.from(serialize(body)), Buffer.from(compile(BatchResult)(body)));
      }
    // What the schema's serializer refuses, it refuses too.
    assert.throws(() => serialize({ results: [{ ip: '1.1.1.1' }], invalid: [] }));
    assert.throws(() => serialize({ invalid: [] }));
  });
});
