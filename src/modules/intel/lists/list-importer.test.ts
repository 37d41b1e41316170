import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../lib/clock.ts';
import { FileIntelListStore } from '../../../storage/embedded/file-intel-list-store.ts';
import { ListImporter, ListImportError } from './list-importer.ts';

const FIXTURES = join(import.meta.dirname, '../../../../test/fixtures/lists');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function setup(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-import-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = new FileIntelListStore(dir);
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 10, 0, 0, 750));
  return { store, clock, importer: new ListImporter(store, clock, sha256) };
}

describe(ListImporter.name, () => {
  it('should store a Googlebot list versioned by the file hash at the clock time', async (t) => {
    const { store, importer } = setup(t);
    const bytes = readFileSync(join(FIXTURES, 'googlebot.json'));
    const s = await importer.import({ kind: 'search-engine', provider: 'googlebot', bytes });
    assert.equal(s.version, sha256(bytes).slice(0, 16));
    assert.match(s.version, /^[0-9a-f]{16}$/);
    assert.equal(s.imported_at, Date.UTC(2026, 10, 23, 10, 0, 0) / 1000);
    assert.deepEqual(
      {
        kind: s.kind,
        provider: s.provider,
        format: s.format,
        count: s.count,
        entries: s.entries,
        rejected: s.rejected,
        stored: s.stored,
        replaced: s.replaced,
      },
      {
        kind: 'SEARCH_ENGINE',
        provider: 'GOOGLEBOT',
        format: 'google-prefixes',
        count: 5,
        entries: 6,
        rejected: 0,
        stored: true,
        replaced: null,
      },
    );
    const [list] = await store.all();
    assert.deepEqual(list, {
      kind: 'SEARCH_ENGINE',
      provider: 'GOOGLEBOT',
      version: s.version,
      imported_at: s.imported_at,
      published_at: Date.UTC(2026, 7, 20, 14, 46, 45) / 1000,
      published_from: 'content',
      format: 'google-prefixes',
      cidrs: ['66.249.79.64/27', '192.178.4.0/27', '192.178.4.128/27', '2001:4860:4801:10::/64', '2001:4860:4801:11::/64'],
    });
  });

  it('should replace the list of the same kind and provider, and keep other providers', async (t) => {
    const { store, importer, clock } = setup(t);
    const first = await importer.import({ kind: 'TOR_NODE', bytes: readFileSync(join(FIXTURES, 'tor-bulk-exit-list.txt')) });
    assert.equal(first.provider, 'TOR', 'Tor formats name their provider');
    await importer.import({ kind: 'TOR_NODE', provider: 'DAN_ME_UK', bytes: Buffer.from('185.220.101.18\n') });
    clock.advance(3600_000);
    const second = await importer.import({ kind: 'tor_node', bytes: readFileSync(join(FIXTURES, 'tor-exit-addresses.txt')) });
    assert.equal(second.replaced, first.version);
    assert.notEqual(second.version, first.version);
    const lists = await store.all();
    assert.equal(lists.length, 2);
    const tor = lists.find((l) => l.provider === 'TOR')!;
    assert.equal(tor.format, 'tor-exit-addresses');
    assert.equal(tor.cidrs.length, 3);
    assert.equal(tor.imported_at, first.imported_at + 3600);
  });

  it('should keep the good entries of a partly bad file and report the bad ones by line', async (t) => {
    const { store, importer } = setup(t);
    const s = await importer.import({
      kind: 'AI_CRAWLER',
      provider: 'OPENAI',
      bytes: Buffer.from('4.151.71.176/28\nnope\n4.151.119.48/28\n1.2.3.4/40\n'),
    });
    assert.equal(s.count, 2);
    assert.equal(s.rejected, 2);
    assert.deepEqual(
      s.errors.map((e) => e.line),
      [2, 4],
    );
    assert.equal((await store.all())[0]!.cidrs.length, 2);
  });

  it('should store nothing when no entry is valid', async (t) => {
    const { store, importer } = setup(t);
    await importer.import({ kind: 'AI_CRAWLER', provider: 'OPENAI', bytes: Buffer.from('4.151.71.176/28\n') });
    const s = await importer.import({ kind: 'AI_CRAWLER', provider: 'OPENAI', bytes: Buffer.from('# nothing valid\nnope\n') });
    assert.equal(s.stored, false);
    assert.equal(s.count, 0);
    assert.deepEqual((await store.all())[0]!.cidrs, ['4.151.71.176/28'], 'the previous list stays');
  });

  it('should refuse unknown kinds, bad provider tags, unreadable files and lists without a publisher', async (t) => {
    const { store, importer } = setup(t);
    const bytes = readFileSync(join(FIXTURES, 'bingbot-cidrs.txt'));
    await assert.rejects(
      importer.import({ kind: 'CRAWLER', provider: 'BING', bytes }),
      (e: Error) => e instanceof ListImportError && /unknown list kind 'CRAWLER'; one of FREE_VPN, .*TOR_NODE.*DATACENTER/.test(e.message),
    );
    await assert.rejects(importer.import({ kind: 'SEARCH_ENGINE', provider: '../bing', bytes }), /bad provider tag/);
    await assert.rejects(importer.import({ kind: 'SEARCH_ENGINE', bytes }), /cidr-lines file does not name its publisher: give --provider/);
    await assert.rejects(importer.import({ kind: 'DATACENTER', bytes: Buffer.from('{"nope": 1}') }), ListImportError);
    assert.deepEqual(await store.all(), []);
  });

  it('should take network kinds for cloud range files, with the provider from the format', async (t) => {
    const { importer } = setup(t);
    const aws = await importer.import({ kind: 'datacenter', bytes: readFileSync(join(FIXTURES, 'aws-ip-ranges.json')) });
    assert.deepEqual([aws.kind, aws.provider, aws.count], ['DATACENTER', 'AWS', 6]);
    const health = await importer.import({
      kind: 'UPTIME_MONITOR',
      provider: 'AWS_ROUTE53',
      sections: ['ROUTE53_HEALTHCHECKS'],
      bytes: readFileSync(join(FIXTURES, 'aws-ip-ranges.json')),
    });
    assert.equal(health.count, 1);
    assert.deepEqual(health.sections?.imported, ['ROUTE53_HEALTHCHECKS']);
  });

  it("should keep the publisher's time: --published first, then the file's header, then the file's date, else the import", async (t) => {
    const { importer, clock } = setup(t);
    const nowS = Math.floor(clock.now() / 1000);
    const googlebot = readFileSync(join(FIXTURES, 'googlebot.json'));
    const bulk = readFileSync(join(FIXTURES, 'tor-bulk-exit-list.txt'));
    const header = Date.UTC(2026, 7, 20, 14, 46, 45) / 1000;
    const given = Date.UTC(2022, 0, 18) / 1000;
    const fileDate = nowS - 5 * 86_400;
    const times = async (req: Parameters<ListImporter['import']>[0]) => {
      const s = await importer.import(req);
      return [s.published_at, s.published_from];
    };
    const gb = { kind: 'SEARCH_ENGINE', provider: 'GOOGLEBOT', bytes: googlebot };
    assert.deepEqual(await times(gb), [header, 'content']);
    assert.deepEqual(
      await times({ ...gb, published: { at: fileDate, from: 'file-date' } }),
      [header, 'content'],
      'the header wins over a file date',
    );
    assert.deepEqual(await times({ ...gb, published: { at: given, from: 'option' } }), [given, 'option'], 'what the user gives wins');
    assert.deepEqual(await times({ kind: 'TOR_NODE', bytes: bulk }), [nowS, 'import'], 'an undated file from standard input');
    assert.deepEqual(await times({ kind: 'TOR_NODE', bytes: bulk, published: { at: fileDate, from: 'file-date' } }), [
      fileDate,
      'file-date',
    ]);
    assert.deepEqual(
      await times({ kind: 'TOR_NODE', bytes: bulk, published: { at: nowS + 7 * 86_400, from: 'file-date' } }),
      [nowS, 'import'],
      'a file date in the future says nothing',
    );
    await assert.rejects(
      importer.import({ kind: 'TOR_NODE', bytes: bulk, published: { at: nowS + 7 * 86_400, from: 'option' } }),
      /bad publication time/,
    );
    await assert.rejects(importer.import({ kind: 'TOR_NODE', bytes: bulk, published: { at: 12, from: 'option' } }), ListImportError);
  });
});
