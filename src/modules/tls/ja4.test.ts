import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { alpnChars, ja4, ja4Parts, type Ja4Input } from './ja4.ts';
import { parseClientHello } from './client-hello-parser.ts';
import { codes, recordFromLists, type HelloLists } from '../../../test/helpers/test-hellos.ts';

const ja4Of = (lists: HelloLists): string => {
  const hello = parseClientHello(recordFromLists(lists));
  assert.ok(hello, 'vector hello must parse');
  return hello.ja4;
};

// Expected values are FoxIO's own outputs for their test pcaps
// (rust/ja4/src/snapshots/ja4__insta@*.snap in github.com/FoxIO-LLC/ja4) or the
// worked example in technical_details/JA4.md. The code lists were extracted
// from those pcaps by third parties; each hash was re-derived by hand, e.g.
//   node -e 'console.log(require("crypto").createHash("sha256")
//     .update("002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9")
//     .digest("hex").slice(0,12))'   → 8daaf6152771
const CHROME_CIPHERS = '1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035';
const CHROME_SIGALGS = codes('0403,0804,0401,0503,0805,0501,0806,0601');

describe('ja4 published vectors', () => {
  it('should match the spec example and browsers-x509.pcapng (Chrome, GREASE)', () => {
    // JA4_r: t13d1516h2_002f,…,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,…,0601
    assert.equal(
      ja4Of({
        ciphers: codes(`aaaa,${CHROME_CIPHERS}`),
        extensions: codes('6a6a,000d,0000,000a,0005,000b,002b,001b,ff01,0033,4469,002d,0023,0017,0012,0010,0a0a,0015'),
        sigAlgs: CHROME_SIGALGS,
        alpn: ['h2'],
        supportedVersions: codes('7a7a,0304,0303'),
      }),
      't13d1516h2_8daaf6152771_e5627efa2ab1',
    );
  });

  it('should match the spec worked example without signature algorithms (no trailing underscore)', () => {
    // sha256("0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01") → 6d807ffa2a79
    const input: Ja4Input = {
      handshake_version: 'TLS 1.2',
      supported_versions: ['TLS 1.3'],
      alpn: ['h2'],
      signature_algorithms: [],
      cipher_suites: codes(CHROME_CIPHERS).map((code) => ({ code, name: '' })),
      extensions: codes('001b,0000,0033,0010,4469,0017,002d,000d,0005,0023,0012,002b,ff01,000b,000a,0015').map((code) => ({
        code,
        name: '',
        length: 0,
      })),
    };
    assert.equal(ja4Parts(input).extensionsAndSigAlgs, '0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01');
    assert.equal(ja4(input), 't13d1516h2_8daaf6152771_6d807ffa2a79');
  });

  it('should match badcurveball.pcap (16 ciphers incl. 3DES, rsa_pkcs1_sha1)', () => {
    assert.equal(
      ja4Of({
        ciphers: codes(`aaaa,${CHROME_CIPHERS},000a`),
        extensions: codes('4a4a,0000,0017,ff01,000a,000b,0023,0010,0005,000d,0012,0033,002d,002b,001b,7a7a,0015'),
        sigAlgs: codes('0403,0804,0401,0503,0805,0501,0806,0601,0201'),
        alpn: ['h2'],
      }),
      't13d1615h2_46e7e9700bed_45f260be83e2',
    );
  });

  it('should match latest.pcapng stream 3 (TLS 1.2, no supported_versions, no ALPN)', () => {
    assert.equal(
      ja4Of({
        ciphers: codes('c02c,c02b,c030,c02f,c024,c023,c028,c027,c00a,c009,c014,c013,009d,009c,003d,003c,0035,002f,000a'),
        extensions: codes('0000,0005,000a,000b,000d,0023,0017,ff01'),
        sigAlgs: codes('0804,0805,0806,0401,0501,0201,0403,0503,0203,0202,0601,0603'),
      }),
      't12d190800_d83cc789557e_7af1ed941c26',
    );
  });

  it('should match latest.pcapng stream 5 (Chrome with pre_shared_key)', () => {
    assert.equal(
      ja4Of({
        ciphers: codes(`0a0a,${CHROME_CIPHERS}`),
        extensions: codes('5a5a,000d,0010,0000,000b,0023,4469,ff01,0033,000a,002d,002b,0005,0017,0012,001b,6a6a,0029'),
        sigAlgs: CHROME_SIGALGS,
        alpn: ['h2'],
      }),
      't13d1516h2_8daaf6152771_9b887d9acb53',
    );
  });

  it('should match tls-alpn-h2.pcap (46 ciphers; 0xeeee-style sigalgs are not GREASE and count)', () => {
    assert.equal(
      ja4Of({
        ciphers: codes(
          'c030,c02c,c028,c024,c014,c00a,009f,006b,0039,cca9,cca8,ccaa,ff85,00c4,0088,0081,009d,003d,0035,00c0,0084,c02f,c02b,c027,c023,c013,c009,009e,0067,0033,00be,0045,009c,003c,002f,00ba,0041,c011,c007,0005,0004,c012,c008,0016,000a,00ff',
        ),
        extensions: codes('0000,000b,000a,000d,0010'),
        sigAlgs: codes('0601,0603,efef,0501,0503,0401,0403,eeee,eded,0301,0303,0201,0203'),
        alpn: ['h2'],
      }),
      't12d4605h2_85626a9a5f7f_aaf95bb78ec9',
    );
  });

  it('should match tls12.pcap (Firefox, no GREASE)', () => {
    assert.equal(
      ja4Of({
        ciphers: codes('1301,1303,1302,c02b,c02f,cca9,cca8,c02c,c030,c00a,c009,c013,c014,009c,009d,002f,0035'),
        extensions: codes('0000,0017,ff01,000a,000b,0023,0010,0005,0022,0033,002b,000d,002d,001c,0015'),
        sigAlgs: codes('0403,0503,0603,0804,0805,0806,0401,0501,0601,0203,0201'),
        alpn: ['h2'],
      }),
      't13d1715h2_5b57614c22b0_3d5424432f57',
    );
  });

  it('should match the widely published Chrome value with ECH GREASE (t13d1517h2…b1ff8ab2d16f)', () => {
    // Sorted exts add fe0d to the spec example; sha256 of that + "_" + sigalgs → b1ff8ab2d16f.
    assert.equal(
      ja4Of({
        ciphers: codes(`1a1a,${CHROME_CIPHERS}`),
        extensions: codes('3a3a,0000,0017,ff01,000a,000b,0023,0010,0005,000d,0012,0033,002d,002b,001b,4469,fe0d,baba,0015'),
        sigAlgs: CHROME_SIGALGS,
        alpn: ['h2'],
      }),
      't13d1517h2_8daaf6152771_b1ff8ab2d16f',
    );
  });
});

