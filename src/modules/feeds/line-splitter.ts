import type { IngestItem } from './ingest-service.ts';

/** Longest accepted NDJSON record, in bytes; a longer line is refused as one bad record without buffering it. */
export const MAX_LINE_BYTES = 2 * 1024 * 1024;

/**
 * Splits a byte stream into numbered NDJSON items with bounded memory: a line longer than maxBytes is
 * skipped to its newline and reported as a `tooLong` item. Blank lines are skipped but keep their number.
 */
export async function* ndjsonFromBytes(input: AsyncIterable<Buffer | string>, maxBytes = MAX_LINE_BYTES, onBytes?: (n: number) => void): AsyncIterable<IngestItem> {
  let n = 0;
  let parts: Buffer[] = [];
  let size = 0;
  let overflow = false;
  const emit = function* (): Generator<IngestItem> {
    n++;
    if (overflow) {
      yield { n, tooLong: maxBytes };
    } else {
      let text = parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (text.trim() !== '') yield { n, text };
    }
    parts = [];
    size = 0;
    overflow = false;
  };
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    onBytes?.(buf.length);
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const piece = buf.subarray(start, nl === -1 ? buf.length : nl);
      if (!overflow) {
        if (size + piece.length > maxBytes) {
          overflow = true;
          parts = [];
        } else if (piece.length > 0) {
          parts.push(piece);
          size += piece.length;
        }
      }
      if (nl === -1) break;
      yield* emit();
      start = nl + 1;
    }
  }
  if (size > 0 || overflow) yield* emit();
}
