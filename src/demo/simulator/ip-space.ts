import { formatV4, formatV6, parseIp } from '../../lib/ip-address.ts';
import { randomBits } from './random.ts';
import type { Rng } from './types.ts';

/** A CIDR block as numbers: base is the first address, bits the prefix length. */
export interface Cidr {
  version: 4 | 6;
  base: bigint;
  bits: number;
}

const cache = new Map<string, Cidr>();

export function parseCidr(cidr: string): Cidr {
  const hit = cache.get(cidr);
  if (hit) return hit;
  const [addr, len] = cidr.split('/');
  const ip = parseIp(addr ?? '');
  const bits = Number(len);
  if (!ip || !Number.isInteger(bits)) throw new Error(`bad CIDR ${cidr}`);
  const width = ip.version === 4 ? 32 : 128;
  if (bits < 0 || bits > width) throw new Error(`bad CIDR ${cidr}`);
  const value = ipToBigInt(ip.text);
  const hostBits = BigInt(width - bits);
  const out: Cidr = { version: ip.version, base: (value >> hostBits) << hostBits, bits };
  cache.set(cidr, out);
  return out;
}

/** Numeric value of an address (v4 in 0..2^32, v6 in 0..2^128), for ordering and arithmetic. */
export function ipToBigInt(text: string): bigint {
  const ip = parseIp(text);
  if (!ip) throw new Error(`bad IP ${text}`);
  if (ip.version === 4) return BigInt(ip.v4);
  let v = 0n;
  for (const w of ip.v6) v = (v << 32n) | BigInt(w);
  return v;
}

/** Canonical text (RFC 5952 for v6), the same form lookups use. */
export function formatIp(version: 4 | 6, value: bigint): string {
  if (version === 4) return formatV4(Number(value));
  const words = new Uint32Array(4);
  for (let k = 3; k >= 0; k--) {
    words[k] = Number(value & 0xffffffffn);
    value >>= 32n;
  }
  return formatV6(words);
}

/**
 * A random host address in the block. IPv4 avoids .0 and .255 (rarely assigned to hosts); IPv6 fills
 * the interface id like SLAAC privacy addresses do, which is what residential and mobile v6 look like.
 */
export function addressIn(rng: Rng, cidr: string): string {
  const c = parseCidr(cidr);
  const width = c.version === 4 ? 32 : 128;
  for (;;) {
    const v = c.base + randomBits(rng, width - c.bits);
    if (c.version === 6 || ((v & 255n) !== 0n && (v & 255n) !== 255n) || width - c.bits < 8) return formatIp(c.version, v);
  }
}

/** A block of prefix length `len` (clamped to the parent) aligned inside the parent block. */
export function rangeIn(rng: Rng, cidr: string, len: number): { start: string; end: string } {
  const c = parseCidr(cidr);
  const width = c.version === 4 ? 32 : 128;
  const bits = Math.max(len, c.bits);
  const hostBits = BigInt(width - bits);
  const offset = randomBits(rng, bits - c.bits) << hostBits;
  const start = c.base + offset;
  const end = start + (1n << hostBits) - 1n;
  return { start: formatIp(c.version, start), end: formatIp(c.version, end) };
}

export function contains(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  const width = c.version === 4 ? 32 : 128;
  if ((ip.includes(':') ? 6 : 4) !== c.version) return false;
  return ipToBigInt(ip) >> BigInt(width - c.bits) === c.base >> BigInt(width - c.bits);
}
