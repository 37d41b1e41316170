/**
 * Append-only UTF-8 texts in large shared chunks, each named by a number (its handle): for JSON made
 * once and copied into many answers. One object per 4 MiB chunk instead of one string per text, so a
 * copy reads a typed array and the bytes, with no object of the text's own to fetch from memory first.
 *
 * Each text is stored after its length (2 bytes, little-endian), so its length is read from the cache
 * line the copy reads anyway. A handle is the position of that length in the arena (chunk × CHUNK +
 * offset) plus one, so that 0 can mean "not made yet" in a zero-filled table of handles. A text never
 * straddles two chunks; texts of 64 KiB or more, and texts past 2 GiB in all, are refused (`add` returns 0).
 */
const MAX_CHUNKS = 511;

export class ByteArena {
  static readonly CHUNK = 1 << 22;
  private readonly chunks: Buffer[] = [];
  private used = ByteArena.CHUNK;
  private texts = 0;

  /** The handle of `text`, stored as UTF-8; 0 (nothing stored) when it takes 64 KiB or more or the arena is full. */
  add(text: string): number {
    const size = Buffer.byteLength(text, 'utf8');
    if (size > 0xffff) return 0;
    if (this.used + 2 + size > ByteArena.CHUNK) {
      // Handles are kept in Int32Arrays: stop short of 2 GiB rather than wrap.
      if (this.chunks.length >= MAX_CHUNKS) return 0;
      this.chunks.push(Buffer.allocUnsafe(ByteArena.CHUNK));
      this.used = 0;
    }
    const chunk = this.chunks[this.chunks.length - 1]!;
    const start = this.used;
    const written = chunk.write(text, start + 2, 'utf8');
    // write() stops short rather than fail; a short text here would corrupt every answer that copies it.
    if (written !== size) throw new Error(`byte arena: wrote ${written} of ${size} bytes`);
    chunk[start] = size & 0xff;
    chunk[start + 1] = size >>> 8;
    this.used = start + 2 + size;
    this.texts += size;
    return (this.chunks.length - 1) * ByteArena.CHUNK + start + 1;
  }

  /** Bytes of the text `handle` names (also brings its first bytes into the CPU's cache ahead of a copy). */
  length(handle: number): number {
    const at = handle - 1;
    const chunk = this.chunks[(at / ByteArena.CHUNK) | 0]!;
    const from = at & (ByteArena.CHUNK - 1);
    return chunk[from]! | (chunk[from + 1]! << 8);
  }

  /** Copies the text `handle` names into `target` at `at`; returns its length. `target` must have room. */
  copy(handle: number, target: Buffer, at: number): number {
    const start = handle - 1;
    const chunk = this.chunks[(start / ByteArena.CHUNK) | 0]!;
    const from = (start & (ByteArena.CHUNK - 1)) + 2;
    return chunk.copy(target, at, from, from + (chunk[from - 2]! | (chunk[from - 1]! << 8)));
  }

  /** The text `handle` names, decoded (tests and diagnostics). */
  text(handle: number): string {
    const start = handle - 1;
    const chunk = this.chunks[(start / ByteArena.CHUNK) | 0]!;
    const from = (start & (ByteArena.CHUNK - 1)) + 2;
    return chunk.toString('utf8', from, from + (chunk[from - 2]! | (chunk[from - 1]! << 8)));
  }

  /** Bytes of text held, and bytes of memory the chunks take. */
  get size(): { texts: number; reserved: number } {
    return { texts: this.texts, reserved: this.chunks.length * ByteArena.CHUNK };
  }
}
