import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { umbraCli } from '../helpers/umbra-cli.ts';
import { FileIntelListStore } from '../../src/storage/embedded/file-intel-list-store.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/lists');

const umbra = umbraCli;

describe('umbra data import-list / lists / remove-list (black box)', () => {
  it('should import, list, replace and remove lists with exit codes 0, 1 and 2', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-lists-cli-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));

    // What the running server holds: a store on the same directory, polling its revision.
    const served = new FileIntelListStore(join(dataDir, 'lists'));
    const before = await served.revision();

    const gb = umbra(dataDir, ['data', 'import-list', 'search-engine', join(FIXTURES, 'googlebot.json'), '--provider', 'googlebot']);
    assert.equal(gb.code, 0, gb.stderr);
    assert.deepEqual(
      [gb.json.kind, gb.json.provider, gb.json.format, gb.json.count, gb.json.rejected, gb.json.replaced],
      ['SEARCH_ENGINE', 'GOOGLEBOT', 'google-prefixes', 5, 0, null],
    );
    assert.match(gb.json.version, /^[0-9a-f]{16}$/);
    const stored = JSON.parse(readFileSync(join(dataDir, 'lists', 'SEARCH_ENGINE--GOOGLEBOT.json'), 'utf8'));
    assert.ok(stored.cidrs.includes('66.249.79.64/27'), 'a Googlebot prefix of the published file');
    assert.notEqual(await served.revision(), before, 'an import by another process changes the revision');
    assert.deepEqual(
      (await served.all()).map((l) => l.provider),
      ['GOOGLEBOT'],
    );

    const tor = umbra(dataDir, ['data', 'import-list', 'TOR_NODE', join(FIXTURES, 'tor-bulk-exit-list.txt'), '--published', '2022-01-18']);
    assert.equal(tor.code, 0, tor.stderr);
    assert.deepEqual([tor.json.provider, tor.json.format, tor.json.count], ['TOR', 'tor-bulk-exit-list', 6]);
    // The bulk list carries no time: the one given is kept, and the list is old news.
    assert.deepEqual([tor.json.published_at, tor.json.published_from], [Date.UTC(2022, 0, 18) / 1000, 'option']);
    assert.match(tor.stderr, /warning: TOR_NODE\/TOR is \d+ days old \(a TOR_NODE list counts for 14\): expired, it says nothing/);
    const badDate = umbra(dataDir, [
      'data',
      'import-list',
      'TOR_NODE',
      join(FIXTURES, 'tor-bulk-exit-list.txt'),
      '--published',
      'last week',
    ]);
    assert.equal(badDate.code, 2);
    assert.match(badDate.stderr, /bad --published 'last week'/);

    // Re-importing the kind with the same provider replaces that list (here from stdin, in the other Tor format).
    const again = umbra(dataDir, ['data', 'import-list', 'tor-node', '-'], readFileSync(join(FIXTURES, 'tor-exit-addresses.txt'), 'utf8'));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json.replaced, tor.json.version);
    assert.equal(again.json.format, 'tor-exit-addresses');
    assert.deepEqual([again.json.published_at, again.json.published_from], [Date.UTC(2022, 0, 18, 12, 2, 1) / 1000, 'content']);

    // Partly bad: the good ranges are kept, exit 1, each bad line named.
    const partial = umbra(
      dataDir,
      ['data', 'import-list', 'AI_CRAWLER', '-', '--provider', 'OPENAI'],
      '4.151.71.176/28\nnot-an-ip\n4.151.119.48/28\n',
    );
    assert.equal(partial.code, 1, partial.stderr);
    assert.equal(partial.json.count, 2);
    assert.deepEqual(partial.json.errors, [{ line: 2, entry: 'not-an-ip', reason: "not an IP address: 'not-an-ip'" }]);

    const listed = umbra(dataDir, ['data', 'lists']);
    assert.equal(listed.code, 0);
    assert.deepEqual(
      listed.json.lists.map((l: any) => [l.kind, l.provider, l.format, l.count]),
      [
        ['AI_CRAWLER', 'OPENAI', 'cidr-lines', 2],
        ['SEARCH_ENGINE', 'GOOGLEBOT', 'google-prefixes', 5],
        ['TOR_NODE', 'TOR', 'tor-exit-addresses', 3],
      ],
    );
    assert.equal(listed.json.lists[2].version, again.json.version);
    assert.equal(typeof listed.json.lists[2].imported_at, 'number');
    const [openai, , torList] = listed.json.lists;
    assert.deepEqual(
      [torList.published_at, torList.published_from, torList.state, torList.strength],
      [again.json.published_at, 'content', 'expired', 0],
    );
    assert.deepEqual([openai.published_from, openai.age_days, openai.state, openai.strength], ['import', 0, 'current', 1]);
    assert.match(listed.stderr, /warning: TOR_NODE\/TOR is \d+ days old \(a TOR_NODE list counts for 14\): expired/);
    assert.match(listed.stderr, /note: AI_CRAWLER\/OPENAI has no publisher's time; it ages from its import \(give --published\)/);
    assert.doesNotMatch(listed.stderr, /GOOGLEBOT has no publisher's time/, 'googlebot.json carries its own');

    // Nothing done: exit 2 and nothing stored.
    const none = umbra(dataDir, ['data', 'import-list', 'AI_CRAWLER', '-', '--provider', 'OPENAI'], 'garbage\n');
    assert.equal(none.code, 2);
    assert.equal(none.json.stored, false);
    const unknownKind = umbra(dataDir, ['data', 'import-list', 'CRAWLERS', join(FIXTURES, 'bingbot-cidrs.txt'), '--provider', 'BINGBOT']);
    assert.equal(unknownKind.code, 2);
    assert.equal(unknownKind.json.error, 'USAGE');
    assert.match(unknownKind.json.detail, /unknown list kind 'CRAWLERS'; one of .*SEARCH_ENGINE.*DATACENTER/);
    // (A missing or bad --provider, or an unknown --section, is refused the same way; list-importer.test.ts covers them.)
    assert.equal(umbra(dataDir, ['data', 'import-list', 'SEARCH_ENGINE', join(FIXTURES, 'missing.txt'), '--provider', 'X']).code, 2);
    assert.deepEqual(readdirSync(join(dataDir, 'lists')).sort(), [
      'AI_CRAWLER--OPENAI.json',
      'SEARCH_ENGINE--GOOGLEBOT.json',
      'TOR_NODE--TOR.json',
    ]);

    const beforeRemove = await served.revision();
    const removed = umbra(dataDir, ['data', 'remove-list', 'tor-node', '--provider', 'tor']);
    assert.notEqual(await served.revision(), beforeRemove, 'so does a removal');
    assert.deepEqual([removed.code, removed.json], [0, { kind: 'TOR_NODE', provider: 'TOR', removed: true }]);
    assert.equal(umbra(dataDir, ['data', 'remove-list', 'TOR_NODE', '--provider', 'TOR']).code, 2, 'nothing to remove');
    assert.equal(umbra(dataDir, ['data', 'remove-list', 'TOR_NODE']).code, 2, '--provider is required');
    assert.equal(umbra(dataDir, ['data', 'lists']).json.lists.length, 2);
  });
});
