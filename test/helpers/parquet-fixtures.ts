import type { FeedDef } from '../../src/modules/feeds/feed-catalog.ts';

/**
 * Test helper: `n` records of any feed, numbered from `from`, with a value in every parquet column
 * (nested members built from the column's `from` path): strings from a small set (so DuckDB writes
 * dictionary pages and bloom filters) and a unique one every 97 rows, ASN-like UBIGINTs above 2^31, base64 BLOBs with zero and high bytes,
 * JSON objects, and an
 * absent member now and then (NULL).
 */
export function recordsOf(feed: FeedDef, from: number, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    const rec: Record<string, unknown> = {};
    for (const [c, col] of feed.parquet.entries()) {
      if ((i + c) % 17 === 0) continue; // absent: NULL
      const value =
        col.type === 'VARCHAR'
          ? i % 97 === 0
            ? `${col.name}-${i}`
            : `${col.name}-${i % 20}`
          : col.type === 'BIGINT'
            ? 1_795_000_000_000 + i
            : col.type === 'INTEGER'
              ? i % 65_536
              : col.type === 'UBIGINT'
                ? 4_200_000_000 + i
                : col.type === 'BLOB'
                  ? Buffer.from([i & 255, 0, 255, (i >> 8) & 255]).toString('base64')
                  : { n: i, s: `v${i % 7}`, nested: [i % 2 === 0] };
      const path = col.from.split('.');
      let node = rec;
      for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
      node[path.at(-1)!] = value;
    }
    return rec;
  });
}
