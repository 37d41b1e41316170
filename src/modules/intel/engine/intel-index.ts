import type { Clock } from '../../../lib/clock.ts';
import type { FeedMessage } from '../../feeds/feed-bus.ts';
import { FEED_IDS, type FeedDef } from '../../feeds/feed-catalog.ts';
import { NO_INTELLIGENCE, type Evidence, type ExplainingIntelligenceSource, type Intelligence } from '../../lookup/intelligence.ts';
import { parseIp, type ParsedIp } from '../../../lib/ip-address.ts';
import type { IntelList } from '../lists/intel-list.ts';
import { isNetworkKind } from '../lists/list-kinds.ts';
import { canonicalProvider } from '../../providers/provider-registry.ts';
import type { Overlay } from '../overlays/overlay-store.ts';
import { BEHAVIOR, CATEGORY, PROVIDER, simulatedFeed, WINDOW_S } from './address-facts.ts';
import { AddressStore } from './address-store.ts';
import { AnonymizerRanges, RANGE_BYTES } from './anonymizer-ranges.ts';
import { composeIntelligence, priorOnly, type RangeRef } from './intel-compose.ts';
import { BEHAVIOR_WEIGHT, type RiskContext } from './risk-score.ts';
import { cidrBounds, RangeSets, type RangeEntry } from './range-sets.ts';
import { adbSignals, deviceFromJa4, deviceFromJa4t, deviceFromRequest, headerValue, httpSignals } from './signals.ts';
import type { NetworkType } from '../../lookup/ip-dataset.ts';

export { WINDOW_S };

/** CREDENTIAL_STUFFING: this many login POSTs within LOGIN_WINDOW_S. */
export const LOGIN_THRESHOLD = 5;
export const LOGIN_WINDOW_S = 86_400;
/** ACTIVE_CRAWLER: this many distinct domain+path pairs within CRAWL_WINDOW_S. */
export const CRAWL_THRESHOLD = 20;
export const CRAWL_WINDOW_S = 3_600;
const PRUNE_EVERY_S = 3_600;
/** Addresses the hourly sweep visits per observe call (a fraction of a millisecond), so it never holds the event loop. */
const PRUNE_STEP = 4_096;
/** The share of the budget anonymizer ranges may take. */
const RANGE_SHARE = 1 / 16;
/** Default budget when none is given (tests, benches); the server passes UMBRA_INTEL_MEMORY_MB. */
export const DEFAULT_BUDGET_BYTES = 256 * 2 ** 20;

const BEHAVIORS = new Set(Object.keys(BEHAVIOR_WEIGHT));
/** Every feed, and its twin for simulated records (address-facts.ts): the eight feeds and their twins fill AddressStore's 16 feed ids. */
const STORED_FEEDS = [...FEED_IDS, ...FEED_IDS.map(simulatedFeed)];
const SIMULATED_FEED: Record<string, string> = Object.fromEntries(FEED_IDS.map((f) => [f, simulatedFeed(f)]));

export interface IntelIndexOptions {
  /** Bytes the index may hold for feed observations: addresses and anonymizer ranges. */
  budgetBytes?: number;
  /** Called once, when the index first has to evict to stay inside its budget. */
  onBudgetReached?: () => void;
  /** Hash seed of the address table (tests). */
  seed?: number;
}

export interface IntelIndexStats {
  addresses: number;
  anonymizer_ranges: number;
  bytes: number;
  budget_bytes: number;
  /** Addresses and ranges dropped to stay inside the budget since start. */
  evictions: { addresses: number; ranges: number };
}

/**
 * The intelligence index: range knowledge (imported lists, anonymizer ranges from the feed) in
 * immutable overlap-keeping tables, and per-address observations from every other feed in a compact
 * store inside a byte budget (address-store.ts), aged by the injected clock. An address nobody knows
 * anything about costs two binary searches and one hash-table probe, and allocates nothing; the
 * arrays and the risk score are built only for addresses with data.
 */
