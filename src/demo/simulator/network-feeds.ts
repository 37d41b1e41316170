import { cidrsOf, cidrWeights, type SpaceKind } from './address-space.ts';
import { addressIn, rangeIn } from './ip-space.ts';
import { JA4T_BY_SPACE, JA4T_FALLBACK } from './ja4t-profiles.ts';
import { PROXY_PROVIDERS, PROXY_SPACE, VPN_PROVIDERS, type ProxyProvider, type ProxyType, type VpnProvider } from './providers.ts';
import { chance, pick, stableRng, weighted } from './random.ts';
import type { Rng, SimulatorDeps } from './types.ts';

/** Addresses per provider and type that recur run after run: intelligence is built on repeats. */
const STICKY_POOL = 8;
const STICKY_SHARE = 0.6;
const VPN_POOL = 16;
const VPN_STICKY_SHARE = 0.75;

export interface ProxyExit {
  ip: string;
  provider: string;
  type: ProxyType;
  space: SpaceKind;
}

function freshAddress(rng: Rng, type: ProxyType): { ip: string; space: SpaceKind } {
  const space = weighted(rng, PROXY_SPACE[type]);
  return { ip: addressIn(rng, weighted(rng, cidrWeights(cidrsOf(space)))), space };
}

const stickyCache = new Map<string, ReadonlyArray<{ ip: string; space: SpaceKind }>>();

/** The provider's stable pool for a type; derived from the names only, never from the run's rng. */
export function stickyExits(provider: string, type: ProxyType): ReadonlyArray<{ ip: string; space: SpaceKind }> {
  const key = `${provider}/${type}`;
  let pool = stickyCache.get(key);
  if (!pool) {
    const r = stableRng(`proxy:${key}`);
    pool = Array.from({ length: STICKY_POOL }, () => freshAddress(r, type));
    stickyCache.set(key, pool);
  }
  return pool;
}

const providerWeights = PROXY_PROVIDERS.map((p) => [p, p.weight] as const);

/** One proxy exit sighting: a provider, one of its products, and an address (often a repeat). */
export function proxyExit(rng: Rng, provider: ProxyProvider = weighted(rng, providerWeights)): ProxyExit {
  const type = pick(rng, provider.types);
  const where = chance(rng, STICKY_SHARE) ? pick(rng, stickyExits(provider.tag, type)) : freshAddress(rng, type);
  return { ...where, provider: provider.tag, type };
}

const seconds = (tsMs: number): number => Math.floor(tsMs / 1000);

export function createProxiesGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const exit = proxyExit(deps.rng);
    const net = deps.network(exit.ip);
    return { ip: exit.ip, provider: exit.provider, type: exit.type, timestamp: seconds(tsMs), country_code: net.country, asn: net.asn };
  };
}

const JA4T_SUFFIX: Record<ProxyType, string> = {
  RESIDENTIAL_PROXY: 'RESIDENTIAL',
  MOBILE_PROXY: 'MOBILE',
  DATACENTER_PROXY: 'DATACENTER',
  PUBLIC_PROXY: 'PUBLIC',
  BLOCKCHAIN_PROXY: 'BLOCKCHAIN',
};

/** A host keeps its OS, so a recurring address keeps its JA4T: drawn from a PRNG seeded by the IP. */
function ja4tFor(ip: string, space: SpaceKind): string {
  const r = stableRng(`ja4t:${ip}`);
  const families = JA4T_BY_SPACE[space];
  return pick(r, families ? weighted(r, families) : JA4T_FALLBACK);
}

export function createJa4tGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const exit = proxyExit(deps.rng);
    const net = deps.network(exit.ip);
    return {
      ip: exit.ip,
      ja4t: ja4tFor(exit.ip, exit.space),
      // The sensor names the product line (real sensors often append it to the tag, SMARTPROXY_MOBILE, which ingestion maps the same way).
      provider: exit.provider,
      variant: JA4T_SUFFIX[exit.type],
      type: exit.type,
      timestamp: seconds(tsMs),
      country_code: net.country,
      asn: net.asn,
    };
  };
}

/** Prefix lengths of published exit ranges: mostly single servers, some small server racks. */
const V4_RANGE_LENGTHS = [
  [32, 5],
  [30, 1],
  [29, 2],
  [28, 2],
  [27, 1],
  [26, 1],
] as const;
const V6_RANGE_LENGTHS = [
  [64, 5],
  [60, 1],
  [56, 2],
  [52, 1],
  [48, 1],
] as const;

function vpnCidrs(v: VpnProvider): string[] {
  return cidrsOf(v.kinds, v.owners);
}

function freshRange(rng: Rng, v: VpnProvider): { start: string; end: string } {
  const cidr = weighted(rng, cidrWeights(vpnCidrs(v)));
  const v6 = cidr.includes(':');
  // A Tor relay is one machine: its exit "range" is the single address (or its /64).
  const len = v.type === 'TOR_NODE' ? (v6 ? 64 : 32) : weighted(rng, v6 ? V6_RANGE_LENGTHS : V4_RANGE_LENGTHS);
  return rangeIn(rng, cidr, len);
}

const vpnCache = new Map<string, ReadonlyArray<{ start: string; end: string }>>();

export function stickyRanges(v: VpnProvider): ReadonlyArray<{ start: string; end: string }> {
  let pool = vpnCache.get(v.tag);
  if (!pool) {
    const r = stableRng(`vpn:${v.tag}`);
    pool = Array.from({ length: VPN_POOL }, () => freshRange(r, v));
    vpnCache.set(v.tag, pool);
  }
  return pool;
}

const vpnWeights = VPN_PROVIDERS.map((v) => [v, v.weight] as const);

export function createAnonymizersGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const { rng } = deps;
    const v = weighted(rng, vpnWeights);
    // VPN fleets are fixed infrastructure, so most sightings are of ranges seen before.
    const range = chance(rng, VPN_STICKY_SHARE) ? pick(rng, stickyRanges(v)) : freshRange(rng, v);
    const net = deps.network(range.start);
    return {
      range_start: range.start,
      range_end: range.end,
      provider: v.tag,
      type: v.type,
      timestamp: seconds(tsMs),
      country_code: net.country,
      asn: net.asn,
    };
  };
}
