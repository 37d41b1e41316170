import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { MemoryFeedBus } from '../../storage/embedded/memory-feed-bus.ts';
import { tinyDataset } from '../../../test/helpers/tiny-dataset.ts';
import { FEED_IDS, FEEDS, type FeedId } from '../../modules/feeds/feed-catalog.ts';
import { RecordValidator } from '../../modules/feeds/feed-records.ts';
import { IngestService } from '../../modules/feeds/ingest-service.ts';
import { mulberry32 } from './random.ts';
import { Simulator, simulatorDeps } from './simulator.ts';

function setup(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-sim-'));
  const log = new FileFeedLog(dir);
  const bus = new MemoryFeedBus();
  const clock = new ManualClock();
  const warnings: unknown[] = [];
  const logger = { info: () => {}, warn: (o: object) => void warnings.push(o) };
  const ingest = new IngestService(log, bus, new RecordValidator(() => clock.now()), logger);
  const sim = new Simulator(
    ingest,
    simulatorDeps(() => tinyDataset, mulberry32(42)),
    clock,
    1,
    logger,
  );
  t.after(async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { log, bus, clock, sim, warnings };
}

describe(Simulator.name, () => {
  it('should give every feed at least one valid record every 5 seconds at rate 1, through ingestion', async (t) => {
    const { bus, clock, sim, warnings } = setup(t);
    const ac = new AbortController();
    const seen = new Map<FeedId, number>();
    const subs = FEED_IDS.map(async (id) => {
      for await (const batch of await bus.subscribe(id, { signal: ac.signal, maxBuffered: 100_000 }))
        seen.set(id, (seen.get(id) ?? 0) + batch.length);
    });
    for (let second = 0; second < 5; second++) {
      await sim.tick(1);
      clock.advance(1000);
    }
    ac.abort();
    await Promise.all(subs);
    assert.deepEqual(warnings, [], 'no simulated record was refused by validation');
    for (const id of FEED_IDS) assert.ok((seen.get(id) ?? 0) >= 1, `${id} got ${seen.get(id) ?? 0} records in 5 s`);
    assert.equal(
      sim.count,
      [...seen.values()].reduce((a, b) => a + b, 0),
    );
  });

  it('should backfill 48 hours of valid records into the hourly partitions of every feed', async (t) => {
    const { log, clock, sim, warnings } = setup(t);
    const n = await sim.backfill(clock.now());
    assert.deepEqual(warnings, []);
    assert.ok(n > 10_000, `${n} records`);
    for (const id of FEED_IDS) {
      const hours = await log.hours(id);
      assert.ok(hours.length >= 40, `${id}: ${hours.length} hours`);
      assert.ok(hours[0]! >= clock.now() - 49 * 3_600_000 && hours.at(-1)! <= clock.now(), id);
    }
    // Timestamps in the feed's unit, inside the window.
    for await (const line of log.readHour('honeypot_adb', (await log.hours('honeypot_adb'))[0]!)) {
      const ts = (JSON.parse(line) as { timestamp: number }).timestamp;
      assert.ok(ts > clock.now() - 49 * 3_600_000 && ts <= clock.now(), `ms: ${ts}`);
    }
    assert.equal(FEEDS.honeypot_adb.unit, 'ms');
  });

  it('should store every record it makes with simulated: true, which no ingestion client may send', async (t) => {
    const { log, clock, sim } = setup(t);
    await sim.tick(5);
    let lines = 0;
    for (const id of FEED_IDS)
      for (const hour of await log.hours(id))
        for await (const line of log.readHour(id, hour)) {
          lines++;
          assert.equal((JSON.parse(line) as { simulated?: unknown }).simulated, true, `${id}: ${line.slice(0, 80)}`);
        }
    assert.ok(lines >= FEED_IDS.length, `${lines} lines`);
    const validator = new RecordValidator(() => clock.now());
    const ingest = new IngestService(log, new MemoryFeedBus(), validator, { warn: () => {} });
    const record = {
      ip: '192.0.2.7',
      provider: 'ACME',
      type: 'RESIDENTIAL_PROXY',
      timestamp: Math.floor(clock.now() / 1000),
      country_code: '',
      asn: 0,
    };
    const marked = await ingest.ingest(FEEDS.proxies, [[{ n: 1, value: { ...record, simulated: true } }]]);
    assert.deepEqual([marked.accepted, marked.errors[0]?.field, marked.errors[0]?.reason], [0, 'simulated', 'invalid_value']);
    const real = await ingest.ingest(FEEDS.proxies, [[{ n: 1, value: record }]]);
    assert.equal(real.accepted, 1, 'a real record is stored without the member');
  });
});
