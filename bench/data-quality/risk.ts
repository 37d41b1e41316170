// Risk ordering, device attribution and request counts, on hand-labelled cases built through the
// real index (feed records in, lookups out), so a change of a rule or a weight shows here.
import { ManualClock } from '../../src/lib/clock.ts';
import { parseIp } from '../../src/lib/ip-address.ts';
import { FEEDS } from '../../src/modules/feeds/feed-catalog.ts';
import type { IntelList } from '../../src/modules/intel/lists/intel-list.ts';
import { IntelIndex } from '../../src/modules/intel/engine/intel-index.ts';
import type { NetworkType } from '../../src/modules/lookup/ip-dataset.ts';
import type { QualityResult } from './check.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const S0 = T0 / 1000;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const EXPLOITS = [
  '/.env',
  '/.git/config',
  '/cgi-bin/.%2e/.%2e/bin/sh',
  '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
  '/actuator/env',
];

const http = (source_ip: string, uri: string, userAgent: string, tsMs: number) => ({
  timestamp: tsMs,
  tunnel_id: 1,
  domain: 'shop.example.com',
  port: 80,
  protocol: 'http',
  meta: { proxy_ip: '', server: '', pool_id: 1, provider: '' },
  details: { method: 'GET', uri, version: 'HTTP/1.1', headers: { Host: 'shop.example.com', 'User-Agent': userAgent } },
  raw: `GET ${uri} HTTP/1.1\r\nHost: shop.example.com\r\nUser-Agent: ${userAgent}\r\n\r\n`,
  source_ip,
});

const list = (kind: string, provider: string, cidrs: string[]): IntelList => ({
  kind,
  provider,
  version: '0123456789abcdef',
  imported_at: S0 - 86_400,
  published_at: S0 - 86_400,
  published_from: 'import',
  format: 'cidr-lines',
  cidrs,
});

interface Case {
  name: string;
  ip: string;
  network: NetworkType;
  /** 1 is the riskiest; cases of the same rank are not compared. */
  rank: number;
  requests: Array<[uri: string, userAgent: string]>;
}

/**
 * The expected order, as an analyst would put it: sustained exploit scanning from a server; one
 * exploit from a single-user home address; the same exploit through a shared address (relay egress,
 * mobile carrier NAT, CGNAT space), where it may be anyone behind it; then nothing observed, a server
 * above a home; a verified crawler fetching what every crawler fetches last.
 */
const CASES: Case[] = [
  {
    name: 'datacenter scanner, 27 requests',
    ip: '198.51.100.10',
    network: 'DATACENTER',
    rank: 1,
    requests: Array.from({ length: 27 }, (_, i) => [EXPLOITS[i % EXPLOITS.length]!, i % 3 === 0 ? CHROME : 'Mozilla/5.0 zgrab/0.x']),
  },
  { name: 'home address, one exploit', ip: '73.12.34.56', network: 'RESIDENTIAL', rank: 2, requests: [['/.env', 'curl/8.5.0']] },
  { name: 'relay egress, one exploit', ip: '172.224.226.7', network: 'DATACENTER', rank: 3, requests: [['/.env', 'curl/8.5.0']] },
  { name: 'mobile carrier address, one exploit', ip: '39.32.10.4', network: 'MOBILE', rank: 3, requests: [['/.env', 'curl/8.5.0']] },
  { name: 'CGNAT-space address, one exploit', ip: '100.72.1.9', network: 'UNKNOWN', rank: 3, requests: [['/.env', 'curl/8.5.0']] },
  { name: 'datacenter address, nothing observed', ip: '203.0.113.80', network: 'DATACENTER', rank: 4, requests: [] },
  { name: 'home address, nothing observed', ip: '73.12.34.99', network: 'RESIDENTIAL', rank: 5, requests: [] },
  {
    name: 'verified Googlebot crawling',
    ip: '66.249.66.1',
    network: 'DATACENTER',
    rank: 6,
    requests: [
      ['/robots.txt', GOOGLEBOT],
      ['/sitemap.xml', GOOGLEBOT],
      ['/favicon.ico', GOOGLEBOT],
      ['/', GOOGLEBOT],
      ['/.well-known/security.txt', GOOGLEBOT],
      ...Array.from({ length: 25 }, (_, i): [string, string] => [`/products/${i}`, GOOGLEBOT]),
    ],
  },
];

