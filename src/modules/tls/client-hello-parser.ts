// Decodes a captured TLS ClientHello into the flat record the honeypot_https
// feed stores. Captures come from hostile and broken clients, so every length
// is checked against the bytes actually present and any inconsistency yields
// null rather than a partial (and therefore misleading) record.
import type { ClientHelloDetails, CodeName, ExtensionEntry } from './client-hello.ts';
import { ja4 } from './ja4.ts';
import {
  cipherSuiteName,
  ecPointFormatName,
  extensionName,
  isGrease,
  namedGroupName,
  pskModeName,
  signatureSchemeName,
  versionName,
} from './tls-names.ts';

const CONTENT_TYPE_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;

class Malformed extends Error {}

/** Bounds-checked big-endian reader over one slice; overruns throw Malformed. */
class Reader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  u8(): number {
    if (this.remaining < 1) throw new Malformed();
    return this.buf[this.pos++]!;
  }

  u16(): number {
    return (this.u8() << 8) | this.u8();
  }

  u24(): number {
    return (this.u8() << 16) | (this.u8() << 8) | this.u8();
  }

  bytes(n: number): Uint8Array {
    if (this.remaining < n) throw new Malformed();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A sub-reader over a vector whose length prefix is `prefixBytes` wide. */
  vector(prefixBytes: 1 | 2 | 3): Reader {
    const n = prefixBytes === 1 ? this.u8() : prefixBytes === 2 ? this.u16() : this.u24();
    return new Reader(this.bytes(n));
  }

  end(): void {
    if (this.remaining !== 0) throw new Malformed();
  }
}

const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Reads a list of u16 values that must exactly fill the reader. */
function u16List(r: Reader): number[] {
  if (r.remaining % 2 !== 0) throw new Malformed();
  const out: number[] = [];
  while (r.remaining > 0) out.push(r.u16());
  return out;
}

function u8List(r: Reader): number[] {
  const out: number[] = [];
  while (r.remaining > 0) out.push(r.u8());
  return out;
}

const codeNames = (codes: number[], name: (c: number) => string): CodeName[] => codes.map((code) => ({ code, name: name(code) }));

interface DecodedExtensions {
  sni: string | null;
  groups: number[];
  sigAlgs: number[];
  alpn: string[];
  versions: number[];
  pointFormats: number[];
  keyShares: number[];
  pskModes: number[];
}

/** Decodes the bodies of the extensions we report on; others are only listed. */
function decodeExtension(code: number, body: Uint8Array, out: DecodedExtensions): void {
  const r = new Reader(body);
  switch (code) {
    case 0x0000: {
      // An empty body is what servers echo; tolerate it rather than discard the hello.
      if (body.length === 0) return;
      const list = r.vector(2);
      r.end();
      while (list.remaining > 0) {
        const type = list.u8();
        const name = list.vector(2);
        if (type === 0 && out.sni === null) out.sni = Buffer.from(name.bytes(name.remaining)).toString('latin1');
      }
      if (out.sni === '') out.sni = null;
      return;
    }
    case 0x000a:
      out.groups = u16List(r.vector(2));
      break;
    case 0x000b:
      out.pointFormats = u8List(r.vector(1));
      break;
    case 0x000d:
      out.sigAlgs = u16List(r.vector(2));
      break;
    case 0x0010: {
      const list = r.vector(2);
      out.alpn = [];
      while (list.remaining > 0) {
        const id = list.vector(1);
        out.alpn.push(Buffer.from(id.bytes(id.remaining)).toString('latin1'));
      }
      break;
    }
    case 0x002b:
      out.versions = u16List(r.vector(1));
      break;
    case 0x002d:
      out.pskModes = u8List(r.vector(1));
      break;
    case 0x0033: {
      const list = r.vector(2);
      out.keyShares = [];
      while (list.remaining > 0) {
        out.keyShares.push(list.u16());
        list.vector(2);
      }
      break;
    }
    default:
      return;
  }
  r.end();
}

