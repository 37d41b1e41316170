import { StringDecoder } from 'node:string_decoder';
import type { IngestItem } from './ingest-service.ts';

/** Longest accepted NDJSON record, in characters; a longer line is refused as one bad record without buffering it. */
export const MAX_LINE_CHARS = 2 * 1024 * 1024;

/**
 * Splits a byte stream into numbered NDJSON items with bounded memory: a line longer than maxChars is
 * skipped to its newline and reported as a `tooLong` item. Blank lines are skipped but keep their number.
 * Chunks are decoded once (UTF-8 sequences split across chunks are joined) and items come in one batch
 * per chunk: one await per chunk, not per record.
 */
export async function* ndjsonFromBytes(
  input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  maxChars = MAX_LINE_CHARS,
): AsyncIterable<IngestItem[]> {
  const decoder = new StringDecoder('utf8');
  let n = 0;
  let rest = '';
  let overflow = false;
  const take = (line: string, out: IngestItem[]) => {
    n++;
    if (overflow || line.length > maxChars) {
      out.push({ n, tooLong: maxChars });
      overflow = false;
      return;
    }
    const text = line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
    if (text.length > 0 && text.trim() !== '') out.push({ n, text });
  };
  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const out: IngestItem[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      take(start === 0 ? rest + text.slice(0, nl) : text.slice(start, nl), out);
      if (start === 0) rest = '';
      start = nl + 1;
    }
    rest = start === 0 ? rest + text : text.slice(start);
    // An endless line is dropped as it grows, not held: only the fact that it was too long is kept.
    if (rest.length > maxChars) {
      overflow = true;
      rest = '';
    }
    if (out.length > 0) yield out;
  }
  rest += decoder.end();
  if (rest.length > 0 || overflow) {
    const out: IngestItem[] = [];
    take(rest, out);
    if (out.length > 0) yield out;
  }
}
