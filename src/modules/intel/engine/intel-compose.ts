import { NO_INTELLIGENCE, type Evidence, type EvidenceSource, type Intelligence } from '../../lookup/intelligence.ts';
import type { IntelList } from '../lists/intel-list.ts';
import { freezeWithJson } from '../../../lib/record-json.ts';
import { listAge } from '../lists/list-aging.ts';
import type { Overlay } from '../overlays/overlay-store.ts';
import { BEHAVIOR, CATEGORY, DEVICE, feedOf, PROVIDER, REQUESTS, WINDOW_S, type AddressObs } from './address-facts.ts';
import { priorScore, riskScore, type RiskContext, type RiskSignal } from './risk-score.ts';
import { SCANNER_BEHAVIORS, UA_DEVICE_FEED } from './signals.ts';

/** A range with what it says: a provider and category, or a behaviour (list kinds such as TOR_USER). */
export interface RangeRef {
  provider: string | null;
  /** A category value, or a behaviour value when `behavior` is set. */
  type: string;
  behavior: boolean;
  origin: { source: 'list'; list: IntelList } | { source: 'feed'; feed: string; first: number; last: number; count: number };
}

/** A feed source; `simulated: true` when the demo simulator made its records up. */
const feedSource = (stored: string, first: number, last: number, count: number): EvidenceSource => {
  const { feed, simulated } = feedOf(stored);
  return { source: 'feed', feed, first_seen: first, last_seen: last, count, ...(simulated ? { simulated: true as const } : {}) };
};
const obsSource = (o: AddressObs): EvidenceSource => feedSource(o.feed, o.first, o.last, o.count);

/** Shared frozen answers for addresses with no data, one per prior score, so such lookups allocate nothing. */
const PRIOR_ONLY = new Map<number, Intelligence>();

/** The intelligence of an address nothing is known about: its network's prior alone. */
export function priorOnly(networkType: string | undefined): Intelligence {
  const score = priorScore(networkType);
  if (score === 0) return NO_INTELLIGENCE;
  let intel = PRIOR_ONLY.get(score);
  if (!intel) PRIOR_ONLY.set(score, (intel = freezeWithJson({ ...NO_INTELLIGENCE, risk_score: score }) as Intelligence));
  return intel;
}

/**
 * The requests behind the behaviours: per feed, its request counter where it keeps one (honeypot_http,
 * where one request can show several behaviours), else its most frequent behaviour (an ADB command is
 * always MALICIOUS_TRAFFIC, a torrent sighting always TORRENTING: one each per record).
 */
function requestsOf(obs: readonly AddressObs[], horizon: number): number {
  const counted = new Map<string, number>();
  const best = new Map<string, number>();
  for (const o of obs) {
    if (o.last < horizon) continue;
    if (o.kind === REQUESTS) counted.set(o.feed, (counted.get(o.feed) ?? 0) + o.count);
    else if (o.kind === BEHAVIOR) best.set(o.feed, Math.max(best.get(o.feed) ?? 0, o.count));
  }
  let n = 0;
  for (const [feed, c] of best) if (!counted.has(feed)) n += c;
  for (const c of counted.values()) n += c;
  return n;
}

/**
 * Builds one address's intelligence and evidence from what matched: list and anonymizer ranges, the
 * address's own observations (only those inside the 90-day window count), and the caller's team
 * overlays, applied last. Runs for addresses with data (intelligence) or any address (explain);
 * `context` carries what the risk score needs of the network (its type, carrier-NAT space).
 */
