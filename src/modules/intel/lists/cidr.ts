import { formatV4, formatV6, parseIp } from '../../../lib/ip-address.ts';

/**
 * One IPv4 or IPv6 network. `start` and `end` are the first and last address as four big-endian
 * u32 words (IPv4 uses word 3 only, so v4 and v6 never mix), as the range tables keep them.
 */
export interface Cidr {
  version: 4 | 6;
  bits: number;
  start: Uint32Array;
  end: Uint32Array;
  /** Canonical text: the network address (RFC 5952 for IPv6) and its prefix length; /32 or /128 for one address. */
  text: string;
}

export type CidrParse =
  | { ok: true; cidr: Cidr /** host bits were set and have been cleared */; normalised: boolean }
  | { ok: false; reason: string };

const BITS = /^\d{1,3}$/;

/** Parses `a.b.c.d[/n]` or `x::y[/n]` strictly (the address through parseIp); host bits set are cleared and reported. */
export function parseCidr(input: string): CidrParse {
  const text = input.trim();
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIp(addr);
  if (!ip) return { ok: false, reason: `not an IP address: '${addr.slice(0, 60)}'` };
  // ::ffff:a.b.c.d/n is the IPv4 network a.b.c.d/(n-96).
  const mapped = ip.version === 4 && addr.includes(':');
  const width = ip.version === 4 ? 32 : 128;
  let bits = width;
  if (slash >= 0) {
    const b = text.slice(slash + 1);
    if (!BITS.test(b)) return { ok: false, reason: `bad prefix length '${b.slice(0, 20)}'` };
    bits = Number(b) - (mapped ? 96 : 0);
    if (bits < 0 || bits > width) return { ok: false, reason: `prefix length /${b} out of range for IPv${ip.version}` };
  }
  const start = new Uint32Array(4);
  if (ip.version === 4) start[3] = ip.v4;
  else start.set(ip.v6);
  const first = 128 - width + bits;
  const end = new Uint32Array(4);
  let normalised = false;
  for (let w = 0; w < 4; w++) {
    // Bits of word w at or after `first` are host bits.
    const hostFrom = Math.max(0, Math.min(32, first - 32 * w));
    const hostMask = hostFrom >= 32 ? 0 : (0xffffffff >>> hostFrom) >>> 0;
    if (w === 3 || ip.version === 6) {
      if ((start[w]! & hostMask) !== 0) normalised = true;
      start[w] = (start[w]! & ~hostMask) >>> 0;
      end[w] = (start[w]! | hostMask) >>> 0;
    }
  }
  const base = ip.version === 4 ? formatV4(start[3]!) : formatV6(start);
  return { ok: true, normalised, cidr: { version: ip.version, bits, start, end, text: `${base}/${bits}` } };
}

/** Orders IPv4 before IPv6, then by network address, then shorter prefix first. */
export function compareCidrs(a: Cidr, b: Cidr): number {
  if (a.version !== b.version) return a.version - b.version;
  for (let w = 0; w < 4; w++) if (a.start[w] !== b.start[w]) return a.start[w]! < b.start[w]! ? -1 : 1;
  return a.bits - b.bits;
}

/** Sorted, exact duplicates removed (overlapping networks are kept: each is what the publisher listed). */
export function canonicalCidrs(cidrs: Iterable<Cidr>): Cidr[] {
  const sorted = [...cidrs].sort(compareCidrs);
  return sorted.filter((c, i) => i === 0 || compareCidrs(sorted[i - 1]!, c) !== 0);
}
