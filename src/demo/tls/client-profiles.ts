// ClientHello shapes of the clients the simulator imitates. Each list mirrors
// what the real client puts on the wire (order included), because JA4 and any
// analyst reading the feed key on exactly these details. Where a published
// capture exists, client-hello-builder.test.ts pins the resulting JA4.
import { ext, greaseFrom, type Extension, type RandomBytes } from './hello-encoding.ts';

export interface ProfileContext {
  sni: string | undefined;
  random: RandomBytes;
}

export interface HelloPlan {
  recordVersion: number;
  legacyVersion: number;
  sessionIdLength: number;
  ciphers: number[];
  compression: number[];
  extensions: Extension[];
  /** Apply the BoringSSL/OpenSSL rule that pads 256..511-byte hellos to 512 (F5 bug workaround). */
  pad: boolean;
}

const TLS10 = 0x0301;
const TLS12 = 0x0303;
const TLS13 = 0x0304;

// Cipher order as each stack sends it.
const CHROME_CIPHERS = [
  0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035,
];
const FIREFOX_CIPHERS = [
  0x1301, 0x1303, 0x1302, 0xc02b, 0xc02f, 0xcca9, 0xcca8, 0xc02c, 0xc030, 0xc00a, 0xc009, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035,
];
const SAFARI_CIPHERS = [
  0x1301, 0x1302, 0x1303, 0xc02c, 0xc02b, 0xcca9, 0xc030, 0xc02f, 0xcca8, 0xc00a, 0xc009, 0xc014, 0xc013, 0x009d, 0x009c, 0x0035, 0x002f,
  0xc008, 0xc012, 0x000a,
];
// OpenSSL 3.0 DEFAULT list (curl leaves it alone).
const OPENSSL_CIPHERS = [
  0x1302, 0x1303, 0x1301, 0xc02c, 0xc030, 0x009f, 0xcca9, 0xcca8, 0xccaa, 0xc02b, 0xc02f, 0x009e, 0xc024, 0xc028, 0x006b, 0xc023, 0xc027,
  0x0067, 0xc00a, 0xc014, 0x0039, 0xc009, 0xc013, 0x0033, 0x009d, 0x009c, 0x003d, 0x003c, 0x0035, 0x002f, 0x00ff,
];
// CPython >= 3.10 default context: "ECDH+AESGCM:ECDH+CHACHA20:ECDH+AES:DHE+AES:!SHA1:!AESCCM…".
const PYTHON_CIPHERS = [
  0x1302, 0x1303, 0x1301, 0xc02c, 0xc030, 0xc02b, 0xc02f, 0xcca9, 0xcca8, 0xc024, 0xc028, 0xc023, 0xc027, 0x009f, 0x009e, 0x006b, 0x0067,
  0x00ff,
];
// Go >= 1.22 on AES-NI hardware (RSA key exchange suites no longer offered).
const GO_CIPHERS = [0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc009, 0xc013, 0xc00a, 0xc014];
const SCANNER_CIPHERS = [
  0xc02f, 0xc02b, 0xc030, 0xc02c, 0xcca8, 0xcca9, 0xc013, 0xc009, 0xc014, 0xc00a, 0x009c, 0x009d, 0x002f, 0x0035, 0xc012, 0x000a, 0x0005,
];
const LEGACY_CIPHERS = [
  0xc014, 0xc00a, 0x0039, 0x0038, 0x0035, 0xc013, 0xc009, 0x0033, 0x0032, 0x002f, 0xc012, 0xc008, 0x0016, 0x0013, 0x000a, 0x0005, 0x0004,
  0x00ff,
];

const CHROME_SIGALGS = [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601];
const FIREFOX_SIGALGS = [0x0403, 0x0503, 0x0603, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0203, 0x0201];
// Safari really lists rsa_pss_rsae_sha384 twice.
const SAFARI_SIGALGS = [0x0403, 0x0804, 0x0401, 0x0503, 0x0203, 0x0805, 0x0805, 0x0501, 0x0806, 0x0601, 0x0201];
const OPENSSL_SIGALGS = [
  0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0809, 0x080a, 0x080b, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0302,
  0x0402, 0x0502, 0x0602,
];
const GO_SIGALGS = [0x0804, 0x0403, 0x0807, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0503, 0x0603];
const SCANNER_SIGALGS = [0x0401, 0x0403, 0x0501, 0x0503, 0x0601, 0x0603, 0x0201, 0x0203];

