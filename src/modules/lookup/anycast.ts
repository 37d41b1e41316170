import type { ParsedIp } from '../../lib/ip-address.ts';

/**
 * Known anycast networks: one address announced from many sites, so the site that answers depends on
 * where the asker is, and no single city is right. Curated from the operators' own documentation;
 * docs/intelligence.md (Locations) says how to extend it. Two kinds of entries:
 *
 * - Prefixes of anycast services inside networks that are otherwise unicast (public DNS resolvers,
 *   the root servers, whose operators publish the addresses).
 * - Autonomous systems whose whole address space is served by anycast (CDN and DNS providers that
 *   say so). A unicast range such a network also announces is flagged too: the list errs towards
 *   claiming less precision.
 */
export const ANYCAST_PREFIXES: ReadonlyArray<{ cidr: string; service: string }> = [
  { cidr: '8.8.8.0/24', service: 'Google Public DNS' },
  { cidr: '8.8.4.0/24', service: 'Google Public DNS' },
  { cidr: '2001:4860:4860::/48', service: 'Google Public DNS' },
  { cidr: '1.1.1.0/24', service: 'Cloudflare 1.1.1.1' },
  { cidr: '1.0.0.0/24', service: 'Cloudflare 1.1.1.1' },
  { cidr: '2606:4700:4700::/48', service: 'Cloudflare 1.1.1.1' },
  { cidr: '9.9.9.0/24', service: 'Quad9' },
  { cidr: '149.112.112.0/24', service: 'Quad9' },
  { cidr: '2620:fe::/48', service: 'Quad9' },
  { cidr: '208.67.222.0/24', service: 'Cisco OpenDNS' },
  { cidr: '208.67.220.0/24', service: 'Cisco OpenDNS' },
  { cidr: '2620:119:35::/48', service: 'Cisco OpenDNS' },
  { cidr: '2620:119:53::/48', service: 'Cisco OpenDNS' },
  { cidr: '94.140.14.0/24', service: 'AdGuard DNS' },
  { cidr: '94.140.15.0/24', service: 'AdGuard DNS' },
  { cidr: '2a10:50c0::/48', service: 'AdGuard DNS' },
  // The root servers a to m (root-servers.org), each announced as a /24 and a /48.
  { cidr: '198.41.0.0/24', service: 'a.root-servers.net' },
  { cidr: '2001:503:ba3e::/48', service: 'a.root-servers.net' },
  { cidr: '170.247.170.0/24', service: 'b.root-servers.net' },
  { cidr: '2801:1b8:10::/48', service: 'b.root-servers.net' },
  { cidr: '192.33.4.0/24', service: 'c.root-servers.net' },
  { cidr: '2001:500:2::/48', service: 'c.root-servers.net' },
  { cidr: '199.7.91.0/24', service: 'd.root-servers.net' },
  { cidr: '2001:500:2d::/48', service: 'd.root-servers.net' },
  { cidr: '192.203.230.0/24', service: 'e.root-servers.net' },
  { cidr: '2001:500:a8::/48', service: 'e.root-servers.net' },
  { cidr: '192.5.5.0/24', service: 'f.root-servers.net' },
  { cidr: '2001:500:2f::/48', service: 'f.root-servers.net' },
  { cidr: '192.112.36.0/24', service: 'g.root-servers.net' },
  { cidr: '2001:500:12::/48', service: 'g.root-servers.net' },
  { cidr: '198.97.190.0/24', service: 'h.root-servers.net' },
  { cidr: '2001:500:1::/48', service: 'h.root-servers.net' },
  { cidr: '192.36.148.0/24', service: 'i.root-servers.net' },
  { cidr: '2001:7fe::/48', service: 'i.root-servers.net' },
  { cidr: '192.58.128.0/24', service: 'j.root-servers.net' },
  { cidr: '2001:503:c27::/48', service: 'j.root-servers.net' },
  { cidr: '193.0.14.0/24', service: 'k.root-servers.net' },
  { cidr: '2001:7fd::/48', service: 'k.root-servers.net' },
  { cidr: '199.7.83.0/24', service: 'l.root-servers.net' },
  { cidr: '2001:500:9f::/48', service: 'l.root-servers.net' },
  { cidr: '202.12.27.0/24', service: 'm.root-servers.net' },
  { cidr: '2001:dc3::/48', service: 'm.root-servers.net' },
];

