/**
 * Parquet footers (Thrift compact protocol `FileMetaData`) and merging files at the row-group level.
 *
 * The codec is generic: a struct decodes to its fields in order (id, compact type, value), unknown
 * fields included, and encodes back to the same bytes when nothing was changed (tested on DuckDB's
 * footers). Only the fields the merge rewrites are named here; field ids are parquet-format's
 * `parquet.thrift`.
 */

/** Compact-protocol type codes. A bool field carries its value in the type (1 true, 2 false). */
export const CT = {
  STOP: 0,
  TRUE: 1,
  FALSE: 2,
  I8: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

export type ThriftValue =
  | { type: typeof CT.TRUE | typeof CT.FALSE; value: boolean }
  | { type: typeof CT.I8 | typeof CT.I16 | typeof CT.I32; value: number }
  | { type: typeof CT.I64; value: bigint }
  | { type: typeof CT.DOUBLE; value: Uint8Array }
  | { type: typeof CT.BINARY; value: Uint8Array }
  | { type: typeof CT.LIST | typeof CT.SET; elemType: number; items: ThriftValue[] }
  | { type: typeof CT.MAP; keyType: number; valType: number; entries: [ThriftValue, ThriftValue][] }
  | ThriftStruct;

export interface ThriftStruct {
  type: typeof CT.STRUCT;
  fields: ThriftField[];
}
export interface ThriftField {
  id: number;
  value: ThriftValue;
}

export class ThriftError extends Error {}

/** Decodes one compact-protocol struct starting at `offset`; `end` is where it stopped. */
export function decodeStruct(buf: Uint8Array, offset = 0): { struct: ThriftStruct; end: number } {
  const r = new Reader(buf, offset);
  const struct = r.struct(0);
  return { struct, end: r.pos };
}

export function encodeStruct(s: ThriftStruct): Buffer {
  const w = new Writer();
  w.struct(s);
  return w.finish();
}

const MAX_DEPTH = 32;

class Reader {
  constructor(
    private readonly buf: Uint8Array,
    public pos: number,
  ) {}

  private byte(): number {
    if (this.pos >= this.buf.length) throw new ThriftError('thrift: truncated');
    return this.buf[this.pos++]!;
  }

  private varint(): bigint {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = this.byte();
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    throw new ThriftError('thrift: varint too long');
  }

  private smallVarint(): number {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.byte();
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
    throw new ThriftError('thrift: varint too long');
  }

  private zigzag32(): number {
    const n = this.smallVarint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  private bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) throw new ThriftError('thrift: truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  struct(depth: number): ThriftStruct {
    if (depth > MAX_DEPTH) throw new ThriftError('thrift: nesting too deep');
    const fields: ThriftField[] = [];
    let last = 0;
    for (;;) {
      const h = this.byte();
      const type = h & 0x0f;
      if (type === CT.STOP) return { type: CT.STRUCT, fields };
      const delta = h >> 4;
      const id = delta === 0 ? this.zigzag32() : last + delta;
      last = id;
      fields.push({ id, value: type === CT.TRUE || type === CT.FALSE ? { type, value: type === CT.TRUE } : this.value(type, depth) });
    }
  }

  private value(type: number, depth: number): ThriftValue {
    switch (type) {
      case CT.TRUE:
      case CT.FALSE: {
        // A bool outside a field header (a list element) is one byte.
        const b = this.byte();
        return b === CT.TRUE ? { type: CT.TRUE, value: true } : { type: CT.FALSE, value: false };
      }
      case CT.I8: {
        const b = this.byte();
        return { type, value: b > 127 ? b - 256 : b };
      }
      case CT.I16:
      case CT.I32:
        return { type, value: this.zigzag32() };
      case CT.I64: {
        const n = this.varint();
        return { type, value: (n >> 1n) ^ -(n & 1n) };
      }
      case CT.DOUBLE:
        return { type, value: this.bytes(8) };
      case CT.BINARY:
        return { type, value: this.bytes(this.smallVarint()) };
      case CT.LIST:
      case CT.SET: {
        const h = this.byte();
        const size = h >> 4 === 15 ? this.smallVarint() : h >> 4;
        const elemType = h & 0x0f;
        const items: ThriftValue[] = [];
        for (let i = 0; i < size; i++) items.push(this.value(elemType, depth + 1));
        return { type, elemType, items };
      }
      case CT.MAP: {
        const size = this.smallVarint();
        if (size === 0) return { type, keyType: 0, valType: 0, entries: [] };
        const kt = this.byte();
        const entries: [ThriftValue, ThriftValue][] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(kt >> 4, depth + 1), this.value(kt & 0x0f, depth + 1)]);
        return { type, keyType: kt >> 4, valType: kt & 0x0f, entries };
      }
      case CT.STRUCT:
        return this.struct(depth + 1);
      default:
        throw new ThriftError(`thrift: unknown type ${type}`);
    }
  }
}