const H2_H1 = ['h2', 'http/1.1'];
const sni = (ctx: ProfileContext): Extension[] => (ctx.sni === undefined ? [] : [ext.serverName(ctx.sni)]);

/** Uniform-enough Fisher–Yates from injected bytes (modulo bias is irrelevant at these sizes). */
function shuffle<T>(items: T[], random: RandomBytes): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const r = Buffer.from(random(4)).readUInt32BE(0) % (i + 1);
    [out[i], out[r]] = [out[r]!, out[i]!];
  }
  return out;
}

/** Chrome 131+ (BoringSSL): GREASE everywhere, ML-KEM share, ALPS 0x44cd, ECH GREASE, permuted extensions. */
function chrome(ctx: ProfileContext): HelloPlan {
  const { random } = ctx;
  const cipherGrease = greaseFrom(random);
  const groupGrease = greaseFrom(random);
  const versionGrease = greaseFrom(random);
  const extGrease1 = greaseFrom(random);
  let extGrease2 = greaseFrom(random);
  // BoringSSL never repeats an extension type, so the two GREASE extensions differ.
  if (extGrease2 === extGrease1) extGrease2 ^= 0x1010;
  const middle = shuffle(
    [
      ...sni(ctx),
      ext.empty(0x0017),
      ext.renegotiationInfo(),
      ext.supportedGroups([groupGrease, 0x11ec, 0x001d, 0x0017, 0x0018]),
      ext.ecPointFormats([0]),
      ext.empty(0x0023),
      ext.alpn(H2_H1),
      ext.statusRequest(),
      ext.signatureAlgorithms(CHROME_SIGALGS),
      ext.empty(0x0012),
      ext.keyShare([{ group: groupGrease, length: 1 }, { group: 0x11ec }, { group: 0x001d }], random),
      ext.pskKeyExchangeModes([1]),
      ext.supportedVersions([versionGrease, TLS13, TLS12]),
      ext.compressCertificate([0x0002]),
      ext.alpn(['h2'], 0x44cd),
      ext.echGrease(random),
    ],
    random,
  );
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 32,
    ciphers: [cipherGrease, ...CHROME_CIPHERS],
    compression: [0],
    extensions: [ext.empty(extGrease1), ...middle, { code: extGrease2, body: new Uint8Array(1) }],
    pad: true,
  };
}

/** Firefox (NSS) shape of the FoxIO tls12.pcap capture. */
function firefox(ctx: ProfileContext): HelloPlan {
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 32,
    ciphers: FIREFOX_CIPHERS,
    compression: [0],
    extensions: [
      ...sni(ctx),
      ext.empty(0x0017),
      ext.renegotiationInfo(),
      ext.supportedGroups([0x001d, 0x0017, 0x0018, 0x0019, 0x0100, 0x0101]),
      ext.ecPointFormats([0]),
      ext.empty(0x0023),
      ext.alpn(H2_H1),
      ext.statusRequest(),
      ext.delegatedCredentials([0x0403, 0x0503, 0x0603, 0x0203]),
      ext.keyShare([{ group: 0x001d }, { group: 0x0017 }], ctx.random),
      ext.supportedVersions([TLS13, TLS12]),
      ext.signatureAlgorithms(FIREFOX_SIGALGS),
      ext.pskKeyExchangeModes([1]),
      ext.recordSizeLimit(0x4001),
    ],
    pad: true,
  };
}

/** Safari 17 (Apple's BoringSSL): GREASE but a fixed extension order, still offers TLS 1.0/1.1. */
function safari(ctx: ProfileContext): HelloPlan {
  const { random } = ctx;
  const groupGrease = greaseFrom(random);
  const extGrease1 = greaseFrom(random);
  let extGrease2 = greaseFrom(random);
  if (extGrease2 === extGrease1) extGrease2 ^= 0x1010;
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 32,
    ciphers: [greaseFrom(random), ...SAFARI_CIPHERS],
    compression: [0],
    extensions: [
      ext.empty(extGrease1),
      ...sni(ctx),
      ext.empty(0x0017),
      ext.renegotiationInfo(),
      ext.supportedGroups([groupGrease, 0x001d, 0x0017, 0x0018, 0x0019]),
      ext.ecPointFormats([0]),
      ext.alpn(H2_H1),
      ext.statusRequest(),
      ext.signatureAlgorithms(SAFARI_SIGALGS),
      ext.empty(0x0012),
      ext.keyShare([{ group: groupGrease, length: 1 }, { group: 0x001d }], random),
      ext.pskKeyExchangeModes([1]),
      ext.supportedVersions([greaseFrom(random), TLS13, TLS12, 0x0302, TLS10]),
      ext.compressCertificate([0x0001]),
      { code: extGrease2, body: new Uint8Array(1) },
    ],
    pad: true,
  };
}

