import type { Clock } from '../../lib/clock.ts';
import type { IpDataset } from '../../modules/lookup/ip-dataset.ts';
import { parseIp } from '../../lib/ip-address.ts';
import { FEEDS, FEED_IDS, type FeedId } from '../../modules/feeds/feed-catalog.ts';
import type { IngestService, IngestSummary } from '../../modules/feeds/ingest-service.ts';
import { buildClientHello, CLIENT_PROFILES } from '../tls/client-hello-builder.ts';
import { parseClientHello } from '../../modules/tls/client-hello-parser.ts';
import { createGenerators, FEED_WEIGHTS } from './generators.ts';
import { mulberry32 } from './random.ts';
import type { RecordGenerator, Rng, SimulatorDeps } from './types.ts';

/** Records per second per unit of weight at rate 1: the lightest feed (weight 1) gets one every 5 s. */
const PER_WEIGHT_PER_S = 0.2;
/** The backfill is sparser than live traffic so that a first start stays quick: records per weight per hour. */
const BACKFILL_PER_WEIGHT_PER_H = 12;

export interface SimulatorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Real ASN/country from the IP dataset and real ClientHellos, so simulated records agree with lookups. */
export function simulatorDeps(dataset: () => IpDataset, rng: Rng): SimulatorDeps {
  return {
    rng,
    network: (text) => {
      const ip = parseIp(text);
      if (!ip) return { asn: 0, country: '' };
      return { asn: dataset().network(ip).asn, country: dataset().location(ip).country };
    },
    tlsHello: (r, sni) => {
      const profile = CLIENT_PROFILES[Math.floor(r() * CLIENT_PROFILES.length)]!;
      const raw = buildClientHello(profile, {
        sni: sni ?? undefined,
        random: (n) => Uint8Array.from({ length: n }, () => Math.floor(r() * 256)),
      });
      return { raw, details: parseClientHello(raw) };
    },
  };
}

/**
 * Demo-mode traffic for all eight feeds, published through the same ingestion path as real data
 * (validation, durable log, streams, aggregates). At rate 1 every feed gets a record at least every 5 s.
 */
export class Simulator {
  private readonly generators: Record<FeedId, RecordGenerator>;
  private readonly owed = Object.fromEntries(FEED_IDS.map((id) => [id, 0])) as Record<FeedId, number>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private published = 0;

  constructor(
    private readonly ingest: IngestService,
    deps: SimulatorDeps,
    private readonly clock: Clock,
    private readonly rate: number,
    private readonly logger: SimulatorLogger,
  ) {
    this.generators = createGenerators(deps);
  }

  get count(): number {
    return this.published;
  }

  /** Simulated records for the `hours` before `endMs`, oldest first, so snapshots and aggregates exist at once. */
  async backfill(endMs: number, hours = 48): Promise<number> {
    const rng = mulberry32(0x5eed);
    const startMs = endMs - hours * 3_600_000;
    let total = 0;
    for (const id of FEED_IDS) {
      const n = Math.max(1, Math.round(hours * BACKFILL_PER_WEIGHT_PER_H * FEED_WEIGHTS[id]));
      const times = Array.from({ length: n }, () => startMs + Math.floor(rng() * (endMs - startMs))).sort((a, b) => a - b);
      total += (await this.publish(id, times)).accepted;
    }
    return total;
  }

  /** One step: each feed gets the records its weight owes for `seconds` of simulated time. */
  async tick(seconds: number): Promise<void> {
    const now = this.clock.now();
    for (const id of FEED_IDS) {
      this.owed[id] += seconds * this.rate * PER_WEIGHT_PER_S * FEED_WEIGHTS[id];
      const n = Math.floor(this.owed[id] + 1e-9);
      if (n === 0) continue;
      this.owed[id] -= n;
      await this.publish(
        id,
        Array.from({ length: n }, () => now),
      );
    }
  }

  start(intervalMs = 1000): void {
    if (this.rate <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      // Ticks never overlap: a slow disk delays the next one instead of piling them up.
      this.running = this.running
        .then(() => this.tick(intervalMs / 1000))
        .catch((e) => this.logger.warn({ err: (e as Error).message }, 'simulator tick failed'));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async publish(id: FeedId, times: number[]): Promise<IngestSummary> {
    const gen = this.generators[id];
    const summary = await this.ingest.ingest(FEEDS[id], [times.map((t, i) => ({ n: i + 1, value: gen(t) }))], { simulated: true });
    this.published += summary.accepted;
    if (summary.rejected > 0) this.logger.warn({ feed: id, errors: summary.errors.slice(0, 3) }, 'simulator produced invalid records');
    return summary;
  }
}
