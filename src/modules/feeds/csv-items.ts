import type { Readable } from 'node:stream';
import { type InfoRecord, parse } from 'csv-parse';
import type { FeedDef } from './feed-catalog.ts';
import type { IngestItem } from './ingest-service.ts';

const BATCH = 1000;

/** csv-parse's errors of the input's syntax (an unclosed or stray quote), as opposed to a failure to read it. */
const isCsvSyntaxError = (e: unknown): e is Error & { code: string } => {
  const code = e instanceof Error ? (e as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('CSV_');
};

/** A syntax error in words that fit the row it is reported on (csv-parse's own name the line where it gave up). */
function csvSyntax(e: Error & { code: string }): string {
  if (e.code === 'CSV_QUOTE_NOT_CLOSED') return 'opens a quoted field that is never closed';
  if (e.code === 'CSV_INVALID_CLOSING_QUOTE')
    return 'has a quoted field followed by more text (a quote inside a quoted field is written twice: "")';
  return `is not valid CSV (${e.message})`;
}

/** The line a row starts on: csv-parse counts lines to the row's end, which is later by the line breaks its quoted fields hold. */
function startLine(endLine: number, fields: readonly string[]): number {
  let inner = 0;
  for (const f of fields) for (let i = f.indexOf('\n'); i !== -1; i = f.indexOf('\n', i + 1)) inner++;
  return endLine - inner;
}

/**
 * CSV rows of a flat feed (header row of member names) → ingest items, numbered by the line each row
 * starts on, as an editor shows it (the header is line 1). Integer members are converted when they are
 * whole numbers; anything else is left as text so validation names the field and the value. A row with
 * more fields than the header names, and a syntax error (say, a quote never closed), are bad records of
 * their own, like a bad NDJSON line; a syntax error also ends the input, since what follows it cannot be
 * told apart reliably.
 */
export async function* csvItems(feed: FeedDef, input: Readable): AsyncIterable<IngestItem[]> {
  const props = (feed.schema as { properties: Record<string, { type?: string }> }).properties;
  let header: string[] | undefined;
  let lastLine = 0;
  const pending: IngestItem[] = [];
  // Rows are taken as csv-parse reads them (on_record), so those read before a syntax error are kept;
  // the parser then yields each row once more, as a mere token, on which the loop below hands on full batches.
  const take = (fields: string[], context: InfoRecord): string[] => {
    const n = startLine(context.lines, fields);
    lastLine = context.lines;
    if (header === undefined) {
      header = fields.map((h) => h.trim());
      return fields;
    }
    if (fields.length > header.length) {
      const message = `has ${fields.length} fields; the header names ${header.length} columns (${header.join(', ')})`;
      pending.push({ n, refused: { reason: 'unknown_field', field: `column ${header.length + 1}`, message } });
      return fields;
    }
    const value: Record<string, unknown> = {};
    for (const [i, v] of fields.entries()) value[header[i]!] = props[header[i]!]?.type === 'integer' && /^-?\d+$/.test(v) ? Number(v) : v;
    pending.push({ n, value });
    return fields;
  };
  const parser = input.pipe(
    parse({ skip_empty_lines: true, trim: true, relax_column_count: true, on_record: (r, context) => take(r, context) }),
  );
  try {
    for await (const _ of parser) if (pending.length >= BATCH) yield pending.splice(0, BATCH);
  } catch (e) {
    if (!isCsvSyntaxError(e)) throw e;
    pending.push({
      n: lastLine + 1,
      refused: { reason: 'invalid_csv', field: 'record', message: `${csvSyntax(e)}; nothing after it was read` },
    });
  }
  while (pending.length > 0) yield pending.splice(0, BATCH);
}
