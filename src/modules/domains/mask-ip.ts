import { parseIp } from '../../lib/ip-address.ts';

/**
 * Hides the host part of a source IP for public output: the last IPv4 octet or the last IPv6 group
 * becomes `x`. IPv6 is masked on its canonical (RFC 5952) form, and the `::` of the first seven groups is
 * chosen as RFC 5952 would, so `2001:db8::1` → `2001:db8::x` and `2001:db8::` → `2001:db8::x`.
 * IPv4-mapped IPv6 is masked as IPv4. Anything unparsable becomes `x`: never echo what we cannot mask.
 */
export function maskIp(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) return 'x';
  if (parsed.version === 4) return `${parsed.v4 >>> 24}.${(parsed.v4 >>> 16) & 255}.${(parsed.v4 >>> 8) & 255}.x`;
  const groups: number[] = [];
  for (const w of parsed.v6) groups.push(w >>> 16, w & 0xffff);
  groups.length = 7;
  // Longest run of at least two zero groups, the first one on a tie (RFC 5952 §4.2).
  let bestStart = -1;
  let bestLen = 1;
  for (let k = 0; k < 7; ) {
    let e = k;
    while (e < 7 && groups[e] === 0) e++;
    if (e - k > bestLen) [bestStart, bestLen] = [k, e - k];
    k = e === k ? k + 1 : e;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  if (bestStart < 0) return `${hex(0, 7)}:x`;
  const tail = hex(bestStart + bestLen, 7);
  return `${hex(0, bestStart)}::${tail === '' ? '' : `${tail}:`}x`;
}