export class IntelIndex implements ExplainingIntelligenceSource {
  private lists = RangeSets.empty<RangeRef>();
  /** Anonymizer ranges from the feed, within their share of the budget. */
  private readonly ranges: AnonymizerRanges;
  /** Per-address observations, in budgetBytes minus the ranges' share. */
  private readonly store: AddressStore;
  private readonly budget: number;
  private lastPrune = 0;
  /** The clock in Unix seconds, read once per observe call. */
  private nowS = 0;
  /** Per team: its overlays as a range table; teams without overlays are absent (one Map miss). */
  private overlays = new Map<string, RangeSets<Overlay>>();

  constructor(
    private readonly clock: Clock,
    options: IntelIndexOptions = {},
  ) {
    const budget = (this.budget = options.budgetBytes ?? DEFAULT_BUDGET_BYTES);
    const rangeBytes = Math.floor(budget * RANGE_SHARE);
    let reached = false;
    const onBudgetReached = () => {
      if (reached) return;
      reached = true;
      options.onBudgetReached?.();
    };
    this.store = new AddressStore({ budgetBytes: budget - rangeBytes, feeds: STORED_FEEDS, onBudgetReached, seed: options.seed });
    this.ranges = new AnonymizerRanges(Math.max(1, Math.floor(rangeBytes / RANGE_BYTES)), onBudgetReached);
  }

  /** Replaces the list table (called at start and whenever the list store's revision changes). */
  setLists(lists: readonly IntelList[]): void {
    const entries: RangeEntry<RangeRef>[] = [];
    for (const list of lists) {
      // Network-type lists (DATACENTER, ...) classify networks: they set network.type (lookup-data.ts), not categories.
      if (isNetworkKind(list.kind)) continue;
      const behavior = BEHAVIORS.has(list.kind);
      const ref: RangeRef = { provider: behavior ? null : list.provider, type: list.kind, behavior, origin: { source: 'list', list } };
      for (const cidr of list.cidrs) {
        const b = cidrBounds(cidr, parseIp);
        if (b) entries.push({ ...b, value: ref } as RangeEntry<RangeRef>);
      }
    }
    this.lists = RangeSets.build(entries);
  }

  /** Replaces every team's overlays (called at start and whenever the overlay store's revision changes). */
  setOverlays(overlays: readonly Overlay[]): void {
    const byOrg = new Map<string, RangeEntry<Overlay>[]>();
    for (const o of overlays) {
      const b = cidrBounds(o.cidr, parseIp);
      if (!b) continue;
      let list = byOrg.get(o.org_id);
      if (!list) byOrg.set(o.org_id, (list = []));
      list.push({ ...b, value: o } as RangeEntry<Overlay>);
    }
    this.overlays = new Map([...byOrg].map(([org, entries]) => [org, RangeSets.build(entries)]));
  }

  /** Addresses with feed observations held. */
  get addresses(): number {
    return this.store.addresses;
  }

  stats(): IntelIndexStats {
    return {
      addresses: this.store.addresses,
      anonymizer_ranges: this.ranges.size,
      bytes: this.store.bytes + this.ranges.size * RANGE_BYTES,
      budget_bytes: this.budget,
      evictions: { addresses: this.store.evictions, ranges: this.ranges.evictions },
    };
  }

  /** Every address with feed observations, as canonical text (benchmarks and tests). */
  addressTexts(): string[] {
    return this.store.addressTexts();
  }

  /** The feed observer: every accepted (or replayed) record updates the index at once. */
  observe = (feed: FeedDef, messages: readonly FeedMessage[]): void => {
    const nowS = (this.nowS = Math.floor(this.clock.now() / 1000));
    for (const { record } of messages) this.observeRecord(feed.id, record);
    this.store.settle(nowS);
    if (nowS - this.lastPrune >= PRUNE_EVERY_S) {
      this.lastPrune = nowS;
      this.store.startPrune(nowS - WINDOW_S);
      this.ranges.prune(nowS - WINDOW_S);
    }
    // The address sweep goes on a step per call rather than all at once.
    this.store.pruneStep(PRUNE_STEP);
  };