export function composeIntelligence(
  listed: readonly RangeRef[] | undefined,
  ranged: readonly RangeRef[] | undefined,
  obs: readonly AddressObs[] | undefined,
  overlaid: readonly Overlay[] | undefined,
  nowS: number,
  context: RiskContext = {},
): { intelligence: Intelligence; evidence: Evidence } {
  const horizon = nowS - WINDOW_S;
  const providers = new Map<string, { provider: string; type: string; last: number; sources: EvidenceSource[] }>();
  // last: the latest feed observation; strength: the strongest list (by its age) or overlay (1). Risk takes the larger factor.
  type Signal = { last: number | undefined; strength: number | undefined; count: number; sources: EvidenceSource[] };
  const categories = new Map<string, Signal>();
  const behaviors = new Map<string, Signal>();
  const maxOf = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
  const addSignal = (
    m: Map<string, Signal>,
    k: string,
    last: number | undefined,
    strength: number | undefined,
    count: number,
    src: EvidenceSource,
  ) => {
    const e = m.get(k);
    if (!e) m.set(k, { last, strength, count, sources: [src] });
    else {
      e.sources.push(src);
      e.count += count;
      e.last = maxOf(e.last, last);
      e.strength = maxOf(e.strength, strength);
    }
  };
  const addCategory = (c: string, last: number | undefined, strength: number | undefined, src: EvidenceSource) =>
    addSignal(categories, c, last, strength, 0, src);
  /** `strength` for lists and overlays (their membership's own age factor), undefined for feed observations at `last`. */
  const addProvider = (provider: string, type: string, last: number, src: EvidenceSource, strength: number | undefined) => {
    const key = `${provider}|${type}`;
    const e = providers.get(key);
    if (!e) providers.set(key, { provider, type, last, sources: [src] });
    else {
      e.sources.push(src);
      if (last > e.last) e.last = last;
    }
    addCategory(type, strength === undefined ? last : undefined, strength, src);
  };
  const addBehavior = (b: string, last: number | undefined, strength: number | undefined, count: number, src: EvidenceSource) =>
    addSignal(behaviors, b, last, strength, count, src);
  for (const ref of [...(listed ?? []), ...(ranged ?? [])]) {
    const o = ref.origin;
    let src: EvidenceSource;
    let last: number;
    let strength: number | undefined;
    if (o.source === 'list') {
      const l = o.list;
      // A list is its publisher's snapshot: it ages from the publisher's time, and an expired one says nothing.
      const age = listAge(l, nowS);
      if (age.state === 'expired') continue;
      src = {
        source: 'list',
        kind: l.kind,
        provider: l.provider,
        version: l.version,
        format: l.format,
        imported_at: l.imported_at,
        published_at: l.published_at,
        published_from: l.published_from,
        state: age.state,
        strength: Math.round(age.strength * 100) / 100,
        first_seen: l.published_at,
        last_seen: l.published_at,
        count: 1,
      };
      last = l.published_at;
      strength = age.strength;
    } else {
      if (o.last < horizon) continue;
      src = feedSource(o.feed, o.first, o.last, o.count);
      last = o.last;
    }
    if (ref.behavior) addBehavior(ref.type, strength === undefined ? last : undefined, strength, 1, src);
    else addProvider(ref.provider!, ref.type, last, src, strength);
  }
  const devices: Evidence['devices'] = [];
  if (obs) {
    // Kind by kind, each in the order first observed: providers feed categories, so they come first.
    for (const o of obs) {
      if (o.kind !== PROVIDER || o.last < horizon) continue;
      const [provider, type] = o.key.split('|') as [string, string];
      addProvider(provider, type, o.last, obsSource(o), undefined);
    }
    for (const o of obs) if (o.kind === CATEGORY && o.last >= horizon) addCategory(o.key, o.last, undefined, obsSource(o));
    for (const o of obs) if (o.kind === BEHAVIOR && o.last >= horizon) addBehavior(o.key, o.last, undefined, o.count, obsSource(o));
    // A browser User-Agent names a device only for an address that does not behave like a scanner:
    // scanners send fake ones (signals.ts, docs/intelligence.md "Devices").
    const scanner = [...behaviors.keys()].some((b) => SCANNER_BEHAVIORS.has(b));
    for (const o of obs) {
      if (o.kind !== DEVICE || o.last < horizon || (scanner && feedOf(o.feed).feed === UA_DEVICE_FEED)) continue;
      const src = obsSource(o);
      const same = devices.find((x) => x.os === o.key);
      if (same) {
        same.sources.push(src);
        if (!same.version) same.version = o.version;
      } else devices.push({ os: o.key, version: o.version, sources: [src] });
    }
  }
  // The team's overlays last: deny adds (as current as a list), allow removes whatever said so.
  for (const o of [...(overlaid ?? [])].sort((a, b) => a.id - b.id)) {
    const src: EvidenceSource = { source: 'overlay', action: o.action, cidr: o.cidr, created_at: o.created_at };
    if (o.action === 'deny') {
      if (o.provider) addProvider(o.provider, o.category, o.created_at, src, 1);
      else addCategory(o.category, undefined, 1, src);
      continue;
    }
    for (const [key, p] of providers) if (p.type === o.category && (!o.provider || p.provider === o.provider)) providers.delete(key);
    const stillAttributed = [...providers.values()].some((p) => p.type === o.category);
    if (!stillAttributed) categories.delete(o.category);
  }
  const sig = (m: Map<string, Signal>): RiskSignal[] =>
    [...m].map(([value, e]) => ({
      value,
      last_seen: e.last,
      ...(e.strength === undefined ? {} : { strength: e.strength }),
    }));
  const risk = riskScore(sig(categories), sig(behaviors), obs ? requestsOf(obs, horizon) : 0, nowS, context);
  const lastOf = (sources: EvidenceSource[]) => Math.max(...sources.map((s) => ('last_seen' in s ? s.last_seen : s.created_at)));
  const byName =
    <T>(key: (x: T) => string) =>
    (a: T, b: T) =>
      key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
  const provList = [...providers.values()].sort((a, b) => b.last - a.last || byName<typeof a>((x) => x.provider + x.type)(a, b));
  const deviceList = devices.sort(byName((x) => x.os));
  const intelligence: Intelligence = {
    risk_score: risk.score,
    behavior: [...behaviors.keys()].sort(),
    categories: [...categories.keys()].sort(),
    devices: deviceList.map((d) => ({ os: d.os, version: d.version, last_seen: lastOf(d.sources) })),
    providers: provList.map((p) => ({ provider: p.provider, type: p.type, last_seen: p.last })),
  };
  const evidence: Evidence = {
    categories: intelligence.categories.map((category) => ({ category, sources: categories.get(category)!.sources })),
    providers: provList.map((p) => ({ provider: p.provider, type: p.type, sources: p.sources })),
    behavior: intelligence.behavior.map((behavior) => ({ behavior, sources: behaviors.get(behavior)!.sources })),
    devices: deviceList,
    risk,
  };
  return { intelligence, evidence };
}