function build(cases: readonly Case[]): IntelIndex {
  const index = new IntelIndex(new ManualClock(T0));
  index.setLists([list('SEARCH_ENGINE', 'GOOGLEBOT', ['66.249.64.0/19']), list('PRIVATE_RELAY', 'APPLE', ['172.224.226.0/27'])]);
  for (const c of cases) {
    const records = c.requests.map(([uri, ua], i) => ({
      record: http(c.ip, uri, ua, T0 - (c.requests.length - i) * 60_000) as never,
      line: '',
    }));
    if (records.length) index.observe(FEEDS.honeypot_http, records);
  }
  return index;
}

type Lookup = (ip: string, network: NetworkType) => { risk_score: number; devices: unknown[] };

/** The index's answer for an address on a network of that type (the lookup passes the dataset's type). */
const lookupOf =
  (index: IntelIndex): Lookup =>
  (ip, network) =>
    index.intelligence(parseIp(ip)!, undefined, network);

export function riskOrdering(): QualityResult {
  const lookup = lookupOf(build(CASES));
  const scored = CASES.map((c) => ({ ...c, score: lookup(c.ip, c.network).risk_score }));
  let sample = 0;
  let right = 0;
  const wrong: string[] = [];
  for (const a of scored) {
    for (const b of scored) {
      if (a.rank >= b.rank) continue;
      sample++;
      if (a.score > b.score) right++;
      else wrong.push(`${a.name} ${a.score} ≤ ${b.name} ${b.score}`);
    }
  }
  return {
    name: 'risk_score ordering, pairs of 8 labelled cases (ranked riskier scores strictly higher)',
    sample,
    right,
    detail: `${scored.map((c) => `${c.name}: ${c.score}`).join('; ')}${wrong.length ? ` | wrong: ${wrong.join('; ')}` : ''}`,
  };
}

/** Scanners that send a browser User-Agent: right when no device is named for them. */
export function scannerDevices(): QualityResult {
  const scanners: Case[] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({
    name: `scanner ${i}`,
    ip: `198.51.100.${100 + i}`,
    network: 'DATACENTER',
    rank: 1,
    requests: [
      [EXPLOITS[i % EXPLOITS.length]!, CHROME],
      ['/', 'Mozilla/5.0 zgrab/0.x'],
    ],
  }));
  const lookup = lookupOf(build(scanners));
  const named = scanners.filter((c) => lookup(c.ip, c.network).devices.length > 0);
  return {
    name: 'devices of exploit scanners that send a browser User-Agent (right: none named)',
    sample: scanners.length,
    right: scanners.length - named.length,
  };
}

/** 22 requests of which some show two or three behaviours: right when the volume counts 22. */
export function requestCounts(): QualityResult {
  const c: Case = {
    name: 'scanner',
    ip: '198.51.100.50',
    network: 'DATACENTER',
    rank: 1,
    requests: Array.from({ length: 22 }, (_, i) => [i < 6 ? '/.env' : `/page/${i}`, i < 6 ? 'curl/8.5.0' : CHROME]),
  };
  const index = build([c]);
  const risk = index.explain(parseIp(c.ip)!).evidence.risk as { volume: { observations: number } };
  return {
    name: 'observations behind the risk volume for 22 requests (right: 22)',
    sample: 1,
    right: risk.volume.observations === 22 ? 1 : 0,
    detail: `counted ${risk.volume.observations}`,
  };
}

export async function riskChecks(): Promise<QualityResult[]> {
  return [riskOrdering(), scannerDevices(), requestCounts()];
}