  /** The address's entry (made if new), or 0 for a missing or invalid address or time. */
  private at(ip: unknown, t: number): number {
    if (typeof ip !== 'string' || ip === '' || !(t >= 0 && t <= 0xffffffff)) return 0;
    // Records are canonical (ingestion canonicalises IP members); parsing also takes older records.
    const parsed = parseIp(ip);
    return parsed ? this.store.entry(parsed, this.nowS) : 0;
  }

  private observeRecord(id: string, r: Record<string, unknown>): void {
    const ts = r.timestamp as number;
    // Where the observations are kept: the feed, or its twin when the demo simulator made the record up.
    const feed = r.simulated === true ? SIMULATED_FEED[id]! : id;
    switch (id) {
      case 'proxies':
      case 'ja4t': {
        const e = this.at(r.ip, ts);
        if (!e) return;
        // Ingestion stores canonical tags; records logged before it did are mapped here (provider-registry.ts).
        this.store.bump(e, PROVIDER, `${canonicalProvider(r.provider as string).provider}|${r.type}`, feed, ts);
        const device = id === 'ja4t' ? deviceFromJa4t(r.ja4t as string) : undefined;
        if (device) this.store.device(e, device.os, device.version, feed, ts);
        return;
      }
      case 'anonymizers': {
        const provider = canonicalProvider(r.provider as string).provider;
        return this.ranges.observe(provider === r.provider ? r : { ...r, provider }, ts, feed);
      }
      case 'torrents':
        for (const p of (r.peers as Array<{ ip: string }> | undefined) ?? []) {
          const e = this.at(p.ip, ts);
          if (e) this.store.bump(e, BEHAVIOR, 'TORRENTING', feed, ts);
        }
        return;
      case 'honeypot_http':
        return this.http(r, Math.floor(ts / 1000), feed); // honeypot feeds stamp in ms
      case 'honeypot_adb':
        return this.adb(r, Math.floor(ts / 1000), feed);
      case 'honeypot_https':
        return this.https(r, Math.floor(ts / 1000), feed);
      default:
        // honeypot_dns carries no signal these rules use (docs/intelligence.md).
        return;
    }
  }

  /** Folds new anonymizer ranges into their table now (benchmarks; a timer does it within a second). */
  rebuildAnonymizers(): void {
    this.ranges.rebuild();
  }

  /** Stops the pending rebuild timer (the app closes the index). */
  close(): void {
    this.ranges.close();
  }

  private http(r: Record<string, unknown>, t: number, feed: string): void {
    const e = this.at(r.source_ip, t);
    if (!e) return;
    const d = r.details as { method: string; uri: string; headers: Record<string, string> };
    const raw = typeof r.raw === 'string' ? r.raw : '';
    const bodyAt = raw.indexOf('\r\n\r\n');
    const s = httpSignals(d.method, d.uri, d.headers, bodyAt >= 0 ? raw.slice(bodyAt + 4) : '');
    const store = this.store;
    // The volume of the risk score counts requests: this one once, whatever it shows below.
    store.request(e, feed, t);
    if (s.programmatic) store.bump(e, BEHAVIOR, 'PROGRAMMATIC_TRAFFIC', feed, t);
    if (s.exploit || s.dropper) store.bump(e, BEHAVIOR, 'MALICIOUS_TRAFFIC', feed, t);
    if (s.dropper) {
      store.bump(e, BEHAVIOR, 'COMPROMISED_DEVICE', feed, t);
      store.bump(e, CATEGORY, 'BOTNET', feed, t);
    }
    if (s.login) {
      const n = store.login(e, t, LOGIN_WINDOW_S);
      // The threshold-crossing attempt brings the earlier ones of its window in as observations.
      if (n === LOGIN_THRESHOLD) store.bump(e, BEHAVIOR, 'CREDENTIAL_STUFFING', feed, t, LOGIN_THRESHOLD);
      else if (n > LOGIN_THRESHOLD) store.bump(e, BEHAVIOR, 'CREDENTIAL_STUFFING', feed, t);
    }
    // Distinct domain + path (query ignored), held as 32-bit hashes: 20 of them collide with odds of
    // about 1 in 10^8, and the window costs a few words instead of a set of strings.
    const q = d.uri.indexOf('?');
    const paths = store.crawl(e, t, pathHash(r.domain as string, d.uri, q >= 0 ? q : d.uri.length), CRAWL_WINDOW_S, CRAWL_THRESHOLD);
    if (paths >= CRAWL_THRESHOLD) store.bump(e, BEHAVIOR, 'ACTIVE_CRAWLER', feed, t);
    const device = deviceFromRequest(s, headerValue(d.headers, 'user-agent'));
    if (device) store.device(e, device.os, device.version, feed, t);
  }

