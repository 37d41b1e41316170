import type { Clock } from '../../../lib/clock.ts';
import type { FeedMessage } from '../../feeds/feed-bus.ts';
import type { FeedDef } from '../../feeds/feed-catalog.ts';
import { NO_INTELLIGENCE, type Evidence, type EvidenceSource, type ExplainingIntelligenceSource, type Intelligence } from '../../lookup/intelligence.ts';
import { parseIp, type ParsedIp } from '../../lookup/ip-address.ts';
import type { IntelList } from '../lists/intel-list.ts';
import type { Overlay } from '../overlays/overlay-store.ts';
import { bump, lastSeen, type AddressFacts } from './address-facts.ts';
import { BEHAVIOR_WEIGHT, riskScore, type RiskSignal } from './risk-score.ts';
import { cidrBounds, RangeSets, v6Value, type RangeEntry } from './range-sets.ts';
import { adbSignals, deviceFromJa4t, deviceFromUserAgent, headerValue, httpSignals } from './signals.ts';

/** service.md: behaviours are those seen in a 90 day window; every feed observation ages out with it. */
export const WINDOW_S = 90 * 86_400;
/** CREDENTIAL_STUFFING: this many login POSTs within LOGIN_WINDOW_S. */
export const LOGIN_THRESHOLD = 5;
export const LOGIN_WINDOW_S = 86_400;
/** ACTIVE_CRAWLER: this many distinct domain+path pairs within CRAWL_WINDOW_S. */
export const CRAWL_THRESHOLD = 20;
export const CRAWL_WINDOW_S = 3_600;
const PRUNE_EVERY_S = 3_600;
/** New anonymizer ranges reach the range table within this time (lookups see them at once anyway). */
const REBUILD_DELAY_MS = 1_000;
const MAX_PENDING = 256;

/** A range with what it says: a provider and category, or a behaviour (list kinds such as TOR_USER). */
interface RangeRef {
  provider: string | null;
  /** A category value, or a behaviour value when `behavior` is set. */
  type: string;
  behavior: boolean;
  origin: { source: 'list'; list: IntelList } | { source: 'feed'; feed: string; first: number; last: number; count: number };
}

const BEHAVIORS = new Set(Object.keys(BEHAVIOR_WEIGHT));

/**
 * The intelligence index: range knowledge (imported lists, anonymizer ranges from the feed) in
 * immutable overlap-keeping tables, and per-address observations from every other feed, aged by the
 * injected clock. An address nobody knows anything about costs two binary searches and one Map miss,
 * and allocates nothing; the arrays and the risk score are built only for addresses with data.
 */
export class IntelIndex implements ExplainingIntelligenceSource {
  private lists = RangeSets.empty<RangeRef>();
  private anonymizers = RangeSets.empty<RangeRef>();
  private readonly anonymizerRefs = new Map<string, RangeEntry<RangeRef>>();
  /** New ranges not yet in the table: lookups scan them, so they are visible at once. */
  private pending: RangeEntry<RangeRef>[] = [];
  private rebuildTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly facts = new Map<string, AddressFacts>();
  /**
   * One bit per IPv4 /24 (and per top-24-bit IPv6 block) holding an address with facts, 2 MiB each:
   * most looked-up addresses are unknown, and a bit test is cheaper than hashing their text for the Map.
   */
  private readonly known4 = new Uint8Array(1 << 21);
  private readonly known6 = new Uint8Array(1 << 21);
  private lastPrune = 0;
  /** Per team: its overlays as a range table; teams without overlays are absent (one Map miss). */
  private overlays = new Map<string, RangeSets<Overlay>>();

  constructor(private readonly clock: Clock) {}

