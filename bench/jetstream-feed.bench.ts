// The distributed feed log and bus on NATS JetStream, against the embedded FileFeedLog in the same
// run: appended records/s from one process (appends of 5,000 small records, one in flight as
// ingestion keeps it; also against the client library's one request per record), an hour read back,
// and live fan-out latency from append to a subscriber on another connection (another node). Needs NATS with JetStream (UMBRA_TEST_NATS_URL, default
// nats://127.0.0.1:4222); its streams are named for this run and deleted afterwards.
// Run alone: node --import tsx bench/jetstream-feed.bench.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hourOf } from '../src/lib/time.ts';
import { FEED_IDS } from '../src/modules/feeds/feed-catalog.ts';
import type { FeedLog, FeedLogEntry } from '../src/modules/feeds/feed-log.ts';
import { JetStreamFeedBus } from '../src/storage/distributed/jetstream-feed-bus.ts';
import { JetStreamFeedLog } from '../src/storage/distributed/jetstream-feed-log.ts';
import { connectNats } from '../src/storage/distributed/nats-connection.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { requireEngine, testEngines, uniqueTestName } from '../test/helpers/engines.ts';
import { percentile } from '../test/helpers/lookup-load.ts';

const BATCH = 5_000;
const BATCHES = 40;
const LATENCY_SAMPLES = 2_000;

function batches(hour: number): FeedLogEntry[][] {
  const s = Math.floor(hour / 1000);
  return Array.from({ length: BATCHES }, (_, b) =>
    Array.from({ length: BATCH }, (_, k) => {
      const i = b * BATCH + k;
      const line = JSON.stringify({
        ip: `${1 + (i % 223)}.${(i >> 8) & 255}.${(i >> 16) & 255}.${i & 255}`,
        provider: 'BRIGHTDATA',
        type: 'RESIDENTIAL_PROXY',
        timestamp: s + (i % 3600),
        country_code: 'US',
        asn: 7922,
      });
      return { timeMs: hour + (i % 3600) * 1000, line };
    }),
  );
}

async function appendRate(log: FeedLog, work: FeedLogEntry[][]): Promise<number> {
  const t0 = performance.now();
  for (const b of work) await log.append('proxies', b);
  return Math.round((BATCH * BATCHES) / ((performance.now() - t0) / 1000));
}

export async function benchJetStreamFeed(): Promise<Record<string, number | string>> {
  await requireEngine('NATS', testEngines.natsUrl);
  const hour = hourOf(Date.now());
  const work = batches(hour);
  const prefix = uniqueTestName('umbra_bench');
  const nc = await connectNats(testEngines.natsUrl, { name: `umbra bench ${prefix}` });
  const other = await connectNats(testEngines.natsUrl, { name: `umbra bench ${prefix} (second node)` });
  const log = new JetStreamFeedLog(nc, { prefix });
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-jsfeed-'));
  const fileLog = new FileFeedLog(dir);
  try {
    await log.ensureStreams();
    const fileRate = await appendRate(fileLog, work);
    const jsRate = await appendRate(log, work);
    const requestRate = await publishPerRequest(log, work.slice(0, 10));
    const fileRead = await countedRead(fileLog, hour);
    const jsRead = await countedRead(log, hour);

    // Fan-out latency: appends of 10 records every 5 ms on one node, a live subscriber on another.
    const otherLog = new JetStreamFeedLog(other, { prefix });
    const bus = new JetStreamFeedBus(otherLog);
    const ac = new AbortController();
    const sub = await bus.subscribe('ja4t', { signal: ac.signal, maxBuffered: 100_000 });
    const latencies: number[] = [];
    const received = (async () => {
      for await (const b of sub) {
        const at = performance.timeOrigin + performance.now();
        for (const m of b) latencies.push(at - (m.record.t as number));
        if (latencies.length >= LATENCY_SAMPLES) return;
      }
    })();
    for (let k = 0; latencies.length < LATENCY_SAMPLES && k < LATENCY_SAMPLES; k += 10) {
      const t = performance.timeOrigin + performance.now();
      await log.append(
        'ja4t',
        Array.from({ length: 10 }, (_, i) => ({
          timeMs: Date.now(),
          line: JSON.stringify({ timestamp: Math.floor(Date.now() / 1000), t, i }),
        })),
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    await received;
    ac.abort();
    await bus.close();
    await otherLog.close();
    return {
      'JetStream append records/s (5,000 per append)': jsRate,
      'baseline: FileFeedLog append records/s': fileRate,
      'JetStream / FileFeedLog': Number((jsRate / fileRate).toFixed(2)),
      'baseline: js.publish per record, 5,000 at once': requestRate,
      'JetStream read of one hour records/s': jsRead,
      'baseline: FileFeedLog read records/s': fileRead,
      'fan-out append → other node p50 ms': Number(percentile(latencies, 50).toFixed(2)),
      'fan-out append → other node p99 ms': Number(percentile(latencies, 99).toFixed(2)),
    };
  } finally {
    await log.close();
    await fileLog.close();
    rmSync(dir, { recursive: true, force: true });
    const { jsm } = await log.context;
    await Promise.all(FEED_IDS.map((f) => jsm.streams.delete(log.streamName(f)).catch(() => {})));
    await Promise.all([nc.close(), other.close()]);
  }
}

/**
 * The library's way: one request (js.publish) per record, all of an append at once, each with its
 * message id, into a subject of their own (not read back).
 */
async function publishPerRequest(log: JetStreamFeedLog, work: FeedLogEntry[][]): Promise<number> {
  const { js } = await log.context;
  const t0 = performance.now();
  for (const [b, entries] of work.entries())
    await Promise.all(entries.map((e, i) => js.publish(`${log.prefix}.proxies.0`, e.line, { msgID: `bench.${b}.${i}`, timeout: 30_000 })));
  return Math.round((BATCH * work.length) / ((performance.now() - t0) / 1000));
}

/** Records/s of reading back the hour the append runs filled (every record is in it). */
async function countedRead(log: FeedLog, hour: number): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  for await (const block of log.readHourBlocks('proxies', hour)) {
    n++;
    for (let i = block.indexOf('\n'); i !== -1; i = block.indexOf('\n', i + 1)) n++;
  }
  if (n !== BATCH * BATCHES) throw new Error(`read ${n} records of ${BATCH * BATCHES}`);
  return Math.round(n / ((performance.now() - t0) / 1000));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [k, v] of Object.entries(await benchJetStreamFeed())) console.log(`  ${k.padEnd(48)} ${v}`);
}
