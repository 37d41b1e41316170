import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FEED_LIST, type FeedDef } from './feed-catalog.ts';

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
}

/**
 * The record members an export must hold: each top-level member, or, where the catalog spreads an
 * object over several columns (http `details` → method, uri, version, headers), each of its members.
 */
function uncovered(feed: FeedDef): string[] {
  const from = new Set(feed.parquet.map((c) => c.from));
  const walk = (path: string, node: SchemaNode): string[] => {
    if (from.has(path)) return [];
    const props = node.properties ?? {};
    const spread = Object.keys(props).length > 0 && [...from].some((f) => f.startsWith(`${path}.`));
    return spread ? Object.entries(props).flatMap(([k, v]) => walk(`${path}.${k}`, v)) : [path];
  };
  const root = feed.schema as SchemaNode;
  return Object.entries(root.properties ?? {}).flatMap(([k, v]) => walk(k, v));
}

describe('feed catalog', () => {
  it('should give every member of every feed record a parquet column, so an export loses nothing a stream line holds', () => {
    for (const feed of FEED_LIST) assert.deepEqual(uncovered(feed), [], feed.id);
  });

  it('should take every column from a member the record schema has, under a name no other column of the feed uses', () => {
    for (const feed of FEED_LIST) {
      const names = feed.parquet.map((c) => c.name);
      assert.equal(new Set(names).size, names.length, feed.id);
      for (const c of feed.parquet) {
        let node: SchemaNode | undefined = feed.schema as SchemaNode;
        for (const part of c.from.split('.')) node = node?.properties?.[part];
        assert.ok(node, `${feed.id}: ${c.from}`);
      }
    }
  });

  it('should find a member the catalog leaves out', () => {
    const proxies = FEED_LIST.find((f) => f.id === 'proxies')!;
    assert.deepEqual(uncovered({ ...proxies, parquet: proxies.parquet.filter((c) => c.name !== 'asn') }), ['asn']);
    const http = FEED_LIST.find((f) => f.id === 'honeypot_http')!;
    assert.deepEqual(uncovered({ ...http, parquet: http.parquet.filter((c) => c.name !== 'headers') }), ['details.headers']);
  });
});
