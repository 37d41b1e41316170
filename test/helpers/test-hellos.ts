// Test-only helpers: a deterministic byte source and a ClientHello encoder
// driven by plain code lists, so published JA4 vectors (which list codes, not
// bytes) can be replayed through the real parser.
import { createHash } from 'node:crypto';
import { concat, ext, u16, u16s, u8, vec16, vec24, vec8, type Extension } from '../../src/demo/tls/hello-encoding.ts';

/** SHA-256 counter stream: same seed, same bytes. */
export function seededRandom(seed: string): (n: number) => Uint8Array {
  let counter = 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let at = 0; at < n; at += 32) {
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      out.set(block.subarray(0, Math.min(32, n - at)), at);
    }
    return out;
  };
}

export interface HelloLists {
  version?: number;
  ciphers: number[];
  /** Extension codes in wire order; bodies are synthesised to be valid for the parser. */
  extensions: number[];
  sigAlgs?: number[];
  alpn?: string[];
  supportedVersions?: number[];
  sni?: string;
}

function body(code: number, lists: HelloLists): Extension {
  switch (code) {
    case 0x0000:
      return ext.serverName(lists.sni ?? 'example.com');
    case 0x0005:
      return ext.statusRequest();
    case 0x000a:
      return ext.supportedGroups([0x001d, 0x0017]);
    case 0x000b:
      return ext.ecPointFormats([0]);
    case 0x000d:
      return ext.signatureAlgorithms(lists.sigAlgs ?? []);
    case 0x0010:
      return ext.alpn(lists.alpn ?? ['h2']);
    case 0x002b:
      return ext.supportedVersions(lists.supportedVersions ?? [0x0304, 0x0303]);
    case 0x002d:
      return ext.pskKeyExchangeModes([1]);
    case 0x0033:
      return { code, body: vec16(u16(0x001d), vec16(new Uint8Array(32))) };
    default:
      return ext.empty(code);
  }
}

/** A bare handshake message (no record header) built from code lists. */
export function handshakeFromLists(lists: HelloLists): Uint8Array {
  const exts = lists.extensions.map((code) => body(code, lists));
  return concat(
    u8(1),
    vec24(
      u16(lists.version ?? 0x0303),
      new Uint8Array(32),
      vec8(),
      vec16(u16s(lists.ciphers)),
      vec8(u8(0)),
      vec16(...exts.map((e) => concat(u16(e.code), vec16(e.body)))),
    ),
  );
}

export const recordFromLists = (lists: HelloLists): Uint8Array => concat(u8(22), u16(0x0301), vec16(handshakeFromLists(lists)));

/** "c02b,1301" → [0xc02b, 0x1301]; keeps the vectors readable as the sources print them. */
export const codes = (list: string): number[] => list.split(',').map((h) => Number.parseInt(h, 16));
