import type { Clock } from '../../../lib/clock.ts';
import type { FeedMessage } from '../../feeds/feed-bus.ts';
import type { FeedDef } from '../../feeds/feed-catalog.ts';
import { NO_INTELLIGENCE, type Evidence, type ExplainingIntelligenceSource, type Intelligence } from '../../lookup/intelligence.ts';
import { parseIp, type ParsedIp } from '../../lookup/ip-address.ts';
import type { IntelList } from '../lists/intel-list.ts';
import { isNetworkKind } from '../lists/list-kinds.ts';
import type { Overlay } from '../overlays/overlay-store.ts';
import { bump, lastSeen, WINDOW_S, type AddressFacts } from './address-facts.ts';
import { composeIntelligence, type RangeRef } from './intel-compose.ts';
import { BEHAVIOR_WEIGHT } from './risk-score.ts';
import { cidrBounds, RangeSets, v6Value, type RangeEntry } from './range-sets.ts';
import { adbSignals, deviceFromJa4t, deviceFromUserAgent, headerValue, httpSignals } from './signals.ts';

export { WINDOW_S };

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
    return composeIntelligence(listed, ranged, f, overlaid, Math.floor(this.clock.now() / 1000)).intelligence;
  }

  explain(ip: ParsedIp, orgId?: string): { intelligence: Intelligence; evidence: Evidence } {
    const overlaid = orgId === undefined ? undefined : this.overlays.get(orgId)?.find(ip);
    return composeIntelligence(this.lists.find(ip), this.anonymizerMatches(ip), this.facts.get(ip.text), overlaid, Math.floor(this.clock.now() / 1000));
  }
}
