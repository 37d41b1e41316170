// Builds wire-valid ClientHello records for the traffic simulator, so the
// honeypot_https feed can be exercised with the same bytes real clients send.
// All randomness is injected, which keeps tests and replays deterministic.
import { PROFILE_PLANS, type HelloPlan } from './client-profiles.ts';
import { concat, u16, u16s, u8, vec16, vec24, vec8, type Extension, type RandomBytes } from './hello-encoding.ts';

export const CLIENT_PROFILES = [
  'chrome',
  'firefox',
  'safari',
  'curl',
  'python-requests',
  'go-http-client',
  'scanner',
  'legacy-tls10',
] as const satisfies readonly (keyof typeof PROFILE_PLANS)[];

export type ClientProfile = (typeof CLIENT_PROFILES)[number];

export interface BuildOptions {
  /** Host name for server_name; omitted means the client connected to a bare IP. The scanner profile never sends one. */
  sni?: string;
  /** Source of random bytes (client random, session id, key shares, GREASE, Chrome's extension order). */
  random: (n: number) => Uint8Array;
}

const CONTENT_TYPE_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXT_PADDING = 0x0015;

/** Takes exactly n bytes from the injected source, refusing short reads rather than emitting zeros. */
function exactRandom(random: (n: number) => Uint8Array): RandomBytes {
  return (n) => {
    const b = random(n);
    if (b.length < n) throw new RangeError(`random(${n}) returned ${b.length} bytes`);
    return b.subarray(0, n);
  };
}

function handshakeMessage(plan: HelloPlan, clientRandom: Uint8Array, sessionId: Uint8Array, extensions: Extension[]): Uint8Array {
  const parts = [
    u16(plan.legacyVersion),
    clientRandom,
    vec8(sessionId),
    vec16(u16s(plan.ciphers)),
    vec8(Uint8Array.from(plan.compression)),
  ];
  if (extensions.length > 0) parts.push(vec16(...extensions.map((e) => concat(u16(e.code), vec16(e.body)))));
  return concat(u8(HANDSHAKE_CLIENT_HELLO), vec24(...parts));
}

/**
 * BoringSSL and OpenSSL (SSL_OP_TLSEXT_PADDING) pad hellos whose handshake
 * message is 256..511 bytes up to 512, because some F5 load balancers hang on
 * that size range. Reproduced so padding appears exactly when it would for real.
 */
function paddingLength(unpaddedLength: number): number | null {
  if (unpaddedLength <= 0xff || unpaddedLength >= 0x200) return null;
  const gap = 0x200 - unpaddedLength;
  return gap >= 4 + 1 ? gap - 4 : 1;
}

/** A TLS record holding one ClientHello shaped like the given client. */
export function buildClientHello(profile: ClientProfile, options: BuildOptions): Uint8Array {
  const random = exactRandom(options.random);
  const clientRandom = random(32);
  const plan = PROFILE_PLANS[profile]({ sni: options.sni, random });
  const sessionId = random(plan.sessionIdLength);

  let extensions = plan.extensions;
  let message = handshakeMessage(plan, clientRandom, sessionId, extensions);
  if (plan.pad) {
    // The padding extension's own 4-byte header is part of the gap being filled.
    const pad = paddingLength(message.length + (extensions.length === 0 ? 2 : 0));
    if (pad !== null) {
      extensions = [...extensions, { code: EXT_PADDING, body: new Uint8Array(pad) }];
      message = handshakeMessage(plan, clientRandom, sessionId, extensions);
    }
  }
  return concat(u8(CONTENT_TYPE_HANDSHAKE), u16(plan.recordVersion), vec16(message));
}
