import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { FeedLog } from '../../modules/feeds/feed-log.ts';
import { HOUR_MS } from '../../lib/time.ts';

const collect = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
};

/** Behaviour every FeedLog backend must have. */
export function feedLogContract(backend: string, make: () => Promise<{ log: FeedLog; close(): Promise<void> }>): void {
  describe(`FeedLog contract: ${backend}`, () => {
    const h0 = Date.UTC(2026, 10, 21, 23, 0, 0);

    it('should partition records by the hour of their own timestamp and keep append order', async () => {
      const { log, close } = await make();
      try {
        await log.append('proxies', [
          { timeMs: h0 + 10, line: '{"n":1}' },
          { timeMs: h0 + HOUR_MS + 5, line: '{"n":2}' },
          { timeMs: h0 + HOUR_MS - 1, line: '{"n":3}' },
        ]);
        await log.append('proxies', [{ timeMs: h0 + 20, line: '{"n":4}' }]);
        assert.deepEqual(await collect(log.readHour('proxies', h0)), ['{"n":1}', '{"n":3}', '{"n":4}']);
        assert.deepEqual(await collect(log.readHour('proxies', h0 + HOUR_MS)), ['{"n":2}']);
        const blocks = await collect(log.readHourBlocks('proxies', h0));
        assert.deepEqual(blocks.join('\n').split('\n'), ['{"n":1}', '{"n":3}', '{"n":4}'], 'blocks hold the same lines');
        assert.ok(blocks.every((b) => b !== '' && !b.endsWith('\n') && !b.includes('\n\n')));
        assert.deepEqual(await collect(log.readHourBlocks('torrents', h0)), []);
        assert.deepEqual(await log.hours('proxies'), [h0, h0 + HOUR_MS]);
        assert.deepEqual(await log.hours('torrents'), []);
        assert.deepEqual(await collect(log.readHour('torrents', h0)), [], 'a missing partition reads as empty');
      } finally {
        await close();
      }
    });

    it('should keep concurrent appends whole and all of them', async () => {
      const { log, close } = await make();
      try {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            log.append(
              'ja4t',
              Array.from({ length: 20 }, (_, j) => ({ timeMs: h0, line: JSON.stringify({ i, j }) })),
            ),
          ),
        );
        const lines = await collect(log.readHour('ja4t', h0));
        assert.equal(lines.length, 1000);
        assert.equal(new Set(lines).size, 1000);
        // Each append's records stay in their order.
        const js = lines
          .map((l) => JSON.parse(l) as { i: number; j: number })
          .filter((r) => r.i === 7)
          .map((r) => r.j);
        assert.deepEqual(js, [...Array(20).keys()]);
      } finally {
        await close();
      }
    });

    it('should take one append that spans many hours (a backfill) whole', async () => {
      const { log, close } = await make();
      try {
        const entries = Array.from({ length: 48 * 3 }, (_, i) => ({ timeMs: h0 + Math.floor(i / 3) * HOUR_MS, line: `{"i":${i}}` }));
        await log.append('honeypot_dns', entries);
        await log.append('honeypot_dns', entries.slice(0, 3));
        assert.equal((await log.hours('honeypot_dns')).length, 48);
        assert.deepEqual(await collect(log.readHour('honeypot_dns', h0)), [
          '{"i":0}',
          '{"i":1}',
          '{"i":2}',
          '{"i":0}',
          '{"i":1}',
          '{"i":2}',
        ]);
        assert.deepEqual(await collect(log.readHour('honeypot_dns', h0 + 47 * HOUR_MS)), ['{"i":141}', '{"i":142}', '{"i":143}']);
      } finally {
        await close();
      }
    });

    it('should drop partitions older than a given hour', async () => {
      const { log, close } = await make();
      try {
        for (let k = 0; k < 4; k++) await log.append('torrents', [{ timeMs: h0 + k * HOUR_MS, line: `{"k":${k}}` }]);
        assert.equal(await log.dropBefore('torrents', h0 + 2 * HOUR_MS), 2);
        assert.deepEqual(await log.hours('torrents'), [h0 + 2 * HOUR_MS, h0 + 3 * HOUR_MS]);
        await log.append('torrents', [{ timeMs: h0 + 3 * HOUR_MS, line: '{"k":9}' }]);
        assert.deepEqual(await collect(log.readHour('torrents', h0 + 3 * HOUR_MS)), ['{"k":3}', '{"k":9}']);
      } finally {
        await close();
      }
    });

    it('should, when it offers hourFile, name a file holding exactly the lines readHour yields, and a version that moves with appends', async (t) => {
      const { log, close } = await make();
      try {
        if (!log.hourFile) return t.skip('no local files: readers stream readHourBlocks');
        assert.equal(await log.hourFile('anonymizers', h0), undefined, 'no records, no file');
        await log.append('anonymizers', [
          { timeMs: h0 + 1, line: '{"a":1}' },
          { timeMs: h0 + 2, line: '{"a":2}' },
        ]);
        const first = await log.hourFile('anonymizers', h0 + 59_000);
        assert.ok(first?.whole);
        const text = await readFile(first.path, 'utf8');
        assert.deepEqual(
          text.split('\n'),
          [...(await collect(log.readHour('anonymizers', h0))), ''],
          'whole lines, each ending in a newline',
        );
        assert.equal((await log.hourFile('anonymizers', h0))?.version, first.version, 'stable while nothing is appended');
        await log.append('anonymizers', [{ timeMs: h0 + 3, line: '{"a":3}' }]);
        const second = await log.hourFile('anonymizers', h0);
        assert.notEqual(second?.version, first.version, 'a late record changes the version');
        assert.equal((await readFile(second!.path, 'utf8')).split('\n').length, 4);
        assert.equal(await log.hourFile('anonymizers', h0 + HOUR_MS), undefined);
      } finally {
        await close();
      }
    });
  });
}
