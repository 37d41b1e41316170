import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseIp } from '../../lib/ip-address.ts';
import { canonicalProvider, KNOWN_PROVIDERS } from '../../modules/providers/provider-registry.ts';
import { bencode } from './bencode.ts';
import { createGenerators, pickFeed } from './generators.ts';
import { ipToBigInt } from './ip-space.ts';
import { mulberry32, seedFrom } from './random.ts';
import { infoDict } from './torrents.ts';
import { FEED_IDS, type FeedId, type SimulatorDeps } from './types.ts';

type Rec = Record<string, any>;
const TS_MS = 1_795_348_800_123;
const HELLO = new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00]);

/** A network stub whose answer depends on the address, so tests can tell it was asked about that one. */
const fakeNetwork = (ip: string) => ({ asn: 64_512 + (seedFrom(ip) % 1000), country: ['US', 'DE', 'FR', 'GB'][seedFrom(ip) % 4]! });

function deps(seed: number): SimulatorDeps {
  return { rng: mulberry32(seed), network: fakeNetwork, tlsHello: (_rng, sni) => ({ raw: HELLO, details: { sni } }) };
}

/** Many records per feed, produced through the public entry point only. */
function sample(seed: number, n = 300): Record<FeedId, Rec[]> {
  const g = createGenerators(deps(seed));
  const out = Object.fromEntries(FEED_IDS.map((f) => [f, [] as Rec[]])) as Record<FeedId, Rec[]>;
  for (let i = 0; i < n; i++) for (const f of FEED_IDS) out[f].push(g[f](TS_MS + i * 1000) as Rec);
  return out;
}

type Kind = 'string' | 'integer' | 'boolean' | 'object' | 'array' | 'object|null';
const META: Kind = 'object';
const SHAPES: Record<FeedId, Record<string, Kind>> = {
  proxies: { ip: 'string', provider: 'string', type: 'string', timestamp: 'integer', country_code: 'string', asn: 'integer' },
  anonymizers: {
    range_start: 'string',
    range_end: 'string',
    provider: 'string',
    type: 'string',
    timestamp: 'integer',
    country_code: 'string',
    asn: 'integer',
  },
  torrents: {
    info_hash: 'string',
    name: 'string',
    magnet_uri: 'string',
    total_size: 'integer',
    piece_length: 'integer',
    file_count: 'integer',
    files: 'array',
    peers: 'array',
    timestamp: 'integer',
  },
  honeypot_http: {
    timestamp: 'integer',
    tunnel_id: 'integer',
    domain: 'string',
    port: 'integer',
    protocol: 'string',
    meta: META,
    details: 'object',
    raw: 'string',
    source_ip: 'string',
  },
  honeypot_https: {
    timestamp: 'integer',
    tunnel_id: 'integer',
    domain: 'string',
    port: 'integer',
    protocol: 'string',
    meta: META,
    details: 'object|null',
    raw: 'string',
    source_ip: 'string',
  },
  honeypot_dns: {
    timestamp: 'integer',
    tunnel_id: 'integer',
    domain: 'string',
    port: 'integer',
    meta: META,
    qname: 'string',
    qtype: 'string',
    source_ip: 'string',
  },
  honeypot_adb: {
    session: 'string',
    sequential_id: 'integer',
    command: 'string',
    hash: 'string',
    timestamp: 'integer',
    source_ip: 'string',
  },
  ja4t: {
    ip: 'string',
    ja4t: 'string',
    provider: 'string',
    variant: 'string',
    type: 'string',
    timestamp: 'integer',
    country_code: 'string',
    asn: 'integer',
  },
};

function kindOf(v: unknown): Kind | 'other' {
  if (v === null) return 'object|null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'other';
  return typeof v as Kind;
}

const isIp = (s: unknown) => typeof s === 'string' && parseIp(s)?.text === s;
const records = sample(7);