/** AS number → operator, for networks served entirely by anycast. */
export const ANYCAST_ASNS: ReadonlyMap<number, string> = new Map([
  [13335, 'Cloudflare'],
  [54113, 'Fastly'],
  [19551, 'Imperva Incapsula'],
  [30148, 'Sucuri'],
  [19281, 'Quad9'],
  [36692, 'Cisco OpenDNS'],
  [12008, 'Vercara UltraDNS'],
  [62597, 'NS1'],
]);

/** IPv4 prefixes by length: value >>> (32 - len) → set. */
const V4 = new Map<number, Set<number>>();
/** IPv6 prefixes by length (every listed one is /29 to /48): their bits as a number (at most 48, exact in a double) → set. */
const V6 = new Map<number, Set<number>>();

for (const { cidr } of ANYCAST_PREFIXES) {
  const [text, lenText] = cidr.split('/') as [string, string];
  const len = Number(lenText);
  if (!text.includes(':')) {
    const v = text.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    let set = V4.get(len);
    if (!set) V4.set(len, (set = new Set()));
    set.add(v >>> (32 - len));
    continue;
  }
  const [head] = text.split('::') as [string];
  const g = [...head.split(':').map((x) => Number.parseInt(x, 16)), 0, 0, 0].slice(0, 3);
  let set = V6.get(len);
  if (!set) V6.set(len, (set = new Set()));
  set.add(key6(((g[0]! << 16) | g[1]!) >>> 0, g[2]!, len));
}

/** 1 for each first IPv4 octet / first IPv6 group that some listed prefix starts with: most lookups stop at this read. */
const V4_FIRST = new Uint8Array(256);
const V6_FIRST = new Uint8Array(65536);
for (const { cidr } of ANYCAST_PREFIXES) {
  const text = cidr.slice(0, cidr.indexOf('/'));
  if (text.includes(':')) V6_FIRST[Number.parseInt(text.slice(0, text.indexOf(':')), 16)] = 1;
  else V4_FIRST[Number(text.slice(0, text.indexOf('.')))] = 1;
}

/** The tables as flat arrays of [length, set]: iterating a Map allocates an entry per step, and this runs on every lookup. */
const V4_LENGTHS = [...V4.keys()];
const V4_SETS = [...V4.values()];
const V6_LENGTHS = [...V6.keys()];
const V6_SETS = [...V6.values()];

/** The first `len` bits (len ≤ 48) of an address whose first word is w0 and third group g2. */
function key6(w0: number, g2: number, len: number): number {
  if (len <= 32) return w0 >>> (32 - len);
  return w0 * 2 ** (len - 32) + (g2 >>> (48 - len));
}

/** Whether the address is in a known anycast network: a listed prefix, or a listed autonomous system (`asn`: the address's). */
export function isAnycast(ip: ParsedIp, asn: number): boolean {
  if (ANYCAST_ASNS.has(asn)) return true;
  if (ip.version === 4) {
    const v = ip.v4;
    if (V4_FIRST[v >>> 24] === 0) return false;
    for (let i = 0; i < V4_LENGTHS.length; i++) if (V4_SETS[i]!.has(v >>> (32 - V4_LENGTHS[i]!))) return true;
    return false;
  }
  const w0 = ip.v6[0]!;
  if (V6_FIRST[w0 >>> 16] === 0) return false;
  const g2 = ip.v6[1]! >>> 16;
  for (let i = 0; i < V6_LENGTHS.length; i++) if (V6_SETS[i]!.has(key6(w0, g2, V6_LENGTHS[i]!))) return true;
  return false;
}
