import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEED_LIST } from '../../src/modules/feeds/feed-catalog.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The column tables of docs/feeds.md: per `### feed` heading, its rows as [name, type, contract?]. */
function documentedColumns(markdown: string): Map<string, [string, string, boolean][]> {
  const section = markdown.slice(markdown.indexOf('## Parquet columns'));
  const tables = new Map<string, [string, string, boolean][]>();
  let feed: string | undefined;
  for (const line of section.split('\n')) {
    const heading = /^### (\w+)$/.exec(line);
    if (heading) tables.set((feed = heading[1]!), []);
    const row = /^\| \d+ \| `([^`]+)` \| `([^`]+)` \|.*\|$/.exec(line);
    if (row && feed) tables.get(feed)!.push([row[1]!, row[2]!, line.includes('*(contract)*')]);
  }
  return tables;
}

describe('docs/feeds.md', () => {
  it("should list every feed's parquet columns in the catalog's order and types, the contract's first", () => {
    const docs = documentedColumns(readFileSync(join(ROOT, 'docs/feeds.md'), 'utf8'));
    assert.deepEqual(
      [...docs.keys()],
      FEED_LIST.map((f) => f.id),
    );
    for (const feed of FEED_LIST) {
      const rows = docs.get(feed.id)!;
      assert.deepEqual(
        rows.map(([name, type]) => [name, type]),
        feed.parquet.map((c) => [c.name, c.type]),
        feed.id,
      );
      const contract = rows.filter(([, , c]) => c).length;
      assert.ok(contract > 0 && rows.slice(0, contract).every(([, , c]) => c), `${feed.id}: contract columns come first`);
    }
  });
});
