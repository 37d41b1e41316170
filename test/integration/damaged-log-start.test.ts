import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { FileFeedLog } from '../../src/storage/embedded/file-feed-log.ts';
import { createStores } from '../../src/storage/index.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { sampleRecords } from '../helpers/feed-fixtures.ts';

// 01:05 UTC: the export jobs' first pass snapshots hour 00 of every feed, the damaged one included.
const NOW = Date.UTC(2026, 10, 22, 1, 5);
const HOUR = Date.UTC(2026, 10, 22, 0);

describe('serving from a feed log with damaged lines', () => {
  it('should start, replay every whole record into the domain aggregates, snapshot the hour without the damaged lines, and count them', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-damaged-start-'));
    const config = { ...parseConfig({ UMBRA_DATA_DIR: dataDir, UMBRA_LOG_LEVEL: 'silent' }), sqliteFile: ':memory:' };
    const base = sampleRecords(NOW).honeypot_dns;
    const events = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({ ...base, timestamp: HOUR + i * 1000, source_ip: `198.51.100.${i + 1}` }),
    );
    const log = new FileFeedLog(config.feedLogDir);
    await log.append('honeypot_dns', [{ timeMs: HOUR, line: events[0]! }]);
    const file = (await log.hourFile('honeypot_dns', HOUR))!.path;
    await log.close();
    // What an older version could leave: event 2 torn by a crash with event 3 glued to it, garbage,
    // and a line that is JSON but no record.
    writeFileSync(
      file,
      `${[events[0], events[1], events[2]!.slice(0, 40) + events[3], 'null', '\u0000\u0000\u0000', events[4], events[5]].join('\n')}\n`,
    );
    const clock = new ManualClock(NOW);
    const app = await buildTestApp(t, { clock, stores: await createStores(config, clock), exportJobs: true });
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const { key } = await app.team();
    const res = await app.http.inject({ url: '/api/v4/lookup/domain/acme-logistics.com?limit=100', headers: { 'x-api-key': key } });
    assert.equal(res.statusCode, 200);
    const data = res.json().data;
    assert.equal(data.stats.total_events_30d, 5, 'events 0, 1, 3 (glued to the torn 2), 4 and 5');
    assert.deepEqual(
      data.recent_events.map((e: { timestamp: number }) => e.timestamp - HOUR / 1000),
      [5, 4, 3, 1, 0],
    );

    // The scheduler's first pass (started by the app) writes hour 00 of the 8 feeds.
    for (let waited = 0; (await app.http.inject({ url: '/health' })).json().exports.snapshots < 8; waited += 20) {
      assert.ok(waited < 50_000, 'the first pass of the export jobs ends');
      await new Promise((r) => setTimeout(r, 20));
    }
    const meta = await app.http.inject({ url: '/api/v4/feeds/helio/dns/export/2026-11-22/0/meta', headers: { 'x-api-key': key } });
    assert.equal(meta.json().rows, 5);
    // The last job is counted just after its snapshot is listed: wait for the count, bounded.
    let metrics = '';
    for (let waited = 0; !/umbra_export_jobs_total\{kind="hourly",outcome="done"\} 8\n/.test(metrics); waited += 20) {
      assert.ok(waited < 5_000, `the 8 hourly jobs are counted: ${/umbra_export_jobs_total.*\n/.exec(metrics)?.[0]}`);
      if (waited > 0) await new Promise((r) => setTimeout(r, 20));
      metrics = (await app.http.inject({ url: '/metrics' })).body;
    }
    assert.match(metrics, /umbra_export_skipped_lines_total\{feed="honeypot_dns"\} 3\n/, 'the torn piece, the garbage and the null line');
  });
});
