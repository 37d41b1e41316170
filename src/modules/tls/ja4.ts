// JA4 TLS client fingerprint, following the FoxIO specification
// (technical_details/JA4.md in github.com/FoxIO-LLC/ja4; JA4 itself is
// BSD-3-Clause). Only TLS over TCP is fingerprinted here, so the first
// character is always "t".
import { createHash } from 'node:crypto';
import type { ClientHelloDetails } from './client-hello.ts';
import { isGrease, versionCode } from './tls-names.ts';

/** The parts of a parsed hello JA4 reads; lets callers fingerprint hand-built data too. */
export type Ja4Input = Pick<
  ClientHelloDetails,
  'handshake_version' | 'supported_versions' | 'cipher_suites' | 'extensions' | 'signature_algorithms' | 'alpn'
>;

const EXT_SERVER_NAME = 0x0000;
const EXT_ALPN = 0x0010;
const EXT_SUPPORTED_VERSIONS = 0x002b;
const EMPTY_HASH = '000000000000';

const JA4_VERSIONS: ReadonlyMap<number, string> = new Map([
  [0x0304, '13'],
  [0x0303, '12'],
  [0x0302, '11'],
  [0x0301, '10'],
  [0x0300, 's3'],
  [0x0002, 's2'],
  [0xfeff, 'd1'],
  [0xfefd, 'd2'],
  [0xfefc, 'd3'],
]);

const hex4 = (code: number): string => code.toString(16).padStart(4, '0');
const count2 = (n: number): string => String(Math.min(n, 99)).padStart(2, '0');
const hash12 = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 12);

/**
 * Highest non-GREASE supported_versions entry when that extension is present,
 * else the ClientHello's legacy_version. The record-layer version is ignored
 * by the spec because clients pin it to 1.0/1.2 for middlebox compatibility.
 */
function version(hello: Ja4Input): string {
  let code: number | null = null;
  if (hello.extensions.some((e) => e.code === EXT_SUPPORTED_VERSIONS)) {
    for (const name of hello.supported_versions) {
      const v = versionCode(name);
      if (v !== null && !isGrease(v) && (code === null || v > code)) code = v;
    }
  }
  code ??= versionCode(hello.handshake_version);
  return (code !== null && JA4_VERSIONS.get(code)) || '00';
}

const isAlnum = (b: number): boolean => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

/**
 * First and last character of the first ALPN id; "00" when there is none.
 * When either end byte is not alphanumeric the spec switches to the first and
 * last character of the id's hex form (0xAB 0xCD → "ad"), so binary ids still
 * give a printable, stable value. ALPN ids arrive one char per byte (latin1).
 */
export function alpnChars(alpn: readonly string[]): string {
  const first = alpn[0];
  if (first === undefined || first.length === 0) return '00';
  const bytes = Array.from(first, (c) => c.charCodeAt(0) & 0xff);
  const a = bytes[0]!;
  const z = bytes[bytes.length - 1]!;
  if (isAlnum(a) && isAlnum(z)) return String.fromCharCode(a, z);
  const hex = Buffer.from(bytes).toString('hex');
  return hex[0]! + hex[hex.length - 1]!;
}

export interface Ja4Parts {
  /** e.g. "t13d1516h2" */
  a: string;
  /** Sorted 4-hex cipher list, comma-joined (the JA4_r "b" section). */
  ciphers: string;
  /** Sorted extensions without SNI/ALPN, then "_" and sigalgs in wire order (JA4_r "c"). */
  extensionsAndSigAlgs: string;
}

/** The un-hashed inputs of JA4 (JA4_r); useful when two implementations disagree. */
export function ja4Parts(hello: Ja4Input): Ja4Parts {
  const ciphers = hello.cipher_suites.map((c) => c.code).filter((c) => !isGrease(c));
  const extensions = hello.extensions.map((e) => e.code).filter((c) => !isGrease(c));
  const sigAlgs = hello.signature_algorithms.map((s) => s.code).filter((c) => !isGrease(c));
  const sni = extensions.includes(EXT_SERVER_NAME) ? 'd' : 'i';
  const a = `t${version(hello)}${sni}${count2(ciphers.length)}${count2(extensions.length)}${alpnChars(hello.alpn)}`;

  const sortedCiphers = ciphers.map(hex4).sort().join(',');
  const sortedExts = extensions
    .filter((c) => c !== EXT_SERVER_NAME && c !== EXT_ALPN)
    .map(hex4)
    .sort()
    .join(',');
  const sigs = sigAlgs.map(hex4).join(',');
  return { a, ciphers: sortedCiphers, extensionsAndSigAlgs: sigs === '' ? sortedExts : `${sortedExts}_${sigs}` };
}

/** JA4 fingerprint, e.g. "t13d1516h2_8daaf6152771_e5627efa2ab1". */
export function ja4(hello: Ja4Input): string {
  const { a, ciphers, extensionsAndSigAlgs } = ja4Parts(hello);
  const b = ciphers === '' ? EMPTY_HASH : hash12(ciphers);
  // "No extensions" is judged on the sorted list (SNI/ALPN already removed), per spec.
  const noExtensions = extensionsAndSigAlgs === '' || extensionsAndSigAlgs.startsWith('_');
  const c = noExtensions ? EMPTY_HASH : hash12(extensionsAndSigAlgs);
  return `${a}_${b}_${c}`;
}
