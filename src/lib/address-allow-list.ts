import { parseIp } from './ip-address.ts';

interface Range {
  version: 4 | 6;
  start: bigint;
  end: bigint;
}

/** Which client addresses may reach a route: a list of CIDRs, or every address. */
export interface AddressAllowList {
  /** The list as configured, for messages. */
  readonly text: string;
  allows(address: string | undefined): boolean;
}

const value = (ip: NonNullable<ReturnType<typeof parseIp>>): bigint => {
  if (ip.version === 4) return BigInt(ip.v4);
  let v = 0n;
  for (let k = 0; k < 4; k++) v = (v << 32n) | BigInt(ip.v6[k]!);
  return v;
};

/**
 * Parses `any`, or a comma list of addresses and CIDRs (`127.0.0.1/8, ::1, 10.0.0.0/8`). A client's
 * IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, as a dual-stack socket reports it) matches its IPv4 form.
 * Returns the problem as a string when the text is not such a list.
 */
export function parseAllowList(text: string): AddressAllowList | string {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === 'any') return { text: 'any', allows: () => true };
  const ranges: Range[] = [];
  for (const part of trimmed.split(',').map((p) => p.trim())) {
    const slash = part.indexOf('/');
    const ip = parseIp(slash < 0 ? part : part.slice(0, slash));
    const bits = ip?.version === 4 ? 32 : 128;
    const len = slash < 0 ? bits : Number(part.slice(slash + 1));
    if (!ip || (slash >= 0 && !/^\d{1,3}$/.test(part.slice(slash + 1))) || !Number.isInteger(len) || len < 0 || len > bits)
      return `'${part.slice(0, 64)}' is not an address or CIDR; give 'any' or a comma list such as 127.0.0.0/8,::1,10.0.0.0/8`;
    const host = (1n << BigInt(bits - len)) - 1n;
    const start = value(ip) & ~host;
    ranges.push({ version: ip.version, start, end: start | host });
  }
  return {
    text: ranges.length ? trimmed : '',
    allows: (address) => {
      const ip = address === undefined ? undefined : parseIp(address);
      if (!ip) return false;
      const v = value(ip);
      return ranges.some((r) => r.version === ip.version && v >= r.start && v <= r.end);
    },
  };
}

/** The default: the machine itself. */
export const LOOPBACK_ONLY = '127.0.0.0/8,::1';