class Writer {
  private buf = Buffer.allocUnsafe(4096);
  private pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  private varint(v: bigint): void {
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  private smallVarint(v: number): void {
    while (v >= 0x80) {
      this.byte((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.byte(v);
  }

  private zigzag32(v: number): void {
    this.smallVarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  private bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  struct(s: ThriftStruct): void {
    let last = 0;
    for (const f of s.fields) {
      const type = f.value.type;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag32(f.id);
      }
      last = f.id;
      if (type !== CT.TRUE && type !== CT.FALSE) this.value(f.value);
    }
    this.byte(CT.STOP);
  }

  private value(v: ThriftValue): void {
    switch (v.type) {
      case CT.TRUE:
      case CT.FALSE:
        return this.byte(v.value ? CT.TRUE : CT.FALSE);
      case CT.I8:
        return this.byte(v.value & 0xff);
      case CT.I16:
      case CT.I32:
        return this.zigzag32(v.value);
      case CT.I64:
        return this.varint(BigInt.asUintN(64, (v.value << 1n) ^ (v.value >> 63n)));
      case CT.DOUBLE:
      case CT.BINARY:
        if (v.type === CT.BINARY) this.smallVarint(v.value.length);
        return this.bytes(v.value);
      case CT.LIST:
      case CT.SET:
        if (v.items.length < 15) this.byte((v.items.length << 4) | v.elemType);
        else {
          this.byte(0xf0 | v.elemType);
          this.smallVarint(v.items.length);
        }
        for (const item of v.items) this.value(item);
        return;
      case CT.MAP:
        this.smallVarint(v.entries.length);
        if (v.entries.length === 0) return;
        this.byte((v.keyType << 4) | v.valType);
        for (const [k, val] of v.entries) {
          this.value(k);
          this.value(val);
        }
        return;
      case CT.STRUCT:
        return this.struct(v);
    }
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

// --- Parquet ---------------------------------------------------------------------------------

/** FileMetaData, RowGroup, ColumnChunk and ColumnMetaData field ids (parquet.thrift). */
const FMD = {
  VERSION: 1,
  SCHEMA: 2,
  NUM_ROWS: 3,
  ROW_GROUPS: 4,
  KV: 5,
  CREATED_BY: 6,
  COLUMN_ORDERS: 7,
  ENCRYPTION: 8,
  SIGNING_KEY: 9,
} as const;
const RG = { COLUMNS: 1, NUM_ROWS: 3, FILE_OFFSET: 5, ORDINAL: 7 } as const;
const CC = {
  FILE_PATH: 1,
  FILE_OFFSET: 2,
  META: 3,
  OFFSET_INDEX_OFFSET: 4,
  OFFSET_INDEX_LENGTH: 5,
  COLUMN_INDEX_OFFSET: 6,
  COLUMN_INDEX_LENGTH: 7,
  CRYPTO: 8,
  ENCRYPTED_META: 9,
} as const;
const CMD = { DATA_PAGE_OFFSET: 9, INDEX_PAGE_OFFSET: 10, DICTIONARY_PAGE_OFFSET: 11, BLOOM_FILTER_OFFSET: 14 } as const;

/** The inputs cannot be merged at the row-group level (the caller writes the rows again instead). */
export class MergeRefused extends Error {}

export const field = (s: ThriftStruct, id: number): ThriftValue | undefined => s.fields.find((f) => f.id === id)?.value;

const structOf = (v: ThriftValue | undefined, what: string): ThriftStruct => {
  if (v?.type !== CT.STRUCT) throw new MergeRefused(`parquet footer: ${what} is not a struct`);
  return v;
};
const listOf = (v: ThriftValue | undefined, what: string): ThriftValue[] => {
  if (v === undefined) return [];
  if (v.type !== CT.LIST) throw new MergeRefused(`parquet footer: ${what} is not a list`);
  return v.items;
};
const i64Of = (v: ThriftValue | undefined, what: string): bigint => {
  if (v?.type !== CT.I64) throw new MergeRefused(`parquet footer: ${what} is not an i64`);
  return v.value;
};

/** One parquet file's footer and where its data region (between the leading magic and the footer) ends. */
export interface ParquetParts {
  meta: ThriftStruct;
  /** Bytes [4, dataEnd) are the row groups (and bloom filters, page indexes) the footer points into. */
  dataEnd: number;
  numRows: bigint;
}

/** Splits a parquet file's tail (its last `tail.length` bytes of `size`) into footer and data region. */
export function footerLength(tail8: Uint8Array): number {
  if (tail8.length !== 8 || Buffer.from(tail8.subarray(4)).toString('latin1') !== 'PAR1')
    throw new MergeRefused('parquet: no trailing PAR1 magic');
  return Buffer.from(tail8).readUInt32LE(0);
}

/** Decodes a footer read from a file of `size` bytes whose footer is `footer` (without length and magic). */
export function parseFooter(footer: Uint8Array, size: number): ParquetParts {
  let meta: ThriftStruct;
  try {
    meta = decodeStruct(footer).struct;
  } catch (e) {
    throw new MergeRefused(`parquet footer: ${(e as Error).message}`);
  }
  const dataEnd = size - 8 - footer.length;
  if (dataEnd < 4) throw new MergeRefused('parquet: footer longer than the file');
  return { meta, dataEnd, numRows: i64Of(field(meta, FMD.NUM_ROWS), 'num_rows') };
}

const keyValue = (k: string, v: string): ThriftStruct => ({
  type: CT.STRUCT,
  fields: [
    { id: 1, value: { type: CT.BINARY, value: Buffer.from(k) } },
    { id: 2, value: { type: CT.BINARY, value: Buffer.from(v) } },
  ],
});

/**
 * The footer of the file made of `inputs`' data regions laid end to end after one leading "PAR1":
 * every row group of every input in order, its absolute offsets shifted by where its input's bytes
 * land, `num_rows` summed, and `kv` as the key-value metadata. Everything else (version, created_by,
 * unknown fields) is the first input's.
 *
 * Refuses (MergeRefused) unless every input's schema and column orders encode to the same bytes as
 * `reference`'s (a file the caller's writer made for the same columns), and unless nothing points
 * outside an input's data region. Encrypted files and column chunks in other files are refused.
 * Page indexes hold absolute page offsets inside the data region, so they are dropped from the
 * merged footer (they are optional; DuckDB does not write them by default).
 */
export function mergeFooters(
  inputs: readonly ParquetParts[],
  reference: ThriftStruct,
  kv: readonly [string, string][],
): { meta: ThriftStruct; numRows: bigint } {
  if (inputs.length === 0) throw new MergeRefused('parquet merge: no inputs');
  const shape = (m: ThriftStruct) =>
    [FMD.SCHEMA, FMD.COLUMN_ORDERS]
      .map((id) => {
        const v = field(m, id);
        return v === undefined ? '' : encodeStruct({ type: CT.STRUCT, fields: [{ id, value: v }] }).toString('base64');
      })
      .join('|');
  const want = shape(reference);
  const rowGroups: ThriftValue[] = [];
  let numRows = 0n;
  let at = 4; // where the next input's data region starts in the output
  for (const [i, input] of inputs.entries()) {
    const m = input.meta;
    if (shape(m) !== want) throw new MergeRefused(`parquet merge: input ${i} has another schema`);
    if (field(m, FMD.ENCRYPTION) || field(m, FMD.SIGNING_KEY)) throw new MergeRefused(`parquet merge: input ${i} is encrypted`);
    const shift = BigInt(at - 4);
    const inRegion = (v: bigint, what: string) => {
      if (v < 4n || v >= BigInt(input.dataEnd)) throw new MergeRefused(`parquet merge: input ${i}: ${what} ${v} outside the data region`);
    };
    let rows = 0n;
    for (const rgv of listOf(field(m, FMD.ROW_GROUPS), 'row_groups')) {
      const rg = structOf(rgv, 'row group');
      rows += i64Of(field(rg, RG.NUM_ROWS), 'row group num_rows');
      const fields = rg.fields.map((f): ThriftField => {
        if (f.id === RG.FILE_OFFSET) {
          const v = i64Of(f.value, 'row group file_offset');
          inRegion(v, 'row group file_offset');
          return { id: f.id, value: { type: CT.I64, value: v + shift } };
        }
        if (f.id === RG.ORDINAL) {
          if (rowGroups.length > 0x7fff) throw new MergeRefused('parquet merge: more than 32767 row groups');
          return { id: f.id, value: { type: CT.I16, value: rowGroups.length } };
        }
        if (f.id === RG.COLUMNS) {
          const items = listOf(f.value, 'columns').map((ccv) => shiftColumnChunk(structOf(ccv, 'column chunk'), shift, inRegion));
          return { id: f.id, value: { type: CT.LIST, elemType: CT.STRUCT, items } };
        }
        return f;
      });
      rowGroups.push({ type: CT.STRUCT, fields });
    }
    if (rows !== input.numRows) throw new MergeRefused(`parquet merge: input ${i} says ${input.numRows} rows, its row groups ${rows}`);
    numRows += rows;
    at += input.dataEnd - 4;
  }
  const replaced = new Map<number, ThriftValue>([
    [FMD.NUM_ROWS, { type: CT.I64, value: numRows }],
    [FMD.ROW_GROUPS, { type: CT.LIST, elemType: CT.STRUCT, items: rowGroups }],
    [FMD.KV, { type: CT.LIST, elemType: CT.STRUCT, items: kv.map(([k, v]) => keyValue(k, v)) }],
  ]);
  const fields = inputs[0]!.meta.fields.filter((f) => !replaced.has(f.id));
  for (const [id, value] of replaced) fields.push({ id, value });
  fields.sort((a, b) => a.id - b.id);
  return { meta: { type: CT.STRUCT, fields }, numRows };
}

function shiftColumnChunk(cc: ThriftStruct, shift: bigint, inRegion: (v: bigint, what: string) => void): ThriftStruct {
  const fields: ThriftField[] = [];
  for (const f of cc.fields) {
    switch (f.id) {
      case CC.FILE_PATH:
        throw new MergeRefused('parquet merge: a column chunk lives in another file');
      case CC.CRYPTO:
      case CC.ENCRYPTED_META:
        throw new MergeRefused('parquet merge: an encrypted column');
      case CC.FILE_OFFSET: {
        // Deprecated; DuckDB writes 0, which is no position (the magic is there): kept as is.
        const v = i64Of(f.value, 'column chunk file_offset');
        if (v !== 0n) inRegion(v, 'column chunk file_offset');
        fields.push(v === 0n ? f : { id: f.id, value: { type: CT.I64, value: v + shift } });
        break;
      }
      case CC.OFFSET_INDEX_OFFSET:
      case CC.OFFSET_INDEX_LENGTH:
      case CC.COLUMN_INDEX_OFFSET:
      case CC.COLUMN_INDEX_LENGTH:
        break; // page indexes: dropped (see mergeFooters)
      case CC.META: {
        const md = structOf(f.value, 'column meta_data');
        const mf = md.fields.map((g): ThriftField => {
          if (
            g.id !== CMD.DATA_PAGE_OFFSET &&
            g.id !== CMD.INDEX_PAGE_OFFSET &&
            g.id !== CMD.DICTIONARY_PAGE_OFFSET &&
            g.id !== CMD.BLOOM_FILTER_OFFSET
          )
            return g;
          const v = i64Of(g.value, `column meta_data field ${g.id}`);
          inRegion(v, `column meta_data field ${g.id}`);
          return { id: g.id, value: { type: CT.I64, value: v + shift } };
        });
        fields.push({ id: f.id, value: { type: CT.STRUCT, fields: mf } });
        break;
      }
      default:
        fields.push(f);
    }
  }
  return { type: CT.STRUCT, fields };
}

/** The key-value metadata of a footer, in order. */
export function footerKv(meta: ThriftStruct): [string, string][] {
  return listOf(field(meta, FMD.KV), 'key_value_metadata').map((v) => {
    const s = structOf(v, 'key value');
    const text = (x: ThriftValue | undefined) => (x?.type === CT.BINARY ? Buffer.from(x.value).toString('utf8') : '');
    return [text(field(s, 1)), text(field(s, 2))];
  });
}
