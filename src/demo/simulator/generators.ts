import { createAdbGenerator } from './adb-sessions.ts';
import { createDnsGenerator, createHttpGenerator, createHttpsGenerator } from './honeypot-feeds.ts';
import { createAnonymizersGenerator, createJa4tGenerator, createProxiesGenerator } from './network-feeds.ts';
import { createTorrentsGenerator } from './torrents.ts';
import { weighted } from './random.ts';
import { FEED_IDS, type FeedId, type RecordGenerator, type Rng, type SimulatorDeps } from './types.ts';

/**
 * One record generator per feed. Each returns a record for the timestamp tsMs (ms) in the contract's
 * member names, with the timestamp in its feed's unit. Randomness comes only from deps.rng, plus
 * name-seeded pools (sticky proxies, VPN ranges, swarms, attackers) that are identical in every run.
 * Generators keep state (open ADB sessions), so create one set per simulator.
 */
export function createGenerators(deps: SimulatorDeps): Record<FeedId, RecordGenerator> {
  return {
    proxies: createProxiesGenerator(deps),
    anonymizers: createAnonymizersGenerator(deps),
    torrents: createTorrentsGenerator(deps),
    honeypot_http: createHttpGenerator(deps),
    honeypot_https: createHttpsGenerator(deps),
    honeypot_dns: createDnsGenerator(deps),
    honeypot_adb: createAdbGenerator(deps),
    ja4t: createJa4tGenerator(deps),
  };
}

/**
 * Relative record rates per feed, shaped like production volumes (proxy sightings and honeypot HTTP
 * dominate, ADB is rare). Shares only: the scheduler still owes every feed a record at least every 5 s.
 */
export const FEED_WEIGHTS: Readonly<Record<FeedId, number>> = {
  proxies: 10,
  anonymizers: 3,
  torrents: 2,
  honeypot_http: 8,
  honeypot_https: 5,
  honeypot_dns: 4,
  honeypot_adb: 1,
  ja4t: 4,
};

/** Draws which feed the next record belongs to, in proportion to the weights. */
export function pickFeed(rng: Rng, weights: Readonly<Record<FeedId, number>> = FEED_WEIGHTS): FeedId {
  return weighted(
    rng,
    FEED_IDS.map((id) => [id, weights[id]] as const),
  );
}
