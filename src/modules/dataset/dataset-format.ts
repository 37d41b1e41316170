import type { DatasetInfo } from '../lookup/ip-dataset.ts';

/**
 * ip-dataset.bin: 8-byte magic, u32 LE header length, u32 reserved, the JSON header (info, section
 * table), then 8-byte-aligned little-endian typed-array sections, so the loader maps them as views
 * over one buffer without copying. The string table is a section too (UTF-8 bytes and offsets), so a
 * load makes no JavaScript string until a record is first used.
 */
export const MAGIC = Buffer.from('UMBRAIP\u0001', 'latin1');
/**
 * 2: one merged table per IP version, whose segments index (network, location) pairs.
 * 3: the string table as packed UTF-8 sections instead of a JSON array in the header.
 * 4: network records carry where their type came from, and the owner's organisation and domain.
 */
export const FORMAT_VERSION = 4;

/**
 * v4/v6Starts: segment starts (1 or 4 words); v4/v6Segs: each segment's pair index; pairs: (network record | NONE, location record | NONE).
 */
/** strOffsets: string i is strBytes[strOffsets[i] .. strOffsets[i + 1]) (UTF-8). */
export const SECTIONS = [
  'v4Starts',
  'v4Segs',
  'v6Starts',
  'v6Segs',
  'pairs',
  'netRecords',
  'locRecords',
  'strOffsets',
  'strBytes',
] as const;
export type SectionName = (typeof SECTIONS)[number];
type ByteSection = 'strBytes';
const BYTE_SECTIONS: ReadonlySet<SectionName> = new Set<SectionName>(['strBytes']);

/**
 * Words per record: network = asn, isp string, type string, type source string (asn, name, none), type reason string,
 * org string, domain string ('' for none); location = country, state, city, timezone, geohash strings, lat×1e4, lon×1e4
 * (lat/lon as int32, NO_COORD when unknown).
 */
export const NET_WORDS = 7;
export const LOC_WORDS = 7;
export const NO_COORD = -0x80000000;

export interface DatasetHeader {
  format: number;
  info: DatasetInfo;
  /** name → [byte offset from file start, element count] */
  sections: Record<SectionName, [number, number]>;
}

export type Sections = Record<Exclude<SectionName, ByteSection>, Uint32Array | Int32Array> & Record<ByteSection, Uint8Array>;

/** The string table as the two sections: UTF-8 bytes and the offsets of each string (one more than strings). */
export function packStrings(strings: readonly string[]): { strOffsets: Uint32Array; strBytes: Uint8Array } {
  const strOffsets = new Uint32Array(strings.length + 1);
  let total = 0;
  for (let i = 0; i < strings.length; i++) strOffsets[i + 1] = total += Buffer.byteLength(strings[i]!);
  const strBytes = Buffer.alloc(total);
  for (let i = 0; i < strings.length; i++) strBytes.write(strings[i]!, strOffsets[i]!, 'utf8');
  return { strOffsets, strBytes: new Uint8Array(strBytes.buffer, strBytes.byteOffset, strBytes.byteLength) };
}

const align8 = (n: number) => (n + 7) & ~7;

export function encodeDataset(info: DatasetInfo, sections: Sections): Buffer[] {
  const table = {} as DatasetHeader['sections'];
  // Offsets depend on the header length, which depends on the offsets' digits: grow the assumed
  // length until the header fits, then pad it with spaces (valid JSON whitespace) to exactly that.
  let assumed = 0;
  let headerBytes: Buffer;
  for (;;) {
    let offset = align8(16 + assumed);
    for (const name of SECTIONS) {
      table[name] = [offset, sections[name].length];
      offset = align8(offset + sections[name].byteLength);
    }
    headerBytes = Buffer.from(JSON.stringify({ format: FORMAT_VERSION, info, sections: table } satisfies DatasetHeader));
    if (headerBytes.length <= assumed) {
      headerBytes = Buffer.concat([headerBytes, Buffer.alloc(assumed - headerBytes.length, 0x20)]);
      break;
    }
    assumed = headerBytes.length + 16;
  }
  const prefix = Buffer.alloc(16);
  MAGIC.copy(prefix, 0);
  prefix.writeUInt32LE(headerBytes.length, 8);
  const parts: Buffer[] = [prefix, headerBytes];
  let at = 16 + headerBytes.length;
  for (const name of SECTIONS) {
    const pad = table[name][0] - at;
    if (pad > 0) parts.push(Buffer.alloc(pad));
    const s = sections[name];
    parts.push(Buffer.from(s.buffer, s.byteOffset, s.byteLength));
    at = table[name][0] + s.byteLength;
  }
  return parts;
}

export class DatasetFormatError extends Error {}

export function decodeDataset(buf: Buffer, file: string): { header: DatasetHeader; sections: Sections } {
  const header = decodeHeader(buf, file);
  // Typed-array views need 4-byte-aligned offsets into the underlying ArrayBuffer.
  const base = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
  return { header, sections: sectionViews(base, header.sections, file) };
}

/** The header alone (the first bytes of the file are enough: `umbra data status` reads no more). */
export function decodeHeader(buf: Buffer, file: string): DatasetHeader {
  if (buf.length < 16 || !buf.subarray(0, 8).equals(MAGIC))
    throw new DatasetFormatError(`${file} is not an umbra IP dataset (bad magic); rebuild it with 'umbra data build'`);
  const len = buf.readUInt32LE(8);
  if (16 + len > buf.length) throw new DatasetFormatError(`${file} is truncated (header); rebuild it with 'umbra data build'`);
  const header = JSON.parse(buf.subarray(16, 16 + len).toString('utf8')) as DatasetHeader;
  if (header.format !== FORMAT_VERSION)
    throw new DatasetFormatError(
      `${file} has format ${header.format}, this umbra reads ${FORMAT_VERSION}; rebuild it with 'umbra data build'`,
    );
  return header;
}

/** Bytes of the fixed prefix before the JSON header: magic and header length. */
export const PREFIX_BYTES = 16;

/** Typed-array views over the file's bytes (a 4-byte-aligned buffer), checked against its length. */
export function sectionViews(base: Uint8Array, table: DatasetHeader['sections'], file: string): Sections {
  const sections = {} as Sections;
  for (const name of SECTIONS) {
    const [offset, count] = table[name];
    const bytes = BYTE_SECTIONS.has(name) ? 1 : 4;
    if (offset + count * bytes > base.length)
      throw new DatasetFormatError(`${file} is truncated (section ${name}); rebuild it with 'umbra data build'`);
    const Ctor = name === 'strBytes' ? Uint8Array : name === 'locRecords' ? Int32Array : Uint32Array;
    (sections as Record<SectionName, ArrayBufferView>)[name] = new Ctor(base.buffer as ArrayBuffer, base.byteOffset + offset, count);
  }
  return sections;
}