  /** Replaces the list table (called at start and whenever the list store's revision changes). */
  setLists(lists: readonly IntelList[]): void {
    const entries: RangeEntry<RangeRef>[] = [];
    for (const list of lists) {
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

  get addresses(): number {
    return this.facts.size;
  }

  /** The feed observer: every accepted (or replayed) record updates the index at once. */
  observe = (feed: FeedDef, messages: readonly FeedMessage[]): void => {
    for (const { record } of messages) this.observeRecord(feed.id, record);
    const nowS = Math.floor(this.clock.now() / 1000);
    if (nowS - this.lastPrune >= PRUNE_EVERY_S) this.prune(nowS);
  };

  private at(ip: unknown): AddressFacts | undefined {
    if (typeof ip !== 'string' || ip === '') return undefined;
    // Records are canonical (ingestion canonicalises IP members), so the text is the key lookups use.
    let f = this.facts.get(ip);
    if (!f) {
      // Canonical text as the key even for a record written before canonicalisation existed.
      const parsed = parseIp(ip);
      if (!parsed) return undefined;
      f = this.facts.get(parsed.text);
      if (!f) {
        this.facts.set(parsed.text, (f = {}));
        this.mark(parsed);
      }
    }
    return f;
  }

  private mark(ip: ParsedIp): void {
    const block = ip.version === 4 ? ip.v4 >>> 8 : ip.v6[0]! >>> 8;
    (ip.version === 4 ? this.known4 : this.known6)[block >>> 3]! |= 1 << (block & 7);
  }

  private maybeKnown(ip: ParsedIp): boolean {
    const block = ip.version === 4 ? ip.v4 >>> 8 : ip.v6[0]! >>> 8;
    return ((ip.version === 4 ? this.known4 : this.known6)[block >>> 3]! & (1 << (block & 7))) !== 0;
  }

  private observeRecord(feed: string, r: Record<string, unknown>): void {
    const ts = r.timestamp as number;
    switch (feed) {
      case 'proxies':
      case 'ja4t': {
        const f = this.at(r.ip);
        if (!f) return;
        bump((f.providers ??= new Map()), `${r.provider}|${r.type}`, feed, ts);
        const device = feed === 'ja4t' ? deviceFromJa4t(r.ja4t as string) : undefined;
        if (device) this.device(f, device.os, device.version, feed, ts);
        return;
      }
      case 'anonymizers':
        return this.anonymizer(r, ts);
      case 'torrents':
        for (const p of (r.peers as Array<{ ip: string }> | undefined) ?? []) {
          const f = this.at(p.ip);
          if (f) bump((f.behaviors ??= new Map()), 'TORRENTING', feed, ts);
        }
        return;
      case 'honeypot_http':
        return this.http(r, Math.floor(ts / 1000)); // honeypot feeds stamp in ms
      case 'honeypot_adb':
        return this.adb(r, Math.floor(ts / 1000));
      default:
        // honeypot_https and honeypot_dns carry no signal these rules use (docs/intelligence.md).
        return;
    }
  }

  private anonymizer(r: Record<string, unknown>, ts: number): void {
    const key = `${r.range_start}-${r.range_end}|${r.provider}|${r.type}`;
    const known = this.anonymizerRefs.get(key);
    if (known) {
      // A re-announced range only moves its times: no table rebuild.
      const o = known.value.origin as Extract<RangeRef['origin'], { source: 'feed' }>;
      if (ts > o.last) o.last = ts;
      if (ts < o.first) o.first = ts;
      o.count++;
      return;
    }
    const a = parseIp(r.range_start as string);
    const b = parseIp(r.range_end as string);
    if (!a || !b || a.version !== b.version) return;
    const value: RangeRef = { provider: r.provider as string, type: r.type as string, behavior: false, origin: { source: 'feed', feed: 'anonymizers', first: ts, last: ts, count: 1 } };
    const entry: RangeEntry<RangeRef> = a.version === 4 ? { version: 4, start: a.v4, end: (b as typeof a).v4, value } : { version: 6, start: v6Value(a.v6), end: v6Value((b as typeof a).v6), value };
    this.anonymizerRefs.set(key, entry);
    this.pending.push(entry);
    // Folded into the table off the lookup path: soon by a timer, or at once (here, on the ingest
    // path) when the pending list outgrows a quarter of the table, which keeps a replay's rebuilds
    // geometric (amortised O(n log n)) and a lookup's scan short.
    if (this.pending.length > Math.max(MAX_PENDING, this.anonymizerRefs.size / 4)) this.rebuildAnonymizers();
    else this.rebuildTimer ??= setTimeout(() => this.rebuildAnonymizers(), REBUILD_DELAY_MS).unref();
  }

  private rebuildAnonymizers(): void {
    clearTimeout(this.rebuildTimer);
    this.rebuildTimer = undefined;
    this.anonymizers = RangeSets.build([...this.anonymizerRefs.values()]);
    this.pending = [];
  }

  /** Stops the pending rebuild timer (the app closes the index). */
  close(): void {
    clearTimeout(this.rebuildTimer);
    this.rebuildTimer = undefined;
  }

  private http(r: Record<string, unknown>, t: number): void {
    const f = this.at(r.source_ip);
    if (!f) return;
    const d = r.details as { method: string; uri: string; headers: Record<string, string> };
    const raw = typeof r.raw === 'string' ? r.raw : '';
    const bodyAt = raw.indexOf('\r\n\r\n');
    const s = httpSignals(d.method, d.uri, d.headers, bodyAt >= 0 ? raw.slice(bodyAt + 4) : '');
    const behaviors = (f.behaviors ??= new Map());
    const feed = 'honeypot_http';
    if (s.programmatic) bump(behaviors, 'PROGRAMMATIC_TRAFFIC', feed, t);
    if (s.exploit || s.dropper) bump(behaviors, 'MALICIOUS_TRAFFIC', feed, t);
    if (s.dropper) {
      bump(behaviors, 'COMPROMISED_DEVICE', feed, t);
      bump((f.categories ??= new Map()), 'BOTNET', feed, t);
    }
    if (s.login) {
      const w = f.logins && t - f.logins.start < LOGIN_WINDOW_S ? f.logins : (f.logins = { start: t, n: 0 });
      w.n++;
      // The threshold-crossing attempt brings the earlier ones of its window in as observations.
      if (w.n === LOGIN_THRESHOLD) bump(behaviors, 'CREDENTIAL_STUFFING', feed, t, LOGIN_THRESHOLD);
      else if (w.n > LOGIN_THRESHOLD) bump(behaviors, 'CREDENTIAL_STUFFING', feed, t);
    }
    const q = d.uri.indexOf('?');
    const path = `${r.domain}${q >= 0 ? d.uri.slice(0, q) : d.uri}`;
    const w = f.paths && t - f.paths.start < CRAWL_WINDOW_S ? f.paths : (f.paths = { start: t, seen: new Set() });
    if (w.seen.size < CRAWL_THRESHOLD) w.seen.add(path);
    if (w.seen.size >= CRAWL_THRESHOLD) bump(behaviors, 'ACTIVE_CRAWLER', feed, t);
    if (behaviors.size === 0) f.behaviors = undefined;
    const device = deviceFromUserAgent(headerValue(d.headers, 'user-agent'));
    if (device) this.device(f, device.os, device.version, feed, t);
  }

  private adb(r: Record<string, unknown>, t: number): void {
    const f = this.at(r.source_ip);
    if (!f) return;
    const behaviors = (f.behaviors ??= new Map());
    // Any shell command sent to an exposed debug port is unsolicited access.
    bump(behaviors, 'MALICIOUS_TRAFFIC', 'honeypot_adb', t);
    const s = adbSignals(Buffer.from(r.command as string, 'base64').toString('latin1'));
    if (!s.dropper) return;
    bump(behaviors, 'COMPROMISED_DEVICE', 'honeypot_adb', t);
    if (s.family) bump((f.providers ??= new Map()), `${s.family}|BOTNET`, 'honeypot_adb', t);
    else bump((f.categories ??= new Map()), 'BOTNET', 'honeypot_adb', t);
  }

  private device(f: AddressFacts, os: string, version: string, feed: string, t: number): void {
    const key = `${os}|${feed}`;
    const d = (f.devices ??= new Map()).get(key);
    if (!d) f.devices.set(key, { os, feed, version, first: t, last: t, count: 1 });
    else {
      d.count++;
      if (t >= d.last) {
        d.last = t;
        if (version) d.version = version;
      }
      if (t < d.first) d.first = t;
    }
  }

  /** Drops addresses and anonymizer ranges with nothing inside the window, so memory follows it. */
  prune(nowS = Math.floor(this.clock.now() / 1000)): void {
    this.lastPrune = nowS;
    const horizon = nowS - WINDOW_S;
    for (const [ip, f] of this.facts) if (lastSeen(f) < horizon) this.facts.delete(ip);
    this.known4.fill(0);
    this.known6.fill(0);
    for (const ip of this.facts.keys()) this.mark(parseIp(ip)!);
    // Aged ranges are already ignored at lookup; the rebuild only frees them.
    let dropped = 0;
    for (const [key, e] of this.anonymizerRefs) {
      if ((e.value.origin as { last: number }).last < horizon) {
        this.anonymizerRefs.delete(key);
        dropped++;
      }
    }
    if (dropped > 0) this.rebuildAnonymizers();
  }

  /** Anonymizer ranges holding the address: the table's set, plus any pending new range. */
  private anonymizerMatches(ip: ParsedIp): readonly RangeRef[] | undefined {
    const inTable = this.anonymizers.find(ip);
    if (this.pending.length === 0) return inTable;
    let out: RangeRef[] | undefined;
    const v6 = ip.version === 6 ? v6Value(ip.v6) : 0n;
    for (const e of this.pending) {
      const hit = e.version === 4 ? ip.version === 4 && e.start <= ip.v4 && ip.v4 <= e.end : ip.version === 6 && e.start <= v6 && v6 <= e.end;
      if (hit) (out ??= [...(inTable ?? [])]).push(e.value);
    }
    return out ?? inTable;
  }

  intelligence(ip: ParsedIp, orgId?: string): Intelligence {
    const listed = this.lists.find(ip);
    const ranged = this.anonymizerMatches(ip);
    const f = this.maybeKnown(ip) ? this.facts.get(ip.text) : undefined;
    const overlaid = orgId === undefined ? undefined : this.overlays.get(orgId)?.find(ip);
    if (!listed && !ranged && !f && !overlaid) return NO_INTELLIGENCE;
    return this.compose(listed, ranged, f, overlaid).intelligence;
  }

  explain(ip: ParsedIp, orgId?: string): { intelligence: Intelligence; evidence: Evidence } {
    const overlaid = orgId === undefined ? undefined : this.overlays.get(orgId)?.find(ip);
    return this.compose(this.lists.find(ip), this.anonymizerMatches(ip), this.facts.get(ip.text), overlaid);
  }

  private compose(listed: readonly RangeRef[] | undefined, ranged: readonly RangeRef[] | undefined, f: AddressFacts | undefined, overlaid?: readonly Overlay[]) {
    const nowS = Math.floor(this.clock.now() / 1000);
    const horizon = nowS - WINDOW_S;
    const providers = new Map<string, { provider: string; type: string; last: number; sources: EvidenceSource[] }>();
    const categories = new Map<string, { last: number | undefined; sources: EvidenceSource[] }>();
    const behaviors = new Map<string, { last: number | undefined; count: number; sources: EvidenceSource[] }>();
    const addCategory = (c: string, last: number | undefined, src: EvidenceSource) => {
      const e = categories.get(c);
      if (!e) categories.set(c, { last, sources: [src] });
      else {
        e.sources.push(src);
        // List membership (undefined) is current: it wins over any feed time for recency.
        if (e.last !== undefined && (last === undefined || last > e.last)) e.last = last;
      }
    };
    const addProvider = (provider: string, type: string, last: number, src: EvidenceSource, current: boolean) => {
      const key = `${provider}|${type}`;
      const e = providers.get(key);
      if (!e) providers.set(key, { provider, type, last, sources: [src] });
      else {
        e.sources.push(src);
        if (last > e.last) e.last = last;
      }
      addCategory(type, current ? undefined : last, src);
    };
    const addBehavior = (b: string, last: number | undefined, count: number, src: EvidenceSource) => {
      const e = behaviors.get(b);
      if (!e) behaviors.set(b, { last, count, sources: [src] });
      else {
        e.sources.push(src);
        e.count += count;
        if (e.last !== undefined && (last === undefined || last > e.last)) e.last = last;
      }
    };
    for (const ref of [...(listed ?? []), ...(ranged ?? [])]) {
      const o = ref.origin;
      let src: EvidenceSource;
      let last: number;
      if (o.source === 'list') {
        const l = o.list;
        src = { source: 'list', kind: l.kind, provider: l.provider, version: l.version, format: l.format, imported_at: l.imported_at, first_seen: l.imported_at, last_seen: l.imported_at, count: 1 };
        last = l.imported_at;
      } else {
        if (o.last < horizon) continue;
        src = { source: 'feed', feed: o.feed, first_seen: o.first, last_seen: o.last, count: o.count };
        last = o.last;
      }
      if (ref.behavior) addBehavior(ref.type, o.source === 'list' ? undefined : last, 1, src);
      else addProvider(ref.provider!, ref.type, last, src, o.source === 'list');
    }
    const devices: Evidence['devices'] = [];
    if (f) {
      for (const [key, bySource] of f.providers ?? []) {
        const [provider, type] = key.split('|') as [string, string];
        for (const [feed, o] of bySource) if (o.last >= horizon) addProvider(provider, type, o.last, { source: 'feed', feed, first_seen: o.first, last_seen: o.last, count: o.count }, false);
      }
      for (const [c, bySource] of f.categories ?? []) {
        for (const [feed, o] of bySource) if (o.last >= horizon) addCategory(c, o.last, { source: 'feed', feed, first_seen: o.first, last_seen: o.last, count: o.count });
      }
      for (const [b, bySource] of f.behaviors ?? []) {
        for (const [feed, o] of bySource) if (o.last >= horizon) addBehavior(b, o.last, o.count, { source: 'feed', feed, first_seen: o.first, last_seen: o.last, count: o.count });
      }
      for (const d of f.devices?.values() ?? []) {
        if (d.last < horizon) continue;
        const src: EvidenceSource = { source: 'feed', feed: d.feed, first_seen: d.first, last_seen: d.last, count: d.count };
        const same = devices.find((x) => x.os === d.os);
        if (same) {
          same.sources.push(src);
          if (!same.version) same.version = d.version;
        } else devices.push({ os: d.os, version: d.version, sources: [src] });
      }
    }
    // The team's overlays last: deny adds (as current as a list), allow removes whatever said so.
    for (const o of [...(overlaid ?? [])].sort((a, b) => a.id - b.id)) {
      const src: EvidenceSource = { source: 'overlay', action: o.action, cidr: o.cidr, created_at: o.created_at };
      if (o.action === 'deny') {
        if (o.provider) addProvider(o.provider, o.category, o.created_at, src, true);
        else addCategory(o.category, undefined, src);
        continue;
      }
      for (const [key, p] of providers) if (p.type === o.category && (!o.provider || p.provider === o.provider)) providers.delete(key);
      const stillAttributed = [...providers.values()].some((p) => p.type === o.category);
      if (!stillAttributed) categories.delete(o.category);
    }
    const sig = (m: Map<string, { last: number | undefined; count?: number }>): RiskSignal[] => [...m].map(([value, e]) => ({ value, last_seen: e.last, count: e.count ?? 0 }));
    const risk = riskScore(sig(categories), sig(behaviors), nowS);
    const lastOf = (sources: EvidenceSource[]) => Math.max(...sources.map((s) => ('last_seen' in s ? s.last_seen : s.created_at)));
    const byName = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
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
}
