import { cidrsOf, cidrWeights, type SpaceKind } from './address-space.ts';
import type { ClientName } from './http-clients.ts';
import { addressIn } from './ip-space.ts';
import { proxyExit } from './network-feeds.ts';
import { PROXY_PROVIDERS } from './providers.ts';
import type { SourceClass } from './scanner-paths.ts';
import { chance, pick, stableRng, weighted } from './random.ts';
import type { Rng } from './types.ts';

/**
 * Where honeypot traffic comes from. Abusive hosts and infected devices come back day after day, so each
 * class has a stable pool (the same in every run) that most events draw from; the rest are one-offs.
 */
interface PoolSpec {
  size: number;
  share: number;
  space: ReadonlyArray<readonly [SpaceKind, readonly string[] | undefined, number]>;
}

const ABUSE_HOSTING = ['DIGITALOCEAN', 'AWS', 'VULTR', 'TENCENT', 'CONTABO', 'GCP', 'AZURE', 'OVH', 'LINODE'];

const POOLS: Record<'abuse' | 'iot' | 'payload', PoolSpec> = {
  abuse: {
    size: 60,
    share: 0.7,
    space: [
      ['scanner', ['IP_VOLUME', 'TECHOFF', 'HOST_BALTIC', 'CHINANET_JIANGSU', 'CHINANET_ZHEJIANG'], 4],
      ['hosting', ABUSE_HOSTING, 6],
    ],
  },
  iot: {
    size: 80,
    share: 0.5,
    space: [
      ['residential', ['VNPT', 'CHINANET'], 5],
      ['residential', undefined, 2],
      ['mobile', undefined, 2],
    ],
  },
  // Droppers' download servers: a handful of cheap VPSes at any time.
  payload: {
    size: 8,
    share: 1,
    space: [
      ['hosting', ['DIGITALOCEAN', 'VULTR', 'CONTABO', 'TENCENT'], 1],
      ['scanner', ['TECHOFF', 'HOST_BALTIC'], 1],
    ],
  },
};

function draw(rng: Rng, spec: PoolSpec): string {
  const [kind, owners] = weighted(
    rng,
    spec.space.map((s) => [s, s[2]] as const),
  );
  // v4 only: droppers and IoT malware are overwhelmingly IPv4.
  const cidrs = cidrsOf(kind, owners).filter((c) => !c.includes(':'));
  return addressIn(rng, weighted(rng, cidrWeights(cidrs)));
}

const pools = new Map<string, readonly string[]>();

function pooled(rng: Rng, name: keyof typeof POOLS): string {
  const spec = POOLS[name];
  let pool = pools.get(name);
  if (!pool) {
    const r = stableRng(`source:${name}`);
    pool = Array.from({ length: spec.size }, () => draw(r, spec));
    pools.set(name, pool);
  }
  return chance(rng, spec.share) ? pick(rng, pool) : draw(rng, spec);
}

/** Research scanners announce themselves; their address must match the client they claim to be. */
const RESEARCH_OWNERS: Partial<Record<ClientName, readonly string[]>> = {
  censys: ['CENSYS'],
  expanse: ['PALOALTO_EXPANSE'],
};

const RESIDENTIAL_PROVIDERS = PROXY_PROVIDERS.filter((p) => p.types.includes('RESIDENTIAL_PROXY'));

/** A source address for a request of the class (and client, for self-identifying scanners). */
export function sourceAddress(rng: Rng, cls: SourceClass | 'resolver', client?: ClientName): string {
  switch (cls) {
    case 'research':
      return addressIn(rng, pick(rng, cidrsOf('scanner', (client && RESEARCH_OWNERS[client]) ?? ['SHADOWSERVER', 'DRIFTNET'])));
    case 'abuse':
    case 'iot':
      return pooled(rng, cls);
    case 'proxy': {
      // Credential stuffers rent residential proxies: the same exits the proxies feed reports.
      const exit = proxyExit(rng, pick(rng, RESIDENTIAL_PROVIDERS));
      return exit.ip;
    }
    case 'crawler':
      return addressIn(rng, pick(rng, cidrsOf('crawler')));
    case 'resolver':
      return addressIn(rng, pick(rng, cidrsOf('resolver')));
    case 'human':
      return addressIn(rng, weighted(rng, cidrWeights(cidrsOf(['residential', 'mobile']))));
  }
}

/** A dropper download host; the same few recur across HTTP exploits and ADB sessions. */
export function payloadHost(rng: Rng): string {
  return pooled(rng, 'payload');
}