/** OpenSSL 3.0 client as curl and CPython drive it (SSL_OP_ALL pads; no session ticket offered). */
function openssl(ctx: ProfileContext, ciphers: number[], alpn: string[]): HelloPlan {
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 32,
    ciphers,
    compression: [0],
    extensions: [
      ...sni(ctx),
      ext.ecPointFormats([0, 1, 2]),
      ext.supportedGroups([0x001d, 0x0017, 0x001e, 0x0019, 0x0018, 0x0100, 0x0101, 0x0102, 0x0103, 0x0104]),
      ext.alpn(alpn),
      ext.empty(0x0016),
      ext.empty(0x0017),
      ext.empty(0x0031),
      ext.signatureAlgorithms(OPENSSL_SIGALGS),
      ext.supportedVersions([TLS13, TLS12]),
      ext.pskKeyExchangeModes([1]),
      ext.keyShare([{ group: 0x001d }], ctx.random),
    ],
    pad: true,
  };
}

/** Go >= 1.24 crypto/tls under net/http: ML-KEM share, no session cache so no ticket/PSK extensions, never pads. */
function goHttpClient(ctx: ProfileContext): HelloPlan {
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 32,
    ciphers: GO_CIPHERS,
    compression: [0],
    extensions: [
      ...sni(ctx),
      ext.statusRequest(),
      ext.supportedGroups([0x11ec, 0x001d, 0x0017, 0x0018, 0x0019]),
      ext.ecPointFormats([0]),
      ext.signatureAlgorithms(GO_SIGALGS),
      ext.signatureAlgorithms(GO_SIGALGS, 0x0032),
      ext.renegotiationInfo(),
      ext.alpn(H2_H1),
      ext.empty(0x0012),
      ext.supportedVersions([TLS13, TLS12]),
      ext.keyShare([{ group: 0x11ec }, { group: 0x001d }], ctx.random),
      ext.empty(0x0017),
    ],
    pad: false,
  };
}

/** zgrab/masscan-style probe: TLS 1.2 only, addressed to an IP (no SNI), no ALPN, no session id. */
function scanner(): HelloPlan {
  return {
    recordVersion: TLS10,
    legacyVersion: TLS12,
    sessionIdLength: 0,
    ciphers: SCANNER_CIPHERS,
    compression: [0],
    extensions: [
      ext.supportedGroups([0x0017, 0x0018, 0x0019]),
      ext.ecPointFormats([0]),
      ext.signatureAlgorithms(SCANNER_SIGALGS),
      ext.renegotiationInfo(),
    ],
    pad: false,
  };
}

/** OpenSSL 1.0.0-era TLS 1.0-only client: no signature_algorithms, DEFLATE still offered. */
function legacyTls10(ctx: ProfileContext): HelloPlan {
  return {
    recordVersion: TLS10,
    legacyVersion: TLS10,
    sessionIdLength: 0,
    ciphers: LEGACY_CIPHERS,
    compression: [1, 0],
    extensions: [
      ...sni(ctx),
      ext.ecPointFormats([0, 1, 2]),
      ext.supportedGroups([0x0019, 0x0018, 0x0017]),
      ext.empty(0x0023),
      ext.heartbeat(),
    ],
    pad: false,
  };
}

export const PROFILE_PLANS = {
  chrome,
  firefox,
  safari,
  curl: (ctx: ProfileContext) => openssl(ctx, OPENSSL_CIPHERS, H2_H1),
  'python-requests': (ctx: ProfileContext) => openssl(ctx, PYTHON_CIPHERS, ['http/1.1']),
  'go-http-client': goHttpClient,
  scanner,
  'legacy-tls10': legacyTls10,
} satisfies Record<string, (ctx: ProfileContext) => HelloPlan>;
