import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildClientHello, CLIENT_PROFILES, type ClientProfile } from './client-hello-builder.ts';
import { parseClientHello } from '../../modules/tls/client-hello-parser.ts';
import type { ClientHelloDetails } from '../../modules/tls/client-hello.ts';
import { seededRandom } from '../../../test/helpers/test-hellos.ts';

interface Expected {
  ja4: string;
  versions: string[];
  alpn: string[];
  grease: boolean;
  ciphers: number;
  padded: boolean;
}

// JA4 values marked "published" were seen in public captures and pins, and
// the builder reproduces them byte-for-byte from the profile lists:
//   chrome  t13d1516h2_8daaf6152771_d8a2da3f94cd  Chrome 131+ (ML-KEM, ALPS 0x44cd, ECH GREASE)
//   firefox t13d1715h2_5b57614c22b0_3d5424432f57  FoxIO tls12.pcap
//   safari  t13d2014h2_a09f3c656075_14788d8d241b  Safari 17 macOS
//   curl    t13d3112h2_e8f1e7e78f70_b26ce05bbdd6  curl + OpenSSL 3.0 (published JA4_r lists padding, no ticket)
//   go      t13d1312h2_f57a46bbacb6_ab7e3b40a677  Go >= 1.24 net/http
// python-requests: the a and b parts (t13d1812h1_85036bcba153) are published;
// c is the OpenSSL 3.0 extension set shared with curl. scanner and
// legacy-tls10 are our own shapes, pinned only to catch accidental change.
const EXPECTED: Record<ClientProfile, Expected> = {
  chrome: {
    ja4: 't13d1516h2_8daaf6152771_d8a2da3f94cd',
    versions: ['GREASE', 'TLS 1.3', 'TLS 1.2'],
    alpn: ['h2', 'http/1.1'],
    grease: true,
    ciphers: 16,
    padded: false,
  },
  firefox: {
    ja4: 't13d1715h2_5b57614c22b0_3d5424432f57',
    versions: ['TLS 1.3', 'TLS 1.2'],
    alpn: ['h2', 'http/1.1'],
    grease: false,
    ciphers: 17,
    padded: true,
  },
  safari: {
    ja4: 't13d2014h2_a09f3c656075_14788d8d241b',
    versions: ['GREASE', 'TLS 1.3', 'TLS 1.2', 'TLS 1.1', 'TLS 1.0'],
    alpn: ['h2', 'http/1.1'],
    grease: true,
    ciphers: 21,
    padded: true,
  },
  curl: {
    ja4: 't13d3112h2_e8f1e7e78f70_b26ce05bbdd6',
    versions: ['TLS 1.3', 'TLS 1.2'],
    alpn: ['h2', 'http/1.1'],
    grease: false,
    ciphers: 31,
    padded: true,
  },
  'python-requests': {
    ja4: 't13d1812h1_85036bcba153_b26ce05bbdd6',
    versions: ['TLS 1.3', 'TLS 1.2'],
    alpn: ['http/1.1'],
    grease: false,
    ciphers: 18,
    padded: true,
  },
  'go-http-client': {
    ja4: 't13d1312h2_f57a46bbacb6_ab7e3b40a677',
    versions: ['TLS 1.3', 'TLS 1.2'],
    alpn: ['h2', 'http/1.1'],
    grease: false,
    ciphers: 13,
    padded: false,
  },
  scanner: { ja4: 't12i170400_dacdd21ba229_523ee6578fcb', versions: [], alpn: [], grease: false, ciphers: 17, padded: false },
  'legacy-tls10': { ja4: 't10d180500_1a6063fbe363_282f11336259', versions: [], alpn: [], grease: false, ciphers: 18, padded: false },
};

const SNI = 'www.example.com';

/** sni null means "connected to a bare IP". */
function roundTrip(
  profile: ClientProfile,
  sni: string | null = SNI,
  seed: string = profile,
): { bytes: Uint8Array; hello: ClientHelloDetails } {
  const bytes = buildClientHello(profile, sni === null ? { random: seededRandom(seed) } : { sni, random: seededRandom(seed) });
  const hello = parseClientHello(bytes);
  assert.ok(hello, `${profile} must parse`);
  return { bytes, hello };
}

