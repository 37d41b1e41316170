import type { FeedDef } from '../../src/modules/feeds/feed-catalog.ts';
import { parseDuckType, type DuckType } from './duck-types.ts';

/**
 * Test helper: `n` records of any feed, numbered from `from`, with a value in every parquet column
 * (nested members built from the column's `from` path): strings from a small set (so DuckDB writes
 * dictionary pages and bloom filters) and a unique one every 97 rows, ASN-like UBIGINTs above 2^31,
 * base64 BLOBs with zero and high bytes, JSON objects, timestamps in the feed's unit, lists and maps
 * of 0 to 2 entries (empty ones included), and an absent member now and then (NULL).
 */
export function recordsOf(feed: FeedDef, from: number, n: number): Record<string, unknown>[] {
  const types = feed.parquet.map((c) => parseDuckType(c.type));
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    const rec: Record<string, unknown> = {};
    for (const [c, col] of feed.parquet.entries()) {
      if ((i + c) % 17 === 0) continue; // absent: NULL
      const path = col.from.split('.');
      let node = rec;
      for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
      node[path.at(-1)!] = fixtureValue(types[c]!, col.name, i, feed.unit);
    }
    return rec;
  });
}

function fixtureValue(t: DuckType, name: string, i: number, unit: 's' | 'ms'): unknown {
  switch (t.kind) {
    case 'list':
      return Array.from({ length: i % 3 }, (_, k) => fixtureValue(t.of, name, i + k, unit));
    case 'map':
      return Object.fromEntries(Array.from({ length: i % 3 }, (_, k) => [`${name}-key-${k}`, fixtureValue(t.value, name, i + k, unit)]));
    case 'struct':
      return Object.fromEntries(t.members.map(([m, mt]) => [m, fixtureValue(mt, m, i, unit)]));
    case 'scalar':
      switch (t.name) {
        case 'VARCHAR':
          return i % 97 === 0 ? `${name}-${i}` : `${name}-${i % 20}`;
        case 'BIGINT':
          return 1_795_000_000_000 + i;
        case 'INTEGER':
          return i % 65_536;
        case 'UBIGINT':
          return 4_200_000_000 + i;
        case 'BOOLEAN':
          return i % 2 === 0;
        case 'BLOB':
          return Buffer.from([i & 255, 0, 255, (i >> 8) & 255]).toString('base64');
        case 'TIMESTAMP WITH TIME ZONE':
          return unit === 'ms' ? 1_795_000_000_000 + i : 1_795_000_000 + i;
        default:
          return { n: i, s: `v${i % 7}`, nested: [i % 2 === 0] };
      }
  }
}
