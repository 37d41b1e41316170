// Wire encoders for ClientHello pieces, shared by the profile definitions and
// the builder. Kept apart from the parser on purpose: a test that round-trips
// build → parse only means something if the two sides share no code.

export interface Extension {
  code: number;
  body: Uint8Array;
}

export type RandomBytes = (n: number) => Uint8Array;

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const u8 = (v: number): Uint8Array => Uint8Array.of(v & 0xff);
export const u16 = (v: number): Uint8Array => Uint8Array.of((v >> 8) & 0xff, v & 0xff);
export const u16s = (list: readonly number[]): Uint8Array => concat(...list.map(u16));

function prefixed(width: 1 | 2 | 3, parts: Uint8Array[]): Uint8Array {
  const body = concat(...parts);
  const max = 2 ** (8 * width) - 1;
  if (body.length > max) throw new RangeError(`vector of ${body.length} bytes exceeds ${width}-byte length`);
  const n = body.length;
  const len = width === 1 ? u8(n) : width === 2 ? u16(n) : Uint8Array.of(n >> 16, (n >> 8) & 0xff, n & 0xff);
  return concat(len, body);
}

export const vec8 = (...parts: Uint8Array[]): Uint8Array => prefixed(1, parts);
export const vec16 = (...parts: Uint8Array[]): Uint8Array => prefixed(2, parts);
export const vec24 = (...parts: Uint8Array[]): Uint8Array => prefixed(3, parts);

const ascii = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'latin1'));

/** A GREASE value (0x?a?a) drawn from one random byte, as BoringSSL does. */
export function greaseFrom(random: RandomBytes): number {
  const hi = (random(1)[0] ?? 0) & 0xf0;
  return ((hi | 0x0a) << 8) | hi | 0x0a;
}

// Key share sizes clients really send; the ML-KEM hybrids carry the 1184-byte
// encapsulation key plus the 32-byte X25519 share.
const KEY_SHARE_LENGTH: ReadonlyMap<number, number> = new Map([
  [0x001d, 32],
  [0x001e, 56],
  [0x0017, 65],
  [0x0018, 97],
  [0x0019, 133],
  [0x11ec, 1216],
  [0x6399, 1216],
]);

export interface KeyShareEntry {
  group: number;
  /** Overrides the key length, e.g. 1 for the single zero byte of a GREASE share. */
  length?: number;
}

export const ext = {
  empty: (code: number): Extension => ({ code, body: new Uint8Array(0) }),
  serverName: (host: string): Extension => ({ code: 0x0000, body: vec16(u8(0), vec16(ascii(host))) }),
  statusRequest: (): Extension => ({ code: 0x0005, body: Uint8Array.of(1, 0, 0, 0, 0) }),
  supportedGroups: (groups: readonly number[]): Extension => ({ code: 0x000a, body: vec16(u16s(groups)) }),
  ecPointFormats: (formats: readonly number[]): Extension => ({ code: 0x000b, body: vec8(Uint8Array.from(formats)) }),
  signatureAlgorithms: (algs: readonly number[], code = 0x000d): Extension => ({ code, body: vec16(u16s(algs)) }),
  heartbeat: (): Extension => ({ code: 0x000f, body: u8(1) }),
  alpn: (ids: readonly string[], code = 0x0010): Extension => ({
    code,
    body: vec16(...ids.map((id) => vec8(ascii(id)))),
  }),
  compressCertificate: (algs: readonly number[]): Extension => ({ code: 0x001b, body: vec8(u16s(algs)) }),
  recordSizeLimit: (limit: number): Extension => ({ code: 0x001c, body: u16(limit) }),
  delegatedCredentials: (algs: readonly number[]): Extension => ({ code: 0x0022, body: vec16(u16s(algs)) }),
  supportedVersions: (versions: readonly number[]): Extension => ({ code: 0x002b, body: vec8(u16s(versions)) }),
  pskKeyExchangeModes: (modes: readonly number[]): Extension => ({ code: 0x002d, body: vec8(Uint8Array.from(modes)) }),
  keyShare: (entries: readonly KeyShareEntry[], random: RandomBytes): Extension => ({
    code: 0x0033,
    body: vec16(
      ...entries.map(({ group, length }) => {
        const n = length ?? KEY_SHARE_LENGTH.get(group) ?? 32;
        const key = n === 1 ? new Uint8Array(1) : Uint8Array.from(random(n));
        // Uncompressed NIST points start with 0x04; keep captures plausible.
        if (group >= 0x0017 && group <= 0x0019) key[0] = 0x04;
        return concat(u16(group), vec16(key));
      }),
    ),
  }),
  /** GREASE ECH as Chrome sends it when no ECH config is known. */
  echGrease: (random: RandomBytes): Extension => {
    const payloadLength = [144, 176, 208, 240][(random(1)[0] ?? 0) & 3]!;
    return {
      code: 0xfe0d,
      body: concat(u8(0), u16(0x0001), u16(0x0001), random(1), vec16(random(32)), vec16(random(payloadLength))),
    };
  },
  renegotiationInfo: (): Extension => ({ code: 0xff01, body: u8(0) }),
};
