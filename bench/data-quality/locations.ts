import { ensureRealDataset } from '../../test/helpers/test-dataset.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { formatV4, formatV6, parseIp } from '../../src/lib/ip-address.ts';
import { mulberry32 } from '../../src/lib/prng.ts';
import type { CreditLedger } from '../../src/modules/credits/credit-ledger.ts';
import { readFileSync } from 'node:fs';
import { Reader } from 'mmdb-lib';
import { packagedSources } from '../../src/modules/dataset/dataset-builder.ts';
import { loadDataset } from '../../src/modules/dataset/dataset-reader.ts';
import { mmdbRecord, walkMmdb } from '../../src/modules/dataset/sources.ts';
import { emptyIntelligence } from '../../src/modules/lookup/intelligence.ts';
import type { IpDataset } from '../../src/modules/lookup/ip-dataset.ts';
import { LookupData } from '../../src/modules/lookup/lookup-data.ts';
import { LookupService, type IpResult } from '../../src/modules/lookup/lookup-service.ts';
import type { QualityResult } from './check.ts';

/**
 * Locations: does the answer claim no more precision than the data has? Ground truth that umbra did
 * not produce: the IANA special-purpose registries (reserved space), the packaged ASN source's ranges
 * (announced or delegated space; an address in none of them is unrouted), the operators' own
 * published anycast service addresses, and the IPv4 address that RFC 3056 (6to4) and RFC 4380
 * (Teredo) put inside an IPv6 address.
 */

