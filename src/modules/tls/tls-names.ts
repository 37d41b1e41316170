// IANA registry names for the TLS code points seen in ClientHellos. Only the
// values real clients and scanners send are listed; anything else is rendered
// as unknown_0x…, so an unfamiliar code stays visible instead of being dropped.

/** RFC 8701 GREASE values: 0x0a0a, 0x1a1a … 0xfafa. */
export function isGrease(code: number): boolean {
  return (code & 0x0f0f) === 0x0a0a && code >> 8 === (code & 0xff);
}

const hex4 = (code: number): string => code.toString(16).padStart(4, '0');
const hex2 = (code: number): string => code.toString(16).padStart(2, '0');

export const CIPHER_SUITES: ReadonlyMap<number, string> = new Map([
  [0x0004, 'TLS_RSA_WITH_RC4_128_MD5'],
  [0x0005, 'TLS_RSA_WITH_RC4_128_SHA'],
  [0x000a, 'TLS_RSA_WITH_3DES_EDE_CBC_SHA'],
  [0x0013, 'TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA'],
  [0x0016, 'TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA'],
  [0x002f, 'TLS_RSA_WITH_AES_128_CBC_SHA'],
  [0x0032, 'TLS_DHE_DSS_WITH_AES_128_CBC_SHA'],
  [0x0033, 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA'],
  [0x0035, 'TLS_RSA_WITH_AES_256_CBC_SHA'],
  [0x0038, 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA'],
  [0x0039, 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA'],
  [0x003c, 'TLS_RSA_WITH_AES_128_CBC_SHA256'],
  [0x003d, 'TLS_RSA_WITH_AES_256_CBC_SHA256'],
  [0x0041, 'TLS_RSA_WITH_CAMELLIA_128_CBC_SHA'],
  [0x0045, 'TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA'],
  [0x0067, 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256'],
  [0x006b, 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256'],
  [0x0084, 'TLS_RSA_WITH_CAMELLIA_256_CBC_SHA'],
  [0x0088, 'TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA'],
  [0x009c, 'TLS_RSA_WITH_AES_128_GCM_SHA256'],
  [0x009d, 'TLS_RSA_WITH_AES_256_GCM_SHA384'],
  [0x009e, 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256'],
  [0x009f, 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384'],
  [0x00ba, 'TLS_RSA_WITH_CAMELLIA_128_CBC_SHA256'],
  [0x00be, 'TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA256'],
  [0x00c0, 'TLS_RSA_WITH_CAMELLIA_256_CBC_SHA256'],
  [0x00c4, 'TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA256'],
  [0x00ff, 'TLS_EMPTY_RENEGOTIATION_INFO_SCSV'],
  [0x1301, 'TLS_AES_128_GCM_SHA256'],
  [0x1302, 'TLS_AES_256_GCM_SHA384'],
  [0x1303, 'TLS_CHACHA20_POLY1305_SHA256'],
  [0x1304, 'TLS_AES_128_CCM_SHA256'],
  [0x1305, 'TLS_AES_128_CCM_8_SHA256'],
  [0x5600, 'TLS_FALLBACK_SCSV'],
  [0xc007, 'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA'],
  [0xc008, 'TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA'],
  [0xc009, 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA'],
  [0xc00a, 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA'],
  [0xc011, 'TLS_ECDHE_RSA_WITH_RC4_128_SHA'],
  [0xc012, 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA'],
  [0xc013, 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA'],
  [0xc014, 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA'],
  [0xc023, 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256'],
  [0xc024, 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384'],
  [0xc027, 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256'],
  [0xc028, 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384'],
  [0xc02b, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'],
  [0xc02c, 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'],
  [0xc02f, 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  [0xc030, 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'],
  [0xcca8, 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
  [0xcca9, 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256'],
  [0xccaa, 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
]);

export const NAMED_GROUPS: ReadonlyMap<number, string> = new Map([
  [0x0013, 'secp192r1'],
  [0x0015, 'secp224r1'],
  [0x0016, 'secp256k1'],
  [0x0017, 'secp256r1'],
  [0x0018, 'secp384r1'],
  [0x0019, 'secp521r1'],
  [0x001a, 'brainpoolP256r1'],
  [0x001b, 'brainpoolP384r1'],
  [0x001c, 'brainpoolP512r1'],
  [0x001d, 'x25519'],
  [0x001e, 'x448'],
  [0x001f, 'brainpoolP256r1tls13'],
  [0x0020, 'brainpoolP384r1tls13'],
  [0x0021, 'brainpoolP512r1tls13'],
  [0x0100, 'ffdhe2048'],
  [0x0101, 'ffdhe3072'],
  [0x0102, 'ffdhe4096'],
  [0x0103, 'ffdhe6144'],
  [0x0104, 'ffdhe8192'],
  [0x0200, 'MLKEM512'],
  [0x0201, 'MLKEM768'],
  [0x0202, 'MLKEM1024'],
  [0x11eb, 'SecP256r1MLKEM768'],
  [0x11ec, 'X25519MLKEM768'],
  [0x11ed, 'SecP384r1MLKEM1024'],
  [0x6399, 'X25519Kyber768Draft00'],
]);

// TLS 1.3 SignatureScheme names; the 0x0n02/0x0n03 pairs below 0x0800 that
// have no TLS 1.3 name are TLS 1.2 hash/signature pairs, named hash-first as
// the legacy registry reads.
export const SIGNATURE_SCHEMES: ReadonlyMap<number, string> = new Map([
  [0x0201, 'rsa_pkcs1_sha1'],
  [0x0202, 'dsa_sha1'],
  [0x0203, 'ecdsa_sha1'],
  [0x0301, 'rsa_sha224'],
  [0x0302, 'dsa_sha224'],
  [0x0303, 'ecdsa_sha224'],
  [0x0401, 'rsa_pkcs1_sha256'],
  [0x0402, 'dsa_sha256'],
  [0x0403, 'ecdsa_secp256r1_sha256'],
  [0x0420, 'rsa_pkcs1_sha256_legacy'],
  [0x0501, 'rsa_pkcs1_sha384'],
  [0x0502, 'dsa_sha384'],
  [0x0503, 'ecdsa_secp384r1_sha384'],
  [0x0601, 'rsa_pkcs1_sha512'],
  [0x0602, 'dsa_sha512'],
  [0x0603, 'ecdsa_secp521r1_sha512'],
  [0x0804, 'rsa_pss_rsae_sha256'],
  [0x0805, 'rsa_pss_rsae_sha384'],
  [0x0806, 'rsa_pss_rsae_sha512'],
  [0x0807, 'ed25519'],
  [0x0808, 'ed448'],
  [0x0809, 'rsa_pss_pss_sha256'],
  [0x080a, 'rsa_pss_pss_sha384'],
  [0x080b, 'rsa_pss_pss_sha512'],
  [0x081a, 'ecdsa_brainpoolP256r1tls13_sha256'],
  [0x081b, 'ecdsa_brainpoolP384r1tls13_sha384'],
  [0x081c, 'ecdsa_brainpoolP512r1tls13_sha512'],
  [0x0904, 'mldsa44'],
  [0x0905, 'mldsa65'],
  [0x0906, 'mldsa87'],
]);

export const EXTENSIONS: ReadonlyMap<number, string> = new Map([
  [0x0000, 'server_name'],
  [0x0001, 'max_fragment_length'],
  [0x0002, 'client_certificate_url'],
  [0x0003, 'trusted_ca_keys'],
  [0x0004, 'truncated_hmac'],
  [0x0005, 'status_request'],
  [0x0006, 'user_mapping'],
  [0x0007, 'client_authz'],
  [0x0008, 'server_authz'],
  [0x0009, 'cert_type'],
  [0x000a, 'supported_groups'],
  [0x000b, 'ec_point_formats'],
  [0x000c, 'srp'],
  [0x000d, 'signature_algorithms'],
  [0x000e, 'use_srtp'],
  [0x000f, 'heartbeat'],
  [0x0010, 'application_layer_protocol_negotiation'],
  [0x0011, 'status_request_v2'],
  [0x0012, 'signed_certificate_timestamp'],
  [0x0013, 'client_certificate_type'],
  [0x0014, 'server_certificate_type'],
  [0x0015, 'padding'],
  [0x0016, 'encrypt_then_mac'],
  [0x0017, 'extended_master_secret'],
  [0x0018, 'token_binding'],
  [0x0019, 'cached_info'],
  [0x001a, 'tls_lts'],
  [0x001b, 'compress_certificate'],
  [0x001c, 'record_size_limit'],
  [0x001d, 'pwd_protect'],
  [0x001e, 'pwd_clear'],
  [0x001f, 'password_salt'],
  [0x0020, 'ticket_pinning'],
  [0x0021, 'tls_cert_with_extern_psk'],
  [0x0022, 'delegated_credential'],
  [0x0023, 'session_ticket'],
  [0x0024, 'TLMSP'],
  [0x0025, 'TLMSP_proxying'],
  [0x0026, 'TLMSP_delegate'],
  [0x0027, 'supported_ekt_ciphers'],
  [0x0029, 'pre_shared_key'],
  [0x002a, 'early_data'],
  [0x002b, 'supported_versions'],
  [0x002c, 'cookie'],
  [0x002d, 'psk_key_exchange_modes'],
  [0x002f, 'certificate_authorities'],
  [0x0030, 'oid_filters'],
  [0x0031, 'post_handshake_auth'],
  [0x0032, 'signature_algorithms_cert'],
  [0x0033, 'key_share'],
  [0x0034, 'transparency_info'],
  [0x0035, 'connection_id_deprecated'],
  [0x0036, 'connection_id'],
  [0x0037, 'external_id_hash'],
  [0x0038, 'external_session_id'],
  [0x0039, 'quic_transport_parameters'],
  [0x003a, 'ticket_request'],
  [0x003b, 'dnssec_chain'],
  [0x003c, 'sequence_number_encryption_algorithms'],
  [0x003d, 'rrc'],
  [0x003e, 'tls_flags'],
  // Not IANA-registered but common on the wire (NPN, Channel ID, ALPS old/new).
  [0x3374, 'next_protocol_negotiation'],
  [0x4469, 'application_settings'],
  [0x44cd, 'application_settings'],
  [0x7550, 'channel_id'],
  [0xfe0d, 'encrypted_client_hello'],
  [0xff01, 'renegotiation_info'],
]);

export const PROTOCOL_VERSIONS: ReadonlyMap<number, string> = new Map([
  [0x0002, 'SSL 2.0'],
  [0x0300, 'SSL 3.0'],
  [0x0301, 'TLS 1.0'],
  [0x0302, 'TLS 1.1'],
  [0x0303, 'TLS 1.2'],
  [0x0304, 'TLS 1.3'],
  [0xfeff, 'DTLS 1.0'],
  [0xfefd, 'DTLS 1.2'],
  [0xfefc, 'DTLS 1.3'],
]);

const VERSION_CODES: ReadonlyMap<string, number> = new Map([...PROTOCOL_VERSIONS].map(([code, name]) => [name, code]));

export const EC_POINT_FORMATS: ReadonlyMap<number, string> = new Map([
  [0, 'uncompressed'],
  [1, 'ansiX962_compressed_prime'],
  [2, 'ansiX962_compressed_char2'],
]);

export const PSK_KEY_EXCHANGE_MODES: ReadonlyMap<number, string> = new Map([
  [0, 'psk_ke'],
  [1, 'psk_dhe_ke'],
]);

function name16(table: ReadonlyMap<number, string>, code: number): string {
  if (isGrease(code)) return 'GREASE';
  return table.get(code) ?? `unknown_0x${hex4(code)}`;
}

export const cipherSuiteName = (code: number): string => name16(CIPHER_SUITES, code);
export const namedGroupName = (code: number): string => name16(NAMED_GROUPS, code);
export const signatureSchemeName = (code: number): string => name16(SIGNATURE_SCHEMES, code);
export const extensionName = (code: number): string => name16(EXTENSIONS, code);

/** "TLS 1.2" for known versions, "GREASE", else the hex form "0x7f1c" (TLS 1.3 drafts, junk). */
export function versionName(code: number): string {
  if (isGrease(code)) return 'GREASE';
  return PROTOCOL_VERSIONS.get(code) ?? `0x${hex4(code)}`;
}

/** Inverse of versionName; null for "GREASE" or anything unparseable. */
export function versionCode(name: string): number | null {
  const known = VERSION_CODES.get(name);
  if (known !== undefined) return known;
  return /^0x[0-9a-f]{4}$/.test(name) ? Number.parseInt(name.slice(2), 16) : null;
}

export const ecPointFormatName = (code: number): string => EC_POINT_FORMATS.get(code) ?? `unknown_0x${hex2(code)}`;
export const pskModeName = (code: number): string => PSK_KEY_EXCHANGE_MODES.get(code) ?? `unknown_0x${hex2(code)}`;
