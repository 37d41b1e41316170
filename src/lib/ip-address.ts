/**
 * Strict IP parsing and canonical text (RFC 5952 for IPv6). IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes
 * the IPv4 address; zone ids, leading-zero IPv4 octets (octal ambiguity) and anything else are invalid.
 */
export type ParsedIp =
  | { version: 4 /** host order, 0..2^32-1 */; v4: number; text: string }
  | { version: 6 /** four 32-bit words, most significant first */; v6: Uint32Array; text: string };

const MAX_LEN = 45;

function parseV4(s: string, start: number, end: number): number {
  let value = 0;
  let octets = 0;
  let i = start;
  while (i < end) {
    let n = 0;
    let digits = 0;
    const first = i;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      n = n * 10 + (c - 48);
      digits++;
      i++;
    }
    if (digits === 0 || digits > 3 || n > 255) return -1;
    if (digits > 1 && s.charCodeAt(first) === 48) return -1;
    value = value * 256 + n;
    octets++;
    if (i === end) break;
    if (s.charCodeAt(i) !== 46 || octets === 4) return -1;
    i++;
    if (i === end) return -1;
  }
  return octets === 4 ? value : -1;
}

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Whether the text parseV6Groups last accepted is written as RFC 5952 writes its address (formatV6):
 * lower-case hex, no leading zeros, no dotted tail, and '::' exactly where the longest run of two or
 * more zero groups is (the first on a tie), or nowhere when there is none. Most addresses arrive
 * written so, and the text itself is then the canonical text: formatting it again cost most of an
 * IPv6 parse (about 0.8 of 0.94 µs on the batch bench's addresses).
 */
let v6Canonical = false;

/** Parses IPv6 text into 8 groups; returns false when invalid. Sets v6Canonical. */
function parseV6Groups(s: string, groups: Uint16Array): boolean {
  const len = s.length;
  let i = 0;
  let g = 0;
  let gap = -1; // index in groups where '::' stands
  let plain = true; // lower-case hex, no leading zero, no dotted tail so far
  v6Canonical = false;
  if (len < 2) return false;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
    if (i === len) {
      groups.fill(0);
      v6Canonical = true;
      return true;
    }
  }
  while (i < len) {
    if (g === 8) return false;
    // An embedded IPv4 tail takes the last two groups.
    let j = i;
    let sawDot = false;
    while (j < len && s.charCodeAt(j) !== 58) {
      if (s.charCodeAt(j) === 46) sawDot = true;
      j++;
    }
    if (sawDot) {
      plain = false;
      if (j !== len || g > 6) return false;
      const v4 = parseV4(s, i, len);
      if (v4 < 0) return false;
      groups[g++] = v4 >>> 16;
      groups[g++] = v4 & 0xffff;
      i = len;
      break;
    }
    const n = j - i;
    if (n === 0 || n > 4) return false;
    if (n > 1 && s.charCodeAt(i) === 48) plain = false;
    let v = 0;
    for (let k = i; k < j; k++) {
      const c = s.charCodeAt(k);
      const h = hexVal(c);
      if (h < 0) return false;
      if (c >= 65 && c <= 70) plain = false;
      v = v * 16 + h;
    }
    groups[g++] = v;
    i = j;
    if (i === len) break;
    // at ':'
    i++;
    if (i === len) return false; // trailing single ':'
    if (s.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = g;
      i++;
      if (i === len) break;
    }
  }
  if (gap < 0) {
    if (g !== 8) return false;
  } else {
    if (g === 8) return false; // '::' must stand for at least one group
    const tail = g - gap;
    for (let k = 0; k < tail; k++) groups[7 - k] = groups[g - 1 - k]!;
    for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  }
  if (plain) {
    const run = zeroRun(groups);
    v6Canonical = gap < 0 ? run < 0 : run === gap * 16 + (8 - g);
  }
  return true;
}

/**
 * Where RFC 5952 writes '::' in 8 groups: the first longest run of two or more zero groups, as
 * start * 16 + length; -1 when there is none. formatV6 writes it there, parseV6Groups checks it.
 */
function zeroRun(groups: Uint16Array): number {
  let bestStart = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (groups[k] !== 0) {
      k++;
      continue;
    }
    let e = k + 1;
    while (e < 8 && groups[e] === 0) e++;
    if (e - k > bestLen) {
      bestStart = k;
      bestLen = e - k;
    }
    k = e;
  }
  return bestStart < 0 ? -1 : bestStart * 16 + bestLen;
}

