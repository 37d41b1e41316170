/**
 * The MaxMind DB data-section encoding (format 2.0): a control byte with the type in its top three bits
 * (types above 7 as 0 plus an extension byte holding type - 7) and a size in the low five bits (29, 30
 * and 31 say that one, two or three more bytes follow, biased by 29, 285 and 65,821), then the payload.
 * Integers are big-endian in as few bytes as they need.
 */
export const MMDB_TYPE = { pointer: 1, string: 2, double: 3, uint16: 5, uint32: 6, map: 7, uint64: 9, array: 11 } as const;

/** Pointer payload ranges: 11 bits, then 19, 27 and 32 bits, each of the first three biased by the ones before. */
const POINTER_BIAS = [0, 2048, 526_336] as const;

function pointerBytes(offset: number): number {
  return offset < 2048 ? 2 : offset < 526_336 ? 3 : offset < 526_336 + 2 ** 27 ? 4 : 5;
}

function sizeBytes(size: number): number {
  return size < 29 ? 0 : size < 285 ? 1 : size < 65_821 ? 2 : 3;
}

/**
 * Appends values to a growing data section. With `dedupe`, a string already written is written again
 * as a pointer to its first copy when that is shorter (map keys, countries, ISP names repeat a lot);
 * the metadata section is written without, since pointers there would be relative to another base.
 */
export class MmdbDataWriter {
  private buf = Buffer.allocUnsafe(1 << 16);
  length = 0;
  private readonly strings = new Map<string, number>();

  constructor(private readonly dedupe: boolean) {}

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  private control(type: number, size: number): void {
    this.room(5);
    const extra = sizeBytes(size);
    const first = (type <= 7 ? type << 5 : 0) | (extra === 0 ? size : 28 + extra);
    this.buf[this.length++] = first;
    if (type > 7) this.buf[this.length++] = type - 7;
    const biased = size - [0, 29, 285, 65_821][extra]!;
    for (let k = extra - 1; k >= 0; k--) this.buf[this.length++] = (biased >>> (8 * k)) & 0xff;
  }

  /** A pointer to data at `offset` from the start of the data section (the sixteen-byte separator not counted). */
  pointer(offset: number): void {
    this.room(5);
    const n = pointerBytes(offset) - 1;
    if (n === 4) {
      this.buf[this.length++] = 0x38;
      this.buf.writeUInt32BE(offset, this.length);
      this.length += 4;
      return;
    }
    const v = offset - POINTER_BIAS[n - 1]!;
    this.buf[this.length++] = 0x20 | ((n - 1) << 3) | (v >>> (8 * n));
    for (let k = n - 1; k >= 0; k--) this.buf[this.length++] = (v >>> (8 * k)) & 0xff;
  }

  string(s: string): void {
    const at = this.dedupe ? this.strings.get(s) : undefined;
    const bytes = Buffer.byteLength(s);
    if (at !== undefined && pointerBytes(at) < 1 + sizeBytes(bytes) + bytes) return this.pointer(at);
    if (this.dedupe && at === undefined) this.strings.set(s, this.length);
    this.control(MMDB_TYPE.string, bytes);
    this.room(bytes);
    this.length += this.buf.write(s, this.length, 'utf8');
  }

  /** uint16, uint32 or uint64; `value` a non-negative integer below 2^53. */
  uint(type: typeof MMDB_TYPE.uint16 | typeof MMDB_TYPE.uint32 | typeof MMDB_TYPE.uint64, value: number): void {
    const digits: number[] = [];
    for (let v = value; v > 0; v = Math.floor(v / 256)) digits.push(v % 256);
    this.control(type, digits.length);
    this.room(digits.length);
    for (let k = digits.length - 1; k >= 0; k--) this.buf[this.length++] = digits[k]!;
  }

  double(value: number): void {
    this.control(MMDB_TYPE.double, 8);
    this.room(8);
    this.length = this.buf.writeDoubleBE(value, this.length);
  }

  /** A map of `entries` key/value pairs follows: key, value, key, value... */
  map(entries: number): void {
    this.control(MMDB_TYPE.map, entries);
  }

  array(items: number): void {
    this.control(MMDB_TYPE.array, items);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}
