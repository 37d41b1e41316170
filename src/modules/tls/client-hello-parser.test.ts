import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseClientHello } from './client-hello-parser.ts';
import { buildClientHello, CLIENT_PROFILES } from '../../demo/tls/client-hello-builder.ts';
import { concat, u16, u16s, u8, vec16, vec24, vec8 } from '../../demo/tls/hello-encoding.ts';
import { handshakeFromLists, recordFromLists, seededRandom } from '../../../test/helpers/test-hellos.ts';

const valid = recordFromLists({
  ciphers: [0x1301, 0xc02f],
  extensions: [0x0000, 0x000a, 0x000b, 0x000d, 0x0010, 0x002b, 0x002d, 0x0033],
  sigAlgs: [0x0403, 0x0804],
  alpn: ['h2', 'http/1.1'],
  sni: 'honeypot.example',
});

describe('parseClientHello', () => {
  it('should decode every reported field of a record', () => {
    const h = parseClientHello(valid);
    assert.ok(h);
    assert.equal(h.record_version, 'TLS 1.0');
    assert.equal(h.handshake_version, 'TLS 1.2');
    assert.equal(h.client_random, '00'.repeat(32));
    assert.equal(h.session_id, '');
    assert.equal(h.session_id_length, 0);
    assert.equal(h.sni, 'honeypot.example');
    assert.deepEqual(h.cipher_suites, [
      { code: 0x1301, name: 'TLS_AES_128_GCM_SHA256' },
      { code: 0xc02f, name: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' },
    ]);
    assert.deepEqual(
      h.supported_groups.map((g) => g.name),
      ['x25519', 'secp256r1'],
    );
    assert.deepEqual(
      h.signature_algorithms.map((s) => s.name),
      ['ecdsa_secp256r1_sha256', 'rsa_pss_rsae_sha256'],
    );
    assert.deepEqual(
      h.extensions.map((e) => e.name),
      [
        'server_name',
        'supported_groups',
        'ec_point_formats',
        'signature_algorithms',
        'application_layer_protocol_negotiation',
        'supported_versions',
        'psk_key_exchange_modes',
        'key_share',
      ],
    );
    assert.equal(h.extensions[0]!.length, 2 + 1 + 2 + 'honeypot.example'.length);
    assert.deepEqual(h.compression_methods, [0]);
    assert.deepEqual(h.supported_versions, ['TLS 1.3', 'TLS 1.2']);
    assert.deepEqual(h.ec_point_formats, ['uncompressed']);
    assert.deepEqual(h.key_share_groups, ['x25519']);
    assert.deepEqual(h.psk_key_exchange_modes, ['psk_dhe_ke']);
    assert.deepEqual(h.alpn, ['h2', 'http/1.1']);
    assert.equal(h.has_grease, false);
    assert.equal(h.extended_master_secret, false);
    assert.match(h.ja4, /^t13d0208h2_[0-9a-f]{12}_[0-9a-f]{12}$/);
    assert.deepEqual(Object.keys(h).sort(), [
      'alpn',
      'application_settings',
      'cipher_suites',
      'client_random',
      'compression_methods',
      'delegated_credentials',
      'ec_point_formats',
      'encrypt_then_mac',
      'extended_master_secret',
      'extensions',
      'handshake_version',
      'has_grease',
      'ja4',
      'key_share_groups',
      'post_handshake_auth',
      'psk_key_exchange_modes',
      'record_version',
      'renegotiation_info',
      'session_id',
      'session_id_length',
      'signature_algorithms',
      'signed_certificate_timestamps',
      'sni',
      'status_request',
      'supported_groups',
      'supported_versions',
    ]);
  });

  it('should accept the bare handshake message and report no record version', () => {
    const h = parseClientHello(handshakeFromLists({ ciphers: [0x002f], extensions: [0x0000] }));
    assert.ok(h);
    assert.equal(h.record_version, null);
    assert.equal(h.sni, 'example.com');
  });

  it('should accept a pre-TLS-1.2 hello without an extensions block', () => {
    const hs = concat(u8(1), vec24(u16(0x0300), new Uint8Array(32), vec8(), vec16(u16s([0x000a, 0x0005])), vec8(u8(0))));
    const h = parseClientHello(concat(u8(22), u16(0x0300), vec16(hs)));
    assert.ok(h);
    assert.equal(h.handshake_version, 'SSL 3.0');
    assert.deepEqual(h.extensions, []);
    assert.equal(h.sni, null);
    assert.equal(h.ja4, `ts3i020000_${h.ja4.split('_')[1]}_000000000000`);
  });

  it('should name unknown and GREASE codes instead of dropping them', () => {
    const h = parseClientHello(
      recordFromLists({ ciphers: [0x2a2a, 0x1234], extensions: [0x9a9a, 0x1234, 0x002b], supportedVersions: [0x7f1c, 0x0304] }),
    );
    assert.ok(h);
    assert.deepEqual(
      h.cipher_suites.map((c) => c.name),
      ['GREASE', 'unknown_0x1234'],
    );
    assert.deepEqual(
      h.extensions.map((e) => e.name),
      ['GREASE', 'unknown_0x1234', 'supported_versions'],
    );
    assert.deepEqual(h.supported_versions, ['0x7f1c', 'TLS 1.3']);
    assert.equal(h.has_grease, true);
  });

  it('should ignore bytes after the first record', () => {
    assert.deepEqual(parseClientHello(concat(valid, Uint8Array.of(23, 3, 3, 0, 1, 0))), parseClientHello(valid));
  });

  it('should return null for every truncation of every profile, as record and as bare handshake', () => {
    for (const profile of CLIENT_PROFILES) {
      const record = buildClientHello(profile, { sni: 'a.example', random: seededRandom(profile) });
      const handshake = record.subarray(5);
      assert.ok(parseClientHello(record), profile);
      assert.ok(parseClientHello(handshake), profile);
      for (let n = 0; n < record.length; n++) assert.equal(parseClientHello(record.subarray(0, n)), null, `${profile} record cut at ${n}`);
      for (let n = 0; n < handshake.length; n++)
        assert.equal(parseClientHello(handshake.subarray(0, n)), null, `${profile} handshake cut at ${n}`);
    }
  });

  it('should refuse other content types and handshake types', () => {
    const alert = Uint8Array.from(valid);
    alert[0] = 21;
    assert.equal(parseClientHello(alert), null);
    const serverHello = Uint8Array.from(valid);
    serverHello[5] = 2;
    assert.equal(parseClientHello(serverHello), null);
    assert.equal(parseClientHello(new TextEncoder().encode('GET / HTTP/1.1\r\n\r\n')), null);
    assert.equal(parseClientHello(new Uint8Array(0)), null);
  });

  it('should refuse lengths that overrun or under-fill their container', () => {
    const bump = (offset: number, delta: number): Uint8Array => {
      const b = Uint8Array.from(valid);
      b[offset] = (b[offset]! + delta) & 0xff;
      return b;
    };
    const sessionIdLen = 5 + 4 + 2 + 32;
    const cipherLenLow = sessionIdLen + 1 + 1;
    assert.equal(parseClientHello(bump(4, 1)), null, 'record length past the end');
    assert.equal(parseClientHello(bump(8, 1)), null, 'handshake length past the record');
    assert.equal(parseClientHello(bump(8, -1)), null, 'handshake body shorter than its contents');
    assert.equal(parseClientHello(bump(sessionIdLen, 33)), null, 'session id longer than 32');
    assert.equal(parseClientHello(bump(cipherLenLow, 1)), null, 'odd cipher list length');
    assert.equal(parseClientHello(bump(cipherLenLow, 2)), null, 'cipher list eats the rest');
    const extBlock = cipherLenLow + 1 + 4 + 2;
    assert.equal(parseClientHello(bump(extBlock + 1, 1)), null, 'extensions block past the end');
    assert.equal(parseClientHello(bump(extBlock + 1 + 4, 1)), null, 'first extension past the block');
    // SNI list length one short of its body.
    assert.equal(parseClientHello(bump(extBlock + 1 + 4 + 2, -1)), null, 'server_name list under-filled');
  });

  it('should never throw on corrupted bytes', () => {
    const random = seededRandom('fuzz');
    const base = buildClientHello('chrome', { sni: 'fuzz.example', random });
    for (let i = 0; i < 3000; i++) {
      const b = Uint8Array.from(base);
      const [pos = 0, val = 0, pos2 = 0] = random(3);
      b[(pos * 7 + i) % b.length] = val;
      const at = (pos2 * 13 + i) % 64;
      if (i % 2) b[at] = b[at]! ^ 0xff;
      assert.doesNotThrow(() => parseClientHello(b));
    }
  });

  it('should keep an empty server_name extension as SNI-present for JA4 but report no host', () => {
    const hs = concat(
      u8(1),
      vec24(u16(0x0303), new Uint8Array(32), vec8(), vec16(u16(0x002f)), vec8(u8(0)), vec16(concat(u16(0x0000), vec16()))),
    );
    const h = parseClientHello(hs);
    assert.ok(h);
    assert.equal(h.sni, null);
    assert.match(h.ja4, /^t12d0101/);
  });
});