describe('buildClientHello', () => {
  it('should offer every profile to the simulator', () => {
    assert.deepEqual([...CLIENT_PROFILES].sort(), Object.keys(EXPECTED).sort());
  });

  for (const profile of CLIENT_PROFILES) {
    it(`should round-trip ${profile} through the parser`, () => {
      const want = EXPECTED[profile];
      const { bytes, hello } = roundTrip(profile);
      assert.equal(bytes[0], 22);
      assert.equal(((bytes[3]! << 8) | bytes[4]!) + 5, bytes.length, 'record length covers exactly the hello');
      assert.equal(hello.sni, profile === 'scanner' ? null : SNI);
      assert.equal(hello.ja4, want.ja4);
      assert.deepEqual(hello.supported_versions, want.versions);
      assert.deepEqual(hello.alpn, want.alpn);
      assert.equal(hello.has_grease, want.grease);
      assert.equal(hello.cipher_suites.length, want.ciphers);
      assert.ok(
        hello.cipher_suites.every((c) => !c.name.startsWith('unknown_')),
        'every cipher is in the name table',
      );
      assert.ok(
        hello.extensions.every((e) => !e.name.startsWith('unknown_')),
        'every extension is in the name table',
      );
      const padded = hello.extensions.some((e) => e.code === 0x0015);
      assert.equal(padded, want.padded);
      // The padding rule fills the handshake message to exactly 512 bytes.
      if (padded) assert.equal(bytes.length - 5, 512);
    });
  }

  it("should carry Chrome's post-quantum share, ALPS and ECH GREASE", () => {
    const { hello } = roundTrip('chrome');
    assert.deepEqual(hello.key_share_groups, ['GREASE', 'X25519MLKEM768', 'x25519']);
    assert.equal(hello.extensions.find((e) => e.code === 0x0033)!.length, 2 + (4 + 1) + (4 + 1216) + (4 + 32));
    assert.equal(hello.application_settings, true);
    assert.ok(hello.extensions.some((e) => e.name === 'encrypted_client_hello'));
    assert.equal(hello.extensions[0]!.name, 'GREASE');
    assert.equal(hello.extensions.at(-1)!.name, 'GREASE');
    assert.equal(hello.session_id_length, 32);
  });

  it("should shuffle Chrome's extensions per connection without changing its JA4", () => {
    const orders = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const { hello } = roundTrip('chrome', SNI, `conn-${i}`);
      assert.equal(hello.ja4, EXPECTED.chrome.ja4);
      orders.add(
        hello.extensions
          .slice(1, -1)
          .map((e) => e.code)
          .join(','),
      );
    }
    assert.ok(orders.size > 1, 'extension order should vary between connections');
  });

  it('should be deterministic for a given random source', () => {
    for (const profile of CLIENT_PROFILES) {
      assert.deepEqual(roundTrip(profile, SNI, 'same').bytes, roundTrip(profile, SNI, 'same').bytes, profile);
    }
  });

  it('should omit SNI when no host is given and fingerprint as an IP connection', () => {
    const { hello } = roundTrip('curl', null);
    assert.equal(hello.sni, null);
    assert.match(hello.ja4, /^t13i3111h2_/);
  });

  it('should keep the scanner and legacy client minimal', () => {
    const scanner = roundTrip('scanner').hello;
    assert.equal(scanner.session_id_length, 0);
    assert.equal(scanner.handshake_version, 'TLS 1.2');
    const legacy = roundTrip('legacy-tls10').hello;
    assert.equal(legacy.handshake_version, 'TLS 1.0');
    assert.deepEqual(legacy.compression_methods, [1, 0]);
    assert.deepEqual(legacy.signature_algorithms, []);
  });

  it('should refuse a random source that returns short reads', () => {
    assert.throws(() => buildClientHello('firefox', { random: () => new Uint8Array(0) }), RangeError);
  });
});