describe('ja4 rules', () => {
  it('should ignore GREASE inside signature_algorithms (Chrome 152 behaviour, FoxIO issue #305)', () => {
    const base: HelloLists = { ciphers: codes(CHROME_CIPHERS), extensions: codes('0000,000d,0010,002b'), sigAlgs: CHROME_SIGALGS };
    assert.equal(ja4Of({ ...base, sigAlgs: [0x8a8a, ...CHROME_SIGALGS] }), ja4Of(base));
  });

  it('should derive the ALPN characters as the spec examples say', () => {
    const bytes = (...b: number[]): string => String.fromCharCode(...b);
    assert.equal(alpnChars(['h2']), 'h2');
    assert.equal(alpnChars(['http/1.1', 'h2']), 'h1');
    assert.equal(alpnChars(['h']), 'hh');
    assert.equal(alpnChars([]), '00');
    assert.equal(alpnChars(['']), '00');
    assert.equal(alpnChars([bytes(0xab)]), 'ab');
    assert.equal(alpnChars([bytes(0xab, 0xcd)]), 'ad');
    assert.equal(alpnChars([bytes(0x30, 0xab)]), '3b');
    assert.equal(alpnChars([bytes(0x30, 0x31, 0xab, 0xcd)]), '3d');
    assert.equal(alpnChars([bytes(0x30, 0xab, 0xcd, 0x31)]), '01');
  });

  it('should take the version from supported_versions, else the hello version', () => {
    const base: HelloLists = { ciphers: [0x002f], extensions: codes('0000,002b') };
    assert.match(ja4Of({ ...base, supportedVersions: codes('fafa,0303,0304') }), /^t13d/);
    // Only GREASE listed: nothing usable, so fall back to the hello's own version.
    assert.match(ja4Of({ ...base, supportedVersions: codes('fafa'), version: 0x0302 }), /^t11d/);
    assert.match(ja4Of({ ciphers: [0x002f], extensions: [], version: 0x0300 }), /^ts3i/);
    assert.match(ja4Of({ ...base, supportedVersions: [0x7f1c] }), /^t00d/);
  });

  it('should use zeros for empty cipher and extension lists and cap counts at 99', () => {
    assert.equal(ja4Of({ ciphers: [], extensions: [] }), 't12i000000_000000000000_000000000000');
    // SNI and ALPN count but are not hashed, so the extension hash is empty too.
    assert.match(ja4Of({ ciphers: [0x002f], extensions: codes('0000,0010') }), /^t12d0102h2_[0-9a-f]{12}_000000000000$/);
    const many = Array.from({ length: 120 }, (_, i) => 0x0100 + i);
    assert.match(ja4Of({ ciphers: many, extensions: [] }), /^t12i9900/);
  });
});
