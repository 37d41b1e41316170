import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { FeedDef } from './feed-catalog.ts';
import type { IngestItem } from './ingest-service.ts';

/**
 * CSV rows of a flat feed (header row of member names) → ingest items. Integer members are converted
 * when they are whole numbers; anything else is left as text so validation names the field.
 */
export async function* csvItems(feed: FeedDef, input: Readable): AsyncIterable<IngestItem[]> {
  const props = (feed.schema as { properties: Record<string, { type?: string }> }).properties;
  const parser = input.pipe(
    parse({ columns: (header: string[]) => header.map((h) => h.trim()), skip_empty_lines: true, trim: true, relax_column_count: true }),
  );
  let n = 1; // the header is line 1; data rows count from line 2 as editors show them
  let batch: IngestItem[] = [];
  for await (const row of parser as AsyncIterable<Record<string, string>>) {
    n++;
    const value: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) {
      if (v === undefined) continue;
      value[k] = props[k]?.type === 'integer' && /^-?\d+$/.test(v) ? Number(v) : v;
    }
    batch.push({ n, value });
    if (batch.length >= 1000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
