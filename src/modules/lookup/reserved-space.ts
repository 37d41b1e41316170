import type { ParsedIp } from '../../lib/ip-address.ts';

/** A block that is never a public host's address: it is in no one's network and at no place. */
export interface ReservedBlock {
  cidr: string;
  name: string;
  /** Where the block is reserved. */
  rfc: string;
}

/**
 * Reserved IPv4 space: the blocks of the IANA IPv4 Special-Purpose Address Registry that are not
 * globally reachable, plus multicast and the former class E from the IANA IPv4 Address Space
 * Registry. Blocks the registry marks globally reachable (AS112, AMT, the deprecated 6to4 relay
 * anycast 192.88.99.0/24) are real hosts and are not listed. The registries change a few times a
 * decade; docs/intelligence.md (Locations) says which of their entries this table follows.
 */
export const RESERVED_V4: readonly ReservedBlock[] = [
  { cidr: '0.0.0.0/8', name: 'this network', rfc: 'RFC 791 section 3.2' },
  { cidr: '10.0.0.0/8', name: 'private use', rfc: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)', rfc: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', rfc: 'RFC 1122 section 3.2.1.3' },
  { cidr: '169.254.0.0/16', name: 'link local', rfc: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private use', rfc: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', rfc: 'RFC 6890 section 2.1' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { cidr: '192.168.0.0/16', name: 'private use', rfc: 'RFC 1918' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', rfc: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', rfc: 'RFC 5771' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', rfc: 'RFC 919 section 7' },
  { cidr: '240.0.0.0/4', name: 'reserved (former class E)', rfc: 'RFC 1112 section 4' },
];

/**
 * Reserved IPv6 space: the not globally reachable blocks of the IANA IPv6 Special-Purpose Address
 * Registry, multicast, and everything outside global unicast 2000::/3, which the IANA IPv6 Address
 * Space Registry keeps reserved by the IETF. Teredo (2001::/32), 6to4 (2002::/16) and the NAT64
 * well-known prefix (64:ff9b::/96) carry IPv4 addresses and are answered for those (carriedIpv4), and
 * IPv4-mapped addresses parse as IPv4, so none of them is listed.
 */
export const RESERVED_V6: readonly ReservedBlock[] = [
  { cidr: '::/128', name: 'unspecified address', rfc: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', rfc: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', rfc: 'RFC 4291 section 2.5.5.1' },
  { cidr: '64:ff9b:1::/48', name: 'local-use NAT64', rfc: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard only', rfc: 'RFC 6666' },
  { cidr: '2001:2::/48', name: 'benchmarking', rfc: 'RFC 5180' },
  { cidr: '2001:10::/28', name: 'ORCHID (deprecated)', rfc: 'RFC 4843' },
  { cidr: '2001:db8::/32', name: 'documentation', rfc: 'RFC 3849' },
  { cidr: '3fff::/20', name: 'documentation', rfc: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs', rfc: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique local', rfc: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local unicast', rfc: 'RFC 4291' },
  { cidr: 'ff00::/8', name: 'multicast', rfc: 'RFC 4291' },
];

const OUTSIDE_GLOBAL_UNICAST: ReservedBlock = Object.freeze({
  cidr: '::/0 outside 2000::/3',
  name: 'reserved by the IETF (not global unicast)',
  rfc: 'RFC 4291 section 2.4',
});

interface Compiled4 {
  block: ReservedBlock;
  base: number;
  shift: number;
}
interface Compiled6 {
  block: ReservedBlock;
  words: number[];
  len: number;
}

function bitsOf(cidr: string): { text: string; len: number } {
  const slash = cidr.indexOf('/');
  return { text: cidr.slice(0, slash), len: Number(cidr.slice(slash + 1)) };
}

const V4: readonly Compiled4[] = RESERVED_V4.map((block) => {
  const { text, len } = bitsOf(block.cidr);
  const base = text.split('.').reduce((v, o) => v * 256 + Number(o), 0);
  return { block: Object.freeze(block), base: len === 0 ? 0 : base >>> (32 - len), shift: 32 - len };
});

const V6: readonly Compiled6[] = RESERVED_V6.map((block) => {
  const { text, len } = bitsOf(block.cidr);
  // The table's own texts: '::'-compressed groups only, no embedded IPv4.
  const [head, tail = ''] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t].map((g) => Number.parseInt(g, 16));
  const words = [0, 1, 2, 3].map((k) => ((groups[2 * k]! << 16) | groups[2 * k + 1]!) >>> 0);
  return { block: Object.freeze(block), words, len };
});

/** 1 for each first octet that some reserved IPv4 block starts with: most lookups stop at this one read. */
const V4_FIRST_OCTETS = new Uint8Array(256);
for (const c of V4) {
  const from = c.shift >= 24 ? c.base << (c.shift - 24) : c.base >>> (24 - c.shift);
  const count = c.shift >= 24 ? 2 ** (c.shift - 24) : 1;
  V4_FIRST_OCTETS.fill(1, from, from + count);
}

function inPrefix6(w: Uint32Array, p: Compiled6): boolean {
  for (let k = 0, left = p.len; left > 0; k++, left -= 32) {
    if (left >= 32) {
      if (w[k] !== p.words[k]) return false;
    } else if ((w[k]! ^ p.words[k]!) >>> (32 - left) !== 0) return false;
  }
  return true;
}

/** The reserved block that holds the address, the most specific listed first; undefined for public space. */
export function reservedBlock(ip: ParsedIp): ReservedBlock | undefined {
  if (ip.version === 4) {
    const v = ip.v4;
    if (V4_FIRST_OCTETS[v >>> 24] === 0) return undefined;
    for (const c of V4) if (c.shift === 32 || v >>> c.shift === c.base) return c.block;
    return undefined;
  }
  const w = ip.v6;
  // Most IPv6 lookups are global unicast outside the few listed blocks there: two comparisons.
  const top = w[0]! >>> 16;
  if (top >= 0x2000 && top < 0x4000 && top !== 0x2001 && top !== 0x3fff) return undefined;
  for (const c of V6) if (inPrefix6(w, c)) return c.block;
  return top >= 0x2000 && top < 0x4000 ? undefined : OUTSIDE_GLOBAL_UNICAST;
}
