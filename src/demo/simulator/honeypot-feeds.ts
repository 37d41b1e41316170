import { HTTP_CLIENTS } from './http-clients.ts';
import { DNS_PORTS, HONEYPOT_HOSTS, HTTP_PORTS, HTTPS_PORTS, metaOf, tunnelFor, zoneOf } from './honeypot-targets.ts';
import { alnum, chance, int, pick, weighted, zipfWeights } from './random.ts';
import { REQUEST_TEMPLATES, type SourceClass } from './scanner-paths.ts';
import { payloadHost, sourceAddress } from './sources.ts';
import type { Rng, SimulatorDeps } from './types.ts';

// Honeypot feeds carry milliseconds, not seconds (the contract); Math.floor keeps them integers.
const millis = (tsMs: number): number => Math.floor(tsMs);

const hostWeights = zipfWeights(HONEYPOT_HOSTS, 1.0);
const templateWeights = REQUEST_TEMPLATES.map((t) => [t, t.weight] as const);

function target(rng: Rng, ports: ReadonlyArray<readonly [number, number]>) {
  const domain = weighted(rng, hostWeights);
  const tunnel = tunnelFor(domain);
  return { domain, port: weighted(rng, ports), tunnel };
}

export function createHttpGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const { rng } = deps;
    const { domain, port, tunnel } = target(rng, HTTP_PORTS);
    const template = weighted(rng, templateWeights);
    const clientName = pick(rng, template.clients);
    const client = HTTP_CLIENTS[clientName];
    const host = port === 80 ? domain : `${domain}:${port}`;
    const source_ip = sourceAddress(rng, template.source, clientName);
    const req = template.build({ rng, host, zone: zoneOf(domain), payload: payloadHost(rng) });
    const headers = client.headers(host);
    const set = (name: string, value: string) => {
      const i = headers.findIndex(([n]) => n.toLowerCase() === name.toLowerCase());
      if (i >= 0) headers[i] = [headers[i]![0], value];
      else headers.push([name, value]);
    };
    for (const [n, v] of req.headers ?? []) set(n, v);
    if (req.body !== undefined) {
      if (req.contentType) set('Content-Type', req.contentType);
      set('Content-Length', String(Buffer.byteLength(req.body)));
    }
    const raw = `${req.method} ${req.uri} ${client.version}\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n${req.body ?? ''}`;
    return {
      timestamp: millis(tsMs),
      tunnel_id: tunnel.tunnel_id,
      domain,
      port,
      protocol: 'http',
      meta: metaOf(tunnel),
      details: {
        method: req.method,
        uri: req.uri,
        version: client.version,
        headers: Object.fromEntries(headers) as Record<string, string>,
      },
      raw,
      source_ip,
    };
  };
}

/** Who opens TLS to a honeypot, and how often they leave out SNI (IP-range scanners mostly do). */
const TLS_SOURCES: ReadonlyArray<readonly [readonly [SourceClass, number], number]> = [
  [['research', 0.5], 35],
  [['abuse', 0.25], 40],
  [['proxy', 0.02], 10],
  [['crawler', 0.02], 5],
  [['human', 0.02], 10],
];

export function createHttpsGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const { rng } = deps;
    const { domain, port, tunnel } = target(rng, HTTPS_PORTS);
    const [cls, noSni] = weighted(rng, TLS_SOURCES);
    const source_ip = sourceAddress(rng, cls, cls === 'research' ? pick(rng, ['censys', 'expanse'] as const) : undefined);
    const hello = deps.tlsHello(rng, chance(rng, noSni) ? null : domain);
    const record: Record<string, unknown> = {
      timestamp: millis(tsMs),
      tunnel_id: tunnel.tunnel_id,
      domain,
      port,
      protocol: 'https',
      meta: metaOf(tunnel),
      details: hello.details,
    };
    // "omitted when not captured": the sensor sometimes drops the raw bytes (truncated or oversized).
    if (!chance(rng, 0.1)) record.raw = Buffer.from(hello.raw).toString('base64');
    record.source_ip = source_ip;
    return record;
  };
}

type DnsQuery = (rng: Rng, zone: string, host: string) => { qname: string; qtype: string; source: SourceClass | 'resolver' };

const SUBDOMAIN_WORDLIST = [
  'vpn',
  'mail',
  'admin',
  'dev',
  'test',
  'staging',
  'api',
  'portal',
  'remote',
  'git',
  'owa',
  'citrix',
  'jira',
  'backup',
];

/** The query mix an exposed authoritative server sees: real lookups, floods, probes and enumeration. */
const DNS_QUERIES: ReadonlyArray<readonly [DnsQuery, number]> = [
  // Random-subdomain ("water torture") floods arrive through open and public resolvers.
  [(r, z) => ({ qname: `${alnum(r, int(r, 6, 12))}.${z}`, qtype: pick(r, ['A', 'A', 'AAAA']), source: 'resolver' }), 20],
  // ANY probes: checking the zone as a reflection amplifier.
  [(_r, z) => ({ qname: z, qtype: 'ANY', source: 'abuse' }), 12],
  [(r, z, h) => ({ qname: h === z ? `www.${z}` : h, qtype: pick(r, ['A', 'AAAA', 'HTTPS']), source: 'resolver' }), 25],
  [(_r, z) => ({ qname: `_dmarc.${z}`, qtype: 'TXT', source: 'resolver' }), 6],
  [(r, z) => ({ qname: z, qtype: pick(r, ['MX', 'NS', 'SOA', 'TXT']), source: 'resolver' }), 18],
  [(r, z) => ({ qname: pick(r, [`_sip._tcp.${z}`, `_autodiscover._tcp.${z}`, `_ldap._tcp.${z}`]), qtype: 'SRV', source: 'resolver' }), 3],
  [(r, z) => ({ qname: pick(r, [`autodiscover.${z}`, `www.${z}`]), qtype: 'CNAME', source: 'resolver' }), 4],
  [(_r, _z, h) => ({ qname: `_acme-challenge.${h}`, qtype: 'TXT', source: 'resolver' }), 2],
  // Subdomain brute-forcing straight from scanners' own hosts.
  [(r, z) => ({ qname: `${pick(r, SUBDOMAIN_WORDLIST)}.${z}`, qtype: 'A', source: 'abuse' }), 8],
];

export function createDnsGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const { rng } = deps;
    const host = weighted(rng, hostWeights);
    const zone = zoneOf(host);
    const tunnel = tunnelFor(zone);
    const port = weighted(rng, DNS_PORTS);
    const q = weighted(rng, DNS_QUERIES)(rng, zone, host);
    return {
      timestamp: millis(tsMs),
      tunnel_id: tunnel.tunnel_id,
      domain: zone,
      port,
      meta: metaOf(tunnel),
      qname: q.qname,
      qtype: q.qtype,
      source_ip: sourceAddress(rng, q.source),
    };
  };
}
