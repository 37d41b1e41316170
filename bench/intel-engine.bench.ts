// The intelligence engine: start-up replay of the demo's 48-hour backfill, and what intelligence adds
// to an in-process lookup (dataset only = the baseline, measured in the same run).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock } from '../src/lib/clock.ts';
import { createLogger } from '../src/lib/logger.ts';
import { FEED_LIST } from '../src/modules/feeds/feed-catalog.ts';
import { RecordValidator } from '../src/modules/feeds/feed-records.ts';
import { LogLearner } from '../src/modules/feeds/log-learner.ts';
import { IngestService } from '../src/modules/feeds/ingest-service.ts';
import { replayLog } from '../src/modules/feeds/log-replay.ts';
import { mulberry32 } from '../src/demo/simulator/random.ts';
import { Simulator, simulatorDeps } from '../src/demo/simulator/simulator.ts';
import { IntelIndex, WINDOW_S } from '../src/modules/intel/engine/intel-index.ts';
import { loadDataset } from '../src/modules/dataset/dataset-reader.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { parseIp, type ParsedIp } from '../src/lib/ip-address.ts';
import { FileFeedLog } from '../src/storage/embedded/file-feed-log.ts';
import { MemoryFeedBus } from '../src/storage/embedded/memory-feed-bus.ts';

function randomPublicV4(): ParsedIp {
  for (;;) {
    const v = (Math.random() * 2 ** 32) >>> 0;
    const a = v >>> 24;
    if (a === 0 || a === 10 || a === 127 || a >= 224) continue;
    return parseIp(`${a}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`)!;
  }
}

export async function benchIntelEngine(): Promise<Record<string, number | string>> {
  const ds = loadDataset(await ensureRealDataset());
  const dir = mkdtempSync(join(tmpdir(), 'umbra-intel-bench-'));
  try {
    const log = new FileFeedLog(dir);
    const logger = createLogger('silent');
    const bus = new MemoryFeedBus();
    const ingest = new IngestService(log, bus, new RecordValidator(() => Date.now()), logger);
    const live = new IntelIndex(systemClock);
    // The live index learns from the bus, as the server's does.
    const learner = new LogLearner({
      name: 'bench',
      log,
      bus,
      feeds: FEED_LIST,
      windowMs: 0,
      now: () => Date.now(),
      observer: live.observe,
    });
    await learner.start();
    const sim = new Simulator(
      ingest,
      simulatorDeps(() => ds, mulberry32(7)),
      systemClock,
      1,
      logger,
    );
    const t0 = performance.now();
    const records = await sim.backfill(Date.now());
    const backfillMs = performance.now() - t0;
    await learner.stop();

    const index = new IntelIndex(systemClock);
    const t1 = performance.now();
    const replayed = await replayLog(log, FEED_LIST, Date.now() - WINDOW_S * 1000, index.observe);
    const replayMs = performance.now() - t1;
    await log.close();
    live.close();

    // Lookups: random public addresses (almost all unknown), and addresses the index knows.
    const random = Array.from({ length: 500_000 }, randomPublicV4);
    const knownIps = index.addressTexts().map((k) => parseIp(k)!);
    const run = (ips: ParsedIp[], withIntel: boolean, rounds = 3) => {
      let best = 0;
      let sink = 0;
      for (let r = 0; r < rounds; r++) {
        const t = performance.now();
        for (let i = 0; i < ips.length; i++) {
          const ip = ips[i]!;
          sink += ds.network(ip).asn + ds.location(ip).country.length;
          if (withIntel) sink += index.intelligence(ip).risk_score;
        }
        best = Math.max(best, ips.length / ((performance.now() - t) / 1000));
      }
      if (sink < 0) throw new Error('unreachable');
      return Math.round(best);
    };
    index.rebuildAnonymizers(); // as the timer would
    const base = run(random, false);
    const withIntel = run(random, true);
    const knownRate = run(knownIps, true, 5);
    index.close();
    return {
      'demo backfill records (48 h)': records,
      'backfill with live index ms': Math.round(backfillMs),
      'replay into a fresh index ms': Math.round(replayMs),
      'replayed records': replayed,
      'addresses with data': index.addresses,
      'random v4 lookups/s, dataset only (baseline)': base,
      'random v4 lookups/s, dataset + intelligence': withIntel,
      'ratio with/without intelligence': Number((withIntel / base).toFixed(2)),
      'known-address lookups/s (dataset + intelligence)': knownRate,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchIntelEngine());