const scratch = new Uint16Array(8);

export function formatV4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** formatV6's groups of the address it writes (reused). */
const formatGroups = new Uint16Array(8);

const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Reused output bytes: the longest IPv6 text is 39 characters. */
const textBytes = Buffer.alloc(40);

/**
 * RFC 5952: lower-case, no leading zeros, the longest run (≥2) of zero groups as '::', first on a tie.
 * Written as bytes into one reused buffer and read out as one flat string: every IPv6 lookup formats
 * its address, and concatenating groups costs four times as much (a string per piece).
 */
export function formatV6(words: Uint32Array): string {
  const groups = formatGroups;
  for (let k = 0; k < 8; k++) groups[k] = k & 1 ? words[k >> 1]! & 0xffff : words[k >> 1]! >>> 16;
  const run = zeroRun(groups);
  const bestStart = run < 0 ? -1 : run >> 4;
  const bestLen = run < 0 ? 1 : run & 15;
  const after = bestStart + bestLen;
  const out = textBytes;
  let n = 0;
  for (let k = 0; k < 8; ) {
    if (k === bestStart) {
      out[n++] = 58;
      out[n++] = 58;
      k = after;
      continue;
    }
    if (k > 0 && k !== after) out[n++] = 58;
    const g = groups[k]!;
    if (g >= 0x1000) out[n++] = HEX_DIGITS[g >>> 12]!;
    if (g >= 0x100) out[n++] = HEX_DIGITS[(g >>> 8) & 15]!;
    if (g >= 0x10) out[n++] = HEX_DIGITS[(g >>> 4) & 15]!;
    out[n++] = HEX_DIGITS[g & 15]!;
    k++;
  }
  return out.toString('latin1', 0, n);
}

/** Returns undefined for anything that is not exactly one IPv4 or IPv6 address. */
export function parseIp(input: string): ParsedIp | undefined {
  if (typeof input !== 'string' || input.length === 0 || input.length > MAX_LEN) return undefined;
  if (input.indexOf(':') < 0) {
    const v4 = parseV4(input, 0, input.length);
    // parseV4 takes only dotted decimal without leading zeros: the input is its own canonical text.
    return v4 < 0 ? undefined : { version: 4, v4, text: input };
  }
  if (!parseV6Groups(input, scratch)) return undefined;
  const words = new Uint32Array(4);
  for (let k = 0; k < 4; k++) words[k] = ((scratch[2 * k]! << 16) | scratch[2 * k + 1]!) >>> 0;
  // IPv4-mapped IPv6 is looked up (and deduplicated) as the IPv4 address.
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) {
    const v4 = words[3]!;
    return { version: 4, v4, text: formatV4(v4) };
  }
  return { version: 6, v6: words, text: v6Canonical ? input : formatV6(words) };
}

/** How an IPv6 address carries an IPv4 address: RFC 3056 (6to4), RFC 4380 (Teredo), RFC 6052 (NAT64 well-known prefix). */
export type Ipv4Carrier = '6to4' | 'teredo' | 'nat64';

/**
 * The IPv4 address an IPv6 address carries, for the transition mechanisms whose prefix says where it
 * is: 6to4 2002:AABB:CCDD::/48 holds it in bits 16..47; Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC
 * holds the client's public address in the last 32 bits, inverted (so NATs that rewrite addresses in
 * payloads leave it alone); the NAT64 well-known prefix 64:ff9b::/96 holds it in the last 32 bits.
 * Undefined for IPv4 and for any other IPv6 address.
 */
export function carriedIpv4(ip: ParsedIp): { v4: number; via: Ipv4Carrier } | undefined {
  if (ip.version !== 6) return undefined;
  const w = ip.v6;
  const w0 = w[0]!;
  if (w0 >>> 16 === 0x2002) return { v4: (((w0 & 0xffff) << 16) | (w[1]! >>> 16)) >>> 0, via: '6to4' };
  if (w0 === 0x20010000) return { v4: (w[3]! ^ 0xffffffff) >>> 0, via: 'teredo' };
  if (w0 === 0x0064ff9b && w[1] === 0 && w[2] === 0) return { v4: w[3]!, via: 'nat64' };
  return undefined;
}