  /** A ClientHello names a device only when its JA4 is a TLS stack of one OS; nothing else is taken from it. */
  private https(r: Record<string, unknown>, t: number, feed: string): void {
    const ja4 = (r.details as { ja4?: unknown } | null)?.ja4;
    const device = typeof ja4 === 'string' ? deviceFromJa4(ja4) : undefined;
    if (!device) return;
    const e = this.at(r.source_ip, t);
    if (e) this.store.device(e, device.os, device.version, feed, t);
  }

  private adb(r: Record<string, unknown>, t: number, feed: string): void {
    const e = this.at(r.source_ip, t);
    if (!e) return;
    const store = this.store;
    // Any shell command sent to an exposed debug port is unsolicited access.
    store.bump(e, BEHAVIOR, 'MALICIOUS_TRAFFIC', feed, t);
    const s = adbSignals(Buffer.from(r.command as string, 'base64').toString('latin1'));
    if (!s.dropper) return;
    store.bump(e, BEHAVIOR, 'COMPROMISED_DEVICE', feed, t);
    if (s.family) store.bump(e, PROVIDER, `${s.family}|BOTNET`, feed, t);
    else store.bump(e, CATEGORY, 'BOTNET', feed, t);
  }

  /** Drops addresses and anonymizer ranges with nothing inside the window, so memory follows it (all at once). */
  prune(nowS = Math.floor(this.clock.now() / 1000)): void {
    this.lastPrune = nowS;
    this.store.startPrune(nowS - WINDOW_S);
    while (this.store.pruneStep(Infinity));
    this.ranges.prune(nowS - WINDOW_S);
  }

  /** `networkType`: the address's network.type (the risk score's prior); without it no prior applies. */
  intelligence(ip: ParsedIp, orgId?: string, networkType?: NetworkType): Intelligence {
    const listed = this.lists.find(ip);
    const ranged = this.ranges.matches(ip);
    const e = this.store.find(ip);
    const overlaid = orgId === undefined ? undefined : this.overlays.get(orgId)?.find(ip);
    if (!listed && !ranged && e === 0 && !overlaid) return networkType === undefined ? NO_INTELLIGENCE : priorOnly(networkType);
    const obs = e === 0 ? undefined : this.store.observations(e);
    return composeIntelligence(listed, ranged, obs, overlaid, Math.floor(this.clock.now() / 1000), riskContext(ip, networkType))
      .intelligence;
  }

  explain(ip: ParsedIp, orgId?: string, networkType?: NetworkType): { intelligence: Intelligence; evidence: Evidence } {
    const overlaid = orgId === undefined ? undefined : this.overlays.get(orgId)?.find(ip);
    const e = this.store.find(ip);
    const obs = e === 0 ? undefined : this.store.observations(e);
    const nowS = Math.floor(this.clock.now() / 1000);
    return composeIntelligence(this.lists.find(ip), this.ranges.matches(ip), obs, overlaid, nowS, riskContext(ip, networkType));
  }
}

/** 100.64.0.0/10 (RFC 6598): carrier-grade NAT, shared by every subscriber behind it. */
const CGNAT_PREFIX = 0x64400000 >>> 22;

function riskContext(ip: ParsedIp, networkType: NetworkType | undefined): RiskContext {
  return { network_type: networkType, cgnat: ip.version === 4 && ip.v4 >>> 22 === CGNAT_PREFIX };
}

/** FNV-1a over the domain and the URI up to `end` (the query's '?'), then murmur3's finaliser: no string is built. */
function pathHash(domain: string, uri: string, end: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < domain.length; i++) h = Math.imul(h ^ domain.charCodeAt(i), 0x01000193);
  for (let i = 0; i < end; i++) h = Math.imul(h ^ uri.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