describe(createGenerators.name, () => {
  it('should emit exactly the documented members with their JSON types', () => {
    for (const feed of FEED_IDS) {
      for (const r of records[feed]) {
        // JSON round trip: what goes on the wire is what is checked.
        const rec = JSON.parse(JSON.stringify(r)) as Rec;
        const expected = Object.keys(SHAPES[feed]).filter((k) => !(feed === 'honeypot_https' && k === 'raw' && !('raw' in rec)));
        assert.deepEqual(Object.keys(rec).sort(), expected.sort(), feed);
        for (const k of expected) {
          const want = SHAPES[feed][k]!;
          const got = kindOf(rec[k]);
          assert.ok(got === want || (want === 'object|null' && (got === 'object' || got === 'object|null')), `${feed}.${k}: ${got}`);
        }
      }
    }
  });

  it('should put timestamps in seconds for network feeds and in milliseconds for honeypot feeds', () => {
    for (const feed of ['proxies', 'anonymizers', 'torrents', 'ja4t'] as const)
      assert.equal(records[feed][0]!.timestamp, Math.floor(TS_MS / 1000));
    for (const feed of ['honeypot_http', 'honeypot_https', 'honeypot_dns', 'honeypot_adb'] as const)
      assert.equal(records[feed][0]!.timestamp, TS_MS);
  });

  it('should take ASN and country from deps.network for the reported address', () => {
    for (const r of [...records.proxies, ...records.ja4t]) {
      assert.ok(isIp(r.ip));
      assert.deepEqual({ asn: r.asn, country: r.country_code }, fakeNetwork(r.ip));
    }
    for (const r of records.anonymizers) assert.deepEqual({ asn: r.asn, country: r.country_code }, fakeNetwork(r.range_start));
  });

  it('should repeat proxy addresses, since intelligence is built on repeat sightings', () => {
    const proxies = createGenerators(deps(11)).proxies;
    const ips = Array.from({ length: 2000 }, (_, i) => (proxies(TS_MS + i) as Rec).ip as string);
    assert.ok(new Set(ips).size < ips.length * 0.8, `${new Set(ips).size} distinct of ${ips.length}`);
    for (const r of records.proxies) {
      assert.match(r.provider, /^[A-Z_]+$/);
      assert.match(r.type, /^(RESIDENTIAL|MOBILE|DATACENTER|PUBLIC|BLOCKCHAIN)_PROXY$/);
    }
  });

  it('should emit anonymizer ranges with start ≤ end of one family and a /26–/32 or /48–/64 size', () => {
    const families = new Set<number>();
    for (const r of records.anonymizers) {
      assert.ok(isIp(r.range_start) && isIp(r.range_end));
      const v6 = r.range_start.includes(':');
      assert.equal(v6, r.range_end.includes(':'));
      families.add(v6 ? 6 : 4);
      const size = ipToBigInt(r.range_end) - ipToBigInt(r.range_start) + 1n;
      assert.ok(size >= 1n);
      assert.ok(v6 ? size >= 1n << 64n && size <= 1n << 80n : size <= 64n, `${r.range_start}-${r.range_end}`);
      assert.match(r.type, /^(COMMERCIAL_VPN|FREE_VPN|ENTERPRISE_VPN|PRIVATE_RELAY|TOR_NODE)$/);
    }
    assert.deepEqual([...families].sort(), [4, 6]);
  });

  it('should give torrents an info_hash that is the SHA-1 of their bencoded info dict, and a valid magnet', () => {
    for (const t of records.torrents) {
      assert.match(t.info_hash, /^[0-9a-f]{40}$/);
      assert.equal(t.file_count, t.files.length);
      assert.equal(
        t.total_size,
        t.files.reduce((s: number, f: Rec) => s + f.length, 0),
      );
      assert.ok(t.piece_length >= 16_384 && t.piece_length <= 16_777_216 && (t.piece_length & (t.piece_length - 1)) === 0);
      const single = t.file_count === 1 && t.files[0].path === t.name;
      const hash = createHash('sha1')
        .update(bencode(infoDict(t.name, t.piece_length, t.files, single)))
        .digest('hex');
      assert.equal(t.info_hash, hash, t.name);
      const m = new URL(t.magnet_uri);
      assert.equal(m.protocol, 'magnet:');
      assert.equal(m.searchParams.get('xt'), `urn:btih:${t.info_hash}`);
      assert.equal(m.searchParams.get('dn'), t.name);
      for (const tr of m.searchParams.getAll('tr')) assert.ok(new URL(tr));
      assert.ok(t.peers.length >= 1);
      for (const p of t.peers) {
        assert.ok(isIp(p.ip));
        assert.ok(Number.isInteger(p.port) && p.port >= 1024 && p.port <= 65535);
        assert.ok(p.source === 'DHT' || p.source === 'PEX' || /^(udp|https?|wss):\/\//.test(p.source), p.source);
        assert.equal(typeof p.encrypted, 'boolean');
      }
    }
  });

  it('should write raw HTTP requests that agree with details', () => {
    for (const r of records.honeypot_http) {
      const { method, uri, version, headers } = r.details;
      assert.ok(r.raw.startsWith(`${method} ${uri} ${version}\r\n`));
      assert.equal(r.protocol, 'http');
      assert.ok([80, 8080, 8000, 8888, 3000, 5000].includes(r.port));
      const [head, body] = [r.raw.slice(0, r.raw.indexOf('\r\n\r\n')), r.raw.slice(r.raw.indexOf('\r\n\r\n') + 4)];
      const lines = head.split('\r\n').slice(1);
      assert.deepEqual(Object.fromEntries(lines.map((l: string) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)])), headers);
      if (headers['Content-Length'] !== undefined) assert.equal(Number(headers['Content-Length']), Buffer.byteLength(body));
      else assert.equal(body, '');
      assert.ok(isIp(r.source_ip) && isIp(r.meta.proxy_ip));
    }
  });

  it('should pass the TLS builder the domain or no SNI, and sometimes omit raw', () => {
    const https = records.honeypot_https;
    for (const r of https) {
      assert.equal(r.protocol, 'https');
      assert.ok(r.details.sni === null || r.details.sni === r.domain);
      if ('raw' in r) assert.deepEqual(new Uint8Array(Buffer.from(r.raw, 'base64')), HELLO);
    }
    assert.ok(https.some((r) => r.details.sni === null) && https.some((r) => !('raw' in r)));
  });

  it('should query names under the DNS honeypot domain', () => {
    for (const r of records.honeypot_dns) {
      assert.ok(r.qname === r.domain || r.qname.endsWith(`.${r.domain}`), r.qname);
      assert.ok([53, 853, 5353].includes(r.port));
      assert.ok(['A', 'AAAA', 'TXT', 'MX', 'ANY', 'NS', 'SOA', 'CNAME', 'SRV', 'HTTPS'].includes(r.qtype));
    }
  });

  it('should hash ADB commands and number them 1, 2, 3... within each session', () => {
    const last = new Map<string, number>();
    for (const r of records.honeypot_adb) {
      const raw = Buffer.from(r.command, 'base64');
      assert.equal(r.hash, createHash('sha256').update(raw).digest('hex'));
      assert.ok(raw.toString().startsWith('shell:'));
      assert.match(r.session, /^[0-9a-f]{16}$/);
      assert.equal(r.sequential_id, (last.get(r.session) ?? 0) + 1);
      last.set(r.session, r.sequential_id);
    }
    assert.ok([...last.values()].some((n) => n > 3));
  });

  it('should emit JA4T strings shaped window_options_mss_wscale', () => {
    for (const r of records.ja4t) {
      assert.match(r.ja4t, /^\d+_\d+(-\d+)*_\d+_\d+$/);
      assert.match(r.variant, /^(RESIDENTIAL|MOBILE|DATACENTER|PUBLIC|BLOCKCHAIN)$/);
      assert.equal(r.type, `${r.variant}_PROXY`);
    }
  });

  it('should be deterministic for a seed and differ across seeds', () => {
    assert.equal(JSON.stringify(sample(7, 60)), JSON.stringify(sample(7, 60)));
    assert.notEqual(JSON.stringify(sample(7, 60)), JSON.stringify(sample(8, 60)));
  });
});

describe(pickFeed.name, () => {
  it('should only return feed ids, and all of them', () => {
    const rng = mulberry32(3);
    const seen = new Set<FeedId>();
    for (let i = 0; i < 2000; i++) seen.add(pickFeed(rng));
    assert.deepEqual([...seen].sort(), [...FEED_IDS].sort());
  });

  it("should never put a real provider's name on an address: every provider tag is a made-up DEMO_ one", () => {
    const tags = new Set([...records.proxies, ...records.ja4t, ...records.anonymizers].map((r) => r.provider as string));
    assert.ok(tags.size > 20, `${tags.size} providers`);
    for (const tag of tags) {
      assert.match(tag, /^DEMO_[A-Z_]+$/);
      assert.ok(!KNOWN_PROVIDERS.includes(canonicalProvider(tag).provider), `${tag} is a real provider's tag`);
    }
  });
});