/** Reserved blocks to sample from (IANA special-purpose registries), as [first address, prefix length]. */
const RESERVED4: Array<[string, number]> = [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/** Addresses their operators publish as anycast services: public resolvers, the 13 root servers, CDN edges. */
export const KNOWN_ANYCAST = [
  // Public DNS resolvers.
  '8.8.8.8',
  '8.8.4.4',
  '1.1.1.1',
  '1.0.0.1',
  '9.9.9.9',
  '149.112.112.112',
  '208.67.222.222',
  '208.67.220.220',
  '94.140.14.14',
  '2001:4860:4860::8888',
  '2001:4860:4860::8844',
  '2606:4700:4700::1111',
  '2606:4700:4700::1001',
  '2620:fe::fe',
  '2620:fe::9',
  '2620:119:35::35',
  '2620:119:53::53',
  // Root servers a to m (root-servers.org), IPv4 and IPv6.
  '198.41.0.4',
  '170.247.170.2',
  '192.33.4.12',
  '199.7.91.13',
  '192.203.230.10',
  '192.5.5.241',
  '192.112.36.4',
  '198.97.190.53',
  '192.36.148.17',
  '192.58.128.30',
  '193.0.14.129',
  '199.7.83.42',
  '202.12.27.33',
  '2001:503:ba3e::2:30',
  '2801:1b8:10::b',
  '2001:500:2::c',
  '2001:500:2d::d',
  '2001:500:a8::e',
  '2001:500:2f::f',
  '2001:500:12::d0d',
  '2001:500:1::53',
  '2001:7fe::53',
  '2001:503:c27::2:30',
  '2001:7fd::1',
  '2001:500:9f::42',
  '2001:dc3::35',
  // CDN edges (anycast networks).
  '104.16.132.229',
  '172.67.1.1',
  '2606:4700::6810:84e5',
  '151.101.1.69',
  '2a04:4e42::81',
];

interface Answer {
  city: string;
  precision?: string;
  bogon?: boolean;
  anycast?: boolean;
  asn: number;
}

function answerer(dataset: IpDataset): (ip: string) => Answer & { result: IpResult } {
  const lookup = new LookupService(new LookupData(dataset), emptyIntelligence, {} as CreditLedger, systemClock);
  return (text) => {
    const result = lookup.resolve(parseIp(text)!);
    const loc = result.location as IpResult['location'] & { precision?: string };
    const net = result.network as IpResult['network'] & { bogon?: boolean; anycast?: boolean };
    return { city: loc.city, precision: loc.precision, bogon: net.bogon, anycast: net.anycast, asn: net.asn, result };
  };
}

const v6Text = (w: Uint32Array) => formatV6(w);

export async function locationChecks(): Promise<QualityResult[]> {
  const dataset = loadDataset(await ensureRealDataset());
  const answer = answerer(dataset);
  const random = mulberry32(20);
  const u32 = () => Math.floor(random() * 2 ** 32) >>> 0;
  const out: QualityResult[] = [];
  const N = 2000;

  // Reserved IPv4 (IANA special-purpose and multicast/future-use blocks).
  const reserved4: string[] = [];
  for (let i = 0; i < N; i++) {
    const [base, len] = RESERVED4[i % RESERVED4.length]!;
    const b = parseIp(base)!;
    if (b.version !== 4) continue;
    reserved4.push(formatV4((b.v4 + (len === 32 ? 0 : u32() % 2 ** (32 - len))) >>> 0));
  }
  // Unrouted IPv4: random addresses in no range of the ASN source and in no reserved block.
  const unrouted4: string[] = [];
  while (unrouted4.length < N) {
    const a = u32();
    const text = formatV4(a);
    if (RESERVED4.some(([base, len]) => (parseIp(base) as { v4: number }).v4 >>> (32 - len) === a >>> (32 - len))) continue;
    if (dataset.network(parseIp(text)!).asn === 0) unrouted4.push(text);
  }
  // IPv6: random in global unicast 2000::/3 outside any ASN source range, and random outside 2000::/3 (reserved by the IETF).
  const unrouted6: string[] = [];
  const reserved6: string[] = [];
  const w = new Uint32Array(4);
  while (unrouted6.length < N || reserved6.length < N) {
    for (let k = 0; k < 4; k++) w[k] = u32();
    const global = w[0]! >>> 29 === 1;
    if (!global && reserved6.length < N && w[0]! >>> 16 !== 0) reserved6.push(v6Text(w));
    if (global) {
      // 2001::/32 (Teredo) and 2002::/16 (6to4) carry IPv4 addresses and are checked below.
      if (w[0]! >>> 16 === 0x2002 || w[0] === 0x20010000) continue;
      const text = v6Text(w);
      if (unrouted6.length < N && dataset.network(parseIp(text)!).asn === 0) unrouted6.push(text);
    }
  }
  const noCity = (name: string, sample: string[]): QualityResult => {
    let right = 0;
    const cities = new Map<string, number>();
    for (const ip of sample) {
      const a = answer(ip);
      if (a.city === '') right++;
      else cities.set(a.city, (cities.get(a.city) ?? 0) + 1);
    }
    const worst = [...cities].sort((x, y) => y[1] - x[1]).slice(0, 3);
    return {
      name,
      sample: sample.length,
      right,
      detail: `right: no city; ${worst.length ? `most answered cities: ${worst.map(([c, n]) => `${c} ${n}`).join(', ')}` : 'no city answered'}`,
    };
  };
  const flagged = (name: string, sample: string[], ok: (a: Answer) => boolean, what: string): QualityResult => ({
    name,
    sample: sample.length,
    right: sample.filter((ip) => ok(answer(ip))).length,
    detail: what,
  });
  out.push(noCity('location, reserved IPv4 (IANA special-purpose, multicast, 240/4), no city', reserved4));
  out.push(noCity('location, random unrouted IPv4 (in no ASN source range), no city', unrouted4));
  out.push(noCity('location, random unrouted IPv6 in 2000::/3 (in no ASN source range), no city', unrouted6));
  out.push(noCity('location, random IPv6 outside 2000::/3 (reserved by the IETF), no city', reserved6));
  const bogon = (a: Answer) => a.bogon === true;
  out.push(flagged('network.bogon, reserved IPv4', reserved4, bogon, 'right: network.bogon true'));
  out.push(flagged('network.bogon, random unrouted IPv4', unrouted4, bogon, 'right: network.bogon true'));
  out.push(flagged('network.bogon, random unrouted IPv6 in 2000::/3', unrouted6, bogon, 'right: network.bogon true'));
  out.push(flagged('network.bogon, random IPv6 outside 2000::/3', reserved6, bogon, 'right: network.bogon true'));

  // Routed addresses must not be flagged: random IPv4 in some ASN source range, outside the anycast networks.
  const routed4: string[] = [];
  while (routed4.length < N) {
    const text = formatV4(u32());
    if (dataset.network(parseIp(text)!).asn !== 0) routed4.push(text);
  }
  out.push(flagged('network.bogon, random routed IPv4 (false flags)', routed4, (a) => a.bogon !== true, 'right: network.bogon not true'));
  out.push(
    flagged(
      'location.precision, random routed IPv4: set, and city only with precision city',
      routed4,
      (a) => a.precision !== undefined && (a.city === '') === (a.precision !== 'city'),
      'right: precision present and consistent with the city member',
    ),
  );

  // What the rules cost: routed addresses that lose their city (anycast networks, placeholder entries).
  // Routed IPv6 is a sliver of 2^128: the first addresses of random routed segments of the dataset's table.
  const routed6: string[] = [];
  const table6 = dataset.ranges().v6;
  const segments6 = table6.pairs.length;
  while (routed6.length < N) {
    const i = Math.floor(random() * segments6);
    const text = v6Text(table6.starts.subarray(i * 4, i * 4 + 4));
    const ip = parseIp(text)!;
    if (ip.version === 6 && dataset.network(ip).asn !== 0 && ip.v6[0]! >>> 16 !== 0x2002 && ip.v6[0] !== 0x20010000) routed6.push(text);
  }
  // The geo source's own answer (the publisher's MMDB files), not the dataset's: the dataset's records are already answered.
  const sources = packagedSources();
  const geo4 = new Reader<Record<string, unknown>>(readFileSync(sources.cityV4 as string));
  const geo6 = new Reader<Record<string, unknown>>(readFileSync(sources.cityV6 as string));
  const sourceCity = (text: string) => String((text.includes(':') ? geo6 : geo4).get(text)?.city ?? '');
  const keepsCity = (name: string, sample: string[]): QualityResult => {
    const raw = sample.filter((ip) => sourceCity(ip) !== '');
    const lost = new Map<string, number>();
    let right = 0;
    for (const ip of raw) {
      const a = answer(ip);
      if (a.city !== '') right++;
      else {
        const why = a.anycast ? `anycast AS${a.asn}` : 'placeholder entry';
        lost.set(why, (lost.get(why) ?? 0) + 1);
      }
    }
    const worst = [...lost].sort((x, y) => y[1] - x[1]).slice(0, 4);
    return {
      name,
      sample: raw.length,
      right,
      detail: `right: the geo source's city kept; ${worst.length ? `dropped: ${worst.map(([c, n]) => `${c} ${n}`).join(', ')}` : 'none dropped'}`,
    };
  };
  out.push(keepsCity('location, random routed IPv4 with a city in the geo source, city kept', routed4));
  out.push(keepsCity('location, random routed IPv6 segments with a city in the geo source, city kept', routed6));

  out.push(
    flagged(
      'network.anycast, published anycast service addresses (resolvers, root servers, CDN edges)',
      KNOWN_ANYCAST,
      (a) => a.anycast === true && a.city === '',
      'right: network.anycast true and no city',
    ),
  );

  // 6to4 and Teredo: answered as the IPv4 address they carry (random routed IPv4 addresses).
  const carried = routed4.slice(0, 500);
  const same = (v6: string, v4: string) => {
    const a = answer(v6).result;
    const b = answer(v4).result;
    return a.network.asn === b.network.asn && a.location.country === b.location.country && a.location.city === b.location.city;
  };
  const sixToFour = (v4: string) => {
    const x = (parseIp(v4) as { v4: number }).v4;
    return v6Text(Uint32Array.of((0x20020000 | (x >>> 16)) >>> 0, ((x & 0xffff) << 16) >>> 0, 0, 1));
  };
  // Teredo: server 65.54.227.120 (the former teredo.ipv6.microsoft.com), client port 40000, client address inverted.
  const teredo = (v4: string) => {
    const x = (parseIp(v4) as { v4: number }).v4;
    return v6Text(Uint32Array.of(0x20010000, 0x4136e378, (0x8000 << 16) | (40000 ^ 0xffff), (x ^ 0xffffffff) >>> 0));
  };
  out.push({
    name: '6to4 (2002::/16), answered as the IPv4 address it carries',
    sample: carried.length,
    right: carried.filter((v4) => same(sixToFour(v4), v4)).length,
    detail: 'right: same network.asn, country and city as the carried IPv4 address',
  });
  out.push({
    name: 'Teredo (2001::/32), answered as the client IPv4 address it carries',
    sample: carried.length,
    right: carried.filter((v4) => same(teredo(v4), v4)).length,
    detail: 'right: same network.asn, country and city as the carried IPv4 address',
  });

  // Routed addresses on the geo source's placeholder entries (a registry's office or a default point,
  // given to huge unrouted blocks): the city is not the address's. Found by walking the source's own files.
  const onPlaceholder: string[] = [];
  for (const [reader, width] of [
    [geo4, 32],
    [geo6, 128],
  ] as const) {
    const isPlaceholder = new Map<number, boolean>();
    walkMmdb(
      reader,
      (prefix, _bits, pointer) => {
        let yes = isPlaceholder.get(pointer);
        if (yes === undefined) {
          const r = mmdbRecord(reader, pointer);
          const deg = (v: unknown) => (typeof v === 'number' ? Math.round(v * 1e4) / 1e4 : null);
          yes = PLACEHOLDER_POINTS.has(`${String(r.country_code ?? '')}|${String(r.city ?? '')}|${deg(r.latitude)},${deg(r.longitude)}`);
          isPlaceholder.set(pointer, yes);
        }
        if (!yes || onPlaceholder.length >= 4 * N) return;
        const text = width === 32 ? formatV4(prefix[3]!) : v6Text(prefix);
        if (dataset.network(parseIp(text)!).asn !== 0) onPlaceholder.push(text);
      },
      () => {},
      // The IPv6 file repeats IPv4 space under ::/16.
      width === 128 ? (prefix, bits) => bits === 16 && prefix[0]! >>> 16 === 0 : undefined,
    );
  }
  out.push(noCity('location, routed ranges on the geo source placeholder entries, no city', onPlaceholder));
  return out;
}

/** The placeholder entries measured on the 2026-06 DB-IP data (docs/intelligence.md, Locations), as country|city|lat,lon. */
const PLACEHOLDER_POINTS = new Set([
  'CH|Murten/Morat|46.9219,7.1659',
  'MU|Quatre Bornes (Ebene CyberCity)|-20.2433,57.4962',
  'MU|Ebene CyberCity|-20.2419,57.4896',
  'US|Chantilly|38.9097,-77.4524',
  'NL|Amsterdam (Amsterdam-Centrum)|52.3783,4.9007',
]);