function parse(bytes: Uint8Array): ClientHelloDetails {
  const outer = new Reader(bytes);
  let recordVersion: number | null = null;
  let handshake: Reader = outer;
  if (bytes[0] === CONTENT_TYPE_HANDSHAKE) {
    outer.u8();
    recordVersion = outer.u16();
    // Bytes after the first record (further records, app data) are not ours to judge.
    handshake = outer.vector(2);
  } else if (bytes[0] !== HANDSHAKE_CLIENT_HELLO) {
    throw new Malformed();
  }
  if (handshake.u8() !== HANDSHAKE_CLIENT_HELLO) throw new Malformed();
  // A ClientHello split across records arrives truncated here, and is refused.
  const body = handshake.vector(3);

  const handshakeVersion = body.u16();
  const random = body.bytes(32);
  const sessionId = body.vector(1);
  if (sessionId.remaining > 32) throw new Malformed();
  const sessionIdBytes = sessionId.bytes(sessionId.remaining);
  const ciphers = u16List(body.vector(2));
  const compression = u8List(body.vector(1));

  const decoded: DecodedExtensions = {
    sni: null,
    groups: [],
    sigAlgs: [],
    alpn: [],
    versions: [],
    pointFormats: [],
    keyShares: [],
    pskModes: [],
  };
  const extensions: ExtensionEntry[] = [];
  // Pre-TLS-1.2 clients may omit the extensions block entirely.
  if (body.remaining > 0) {
    const list = body.vector(2);
    while (list.remaining > 0) {
      const code = list.u16();
      const ext = list.vector(2);
      const extBody = ext.bytes(ext.remaining);
      extensions.push({ code, name: extensionName(code), length: extBody.length });
      decodeExtension(code, extBody, decoded);
    }
  }
  body.end();

  const has = (code: number): boolean => extensions.some((e) => e.code === code);
  const hasGrease = [ciphers, extensions.map((e) => e.code), decoded.groups, decoded.sigAlgs, decoded.versions, decoded.keyShares].some(
    (list) => list.some(isGrease),
  );

  const details: ClientHelloDetails = {
    record_version: recordVersion === null ? null : versionName(recordVersion),
    handshake_version: versionName(handshakeVersion),
    client_random: toHex(random),
    session_id: toHex(sessionIdBytes),
    session_id_length: sessionIdBytes.length,
    sni: decoded.sni,
    cipher_suites: codeNames(ciphers, cipherSuiteName),
    supported_groups: codeNames(decoded.groups, namedGroupName),
    signature_algorithms: codeNames(decoded.sigAlgs, signatureSchemeName),
    extensions,
    compression_methods: compression,
    supported_versions: decoded.versions.map(versionName),
    ec_point_formats: decoded.pointFormats.map(ecPointFormatName),
    key_share_groups: decoded.keyShares.map(namedGroupName),
    psk_key_exchange_modes: decoded.pskModes.map(pskModeName),
    alpn: decoded.alpn,
    extended_master_secret: has(0x0017),
    renegotiation_info: has(0xff01),
    status_request: has(0x0005),
    signed_certificate_timestamps: has(0x0012),
    has_grease: hasGrease,
    encrypt_then_mac: has(0x0016),
    post_handshake_auth: has(0x0031),
    delegated_credentials: has(0x0022),
    application_settings: has(0x4469) || has(0x44cd),
    ja4: '',
  };
  details.ja4 = ja4(details);
  return details;
}

/**
 * Parses a TLS record (content type 22) holding a ClientHello, or the bare
 * handshake message. Returns null for anything malformed or truncated; never throws.
 */
export function parseClientHello(bytes: Uint8Array): ClientHelloDetails | null {
  try {
    return parse(bytes);
  } catch {
    // Malformed is the expected case; anything else would be a bug here, but
    // one hostile capture must still never take the feed down.
    return null;
  }
}
