import { WINDOW_DAYS, windowDates, type DomainData, type DomainIntelSource } from './domain-source.ts';
import { IpSketch, hashIp } from './ip-sketch.ts';
import { maskIp } from './mask-ip.ts';
import { addAll, bump, topCounts } from './top-counts.ts';

export { maskIp } from './mask-ip.ts';

/** One honeypot hit (honeypot_http, honeypot_https, honeypot_dns) as the feed layer hands it over. */
export interface HoneypotDomainEvent {
  /** ms since the epoch */
  timestampMs: number;
  /** lower-case Punycode FQDN the event targeted, as normalizeDomain returns it */
  domain: string;
  port: number;
  sourceIp: string;
  asn?: number;
  country?: string;
}

export interface DomainAggregatesSize {
  /** domain suffixes known, dormant ones included */
  domains: number;
  /** of which with buckets still inside the window */
  active: number;
  dayBuckets: number;
  hourBlocks: number;
  /** subdomain, port, ASN and country entries over all day buckets */
  counterEntries: number;
  recentEvents: number;
  /** rough heap estimate, for metrics and capacity planning, not for accounting */
  approxBytes: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The 30-day window plus 2 days of tolerance for sensor clocks running ahead. */
const DAY_SLOTS = WINDOW_DAYS + 2;
/** A (now-24h, now] window touches 25 clock hours; one more tolerates an hour of clock skew. */
const HOUR_SLOTS = 26;
export const RECENT_KEEP = 1000;
const TOP_N = 10;

interface DayBucket {
  day: number;
  events: number;
  /** events per UTC hour of this day, for the hour × weekday heatmap */
  hours: Uint32Array;
  subdomains: Map<string, number>;
  ports: Map<number, number>;
  asns: Map<number, number>;
  countries: Map<string, number>;
  ips: IpSketch;
}

/** Minute counts of one clock hour: events_24h needs minute precision only at the window's far edge. */
interface HourBlock {
  hour: number;
  events: number;
  minutes: Uint32Array;
}

interface Recent {
  ts: number;
  ip: string;
  target: string;
  port: number;
}

interface DomainRecord {
  firstMs: number;
  lastMs: number;
  /** slot = day % DAY_SLOTS; a slot whose stamp is not the wanted day is stale and ignored */
  days: Array<DayBucket | undefined> | undefined;
  hours: Array<HourBlock | undefined> | undefined;
  /** ascending by ts from recentHead on; at most RECENT_KEEP live entries */
  recent: Recent[] | undefined;
  recentHead: number;
  /** horizon hour of the last prune, so the sweep does nothing twice within an hour */
  prunedHour: number;
}

/**
 * Honeypot aggregates per domain suffix, fed one event at a time. An event for a.b.example.com is
 * counted under a.b.example.com, b.example.com and example.com, so a lookup reads one record and never
 * scans events. Counts live in UTC-day buckets (30-day figures) and minute counts per clock hour (last
 * 24 h), both in fixed rings stamped with their day or hour, so aging is exact and memory bounded.
 *
 * The horizon is the latest event time or summary now seen. Events whose UTC day is more than 29 days
 * before it only move first_seen/last_seen. Each add prunes a few records ahead of a sweep cursor
 * (more than it can create), so rings of quiet domains are released in O(1) amortised time and only
 * first_seen/last_seen remain. summary(now) is exact for any now from one hour before the horizon on.
 */
export class DomainAggregates implements DomainIntelSource {
  private readonly domains = new Map<string, DomainRecord>();
  private horizonMs = -Infinity;
  private sweepCursor: Iterator<DomainRecord> | undefined;

  add(e: HoneypotDomainEvent): void {
    const ts = e.timestampMs;
    if (!Number.isFinite(ts)) return;
    if (ts > this.horizonMs) this.horizonMs = ts;
    const day = Math.floor(ts / DAY_MS);
    const inWindow = day > Math.floor(this.horizonMs / DAY_MS) - WINDOW_DAYS;
    const inLastDay = ts > this.horizonMs - DAY_MS - HOUR_MS;
    const recent: Recent | undefined = inWindow ? { ts, ip: e.sourceIp, target: e.domain, port: e.port } : undefined;
    const ipHash = inWindow ? hashIp(e.sourceIp) : 0;
    const name = e.domain;
    let created = 0;
    // Every suffix with at least two labels: stop when the rest has no dot left.
    for (let start = 0; name.indexOf('.', start) > 0; start = name.indexOf('.', start) + 1) {
      const suffix = start === 0 ? name : name.slice(start);
      let r = this.domains.get(suffix);
      if (!r) {
        r = { firstMs: ts, lastMs: ts, days: undefined, hours: undefined, recent: undefined, recentHead: 0, prunedHour: -Infinity };
        this.domains.set(suffix, r);
        created++;
      }
      if (ts < r.firstMs) r.firstMs = ts;
      if (ts > r.lastMs) r.lastMs = ts;
      if (!recent) continue;
      countDay(r, day, ts, e, ipHash);
      if (inLastDay) countMinute(r, ts);
      keepRecent(r, recent);
    }
    this.sweep(created + 2);
  }

  summary(domain: string, nowMs: number, recentLimit: number): DomainData {
    if (nowMs > this.horizonMs) this.horizonMs = nowMs;
    const dates = windowDates(nowMs);
    const r = this.domains.get(domain);
    if (r) this.prune(r);
    const firstDay = Math.floor(nowMs / DAY_MS) - (WINDOW_DAYS - 1);
    const perDay = new Array<number>(WINDOW_DAYS).fill(0);
    const subdomains = new Map<string, number>();
    const ports = new Map<number, number>();
    const asns = new Map<number, number>();
    const countries = new Map<string, number>();
    const heatmap = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
    const sketches: IpSketch[] = [];
    for (const b of r?.days ?? []) {
      if (!b || b.day < firstDay || b.day >= firstDay + WINDOW_DAYS) continue;
      perDay[b.day - firstDay] = b.events;
      addAll(subdomains, b.subdomains);
      addAll(ports, b.ports);
      addAll(asns, b.asns);
      addAll(countries, b.countries);
      sketches.push(b.ips);
      // 1970-01-01, day 0, was a Thursday; row 0 is Monday.
      const row = heatmap[(b.day + 3) % 7]!;
      for (let h = 0; h < 24; h++) row[h]! += b.hours[h]!;
    }
    const total = perDay.reduce((a, b) => a + b, 0);
    const lastSeen = r && { first_seen: Math.floor(r.firstMs / 1000), last_seen: Math.floor(r.lastMs / 1000) };
    return {
      domain,
      status: total > 0 ? 'ok' : r ? 'dormant' : 'unknown',
      stats: { events_24h: r ? events24h(r, nowMs) : 0, total_events_30d: total },
      time_series: dates.map((date, i) => ({ date, events: perDay[i]! })),
      top_subdomains: topCounts(subdomains, TOP_N).map(([subdomain, count]) => ({ subdomain, count })),
      top_ports: topCounts(ports, TOP_N).map(([port, count]) => ({ port, count })),
      recent_events: r ? recentEvents(r, firstDay, recentLimit) : [],
      unique_ips: IpSketch.union(sketches),
      ...(lastSeen ? { activity_stats: lastSeen } : {}),
      hour_dow_heatmap: heatmap,
      top_asn: topCounts(asns, TOP_N).map(([asn, count]) => ({ asn, count })),
      geo_distribution: topCounts(countries, TOP_N).map(([country, count]) => ({ country, count })),
    };
  }

  /** Domain suffixes known, dormant ones included. */
  get size(): number {
    return this.domains.size;
  }

  /** Walks every record: O(domains), meant for an occasional metrics scrape. */
  estimateMemory(): DomainAggregatesSize {
    const s: DomainAggregatesSize = { domains: this.domains.size, active: 0, dayBuckets: 0, hourBlocks: 0, counterEntries: 0, recentEvents: 0, approxBytes: 0 };
    let bytes = 0;
    for (const [name, r] of this.domains) {
      bytes += 120 + 2 * name.length;
      if (!r.days) continue;
      s.active++;
      bytes += 2 * 8 * (DAY_SLOTS + HOUR_SLOTS) + 8 * (r.recent?.length ?? 0);
      for (const b of r.days) {
        if (!b) continue;
        s.dayBuckets++;
        const entries = b.subdomains.size + b.ports.size + b.asns.size + b.countries.size;
        s.counterEntries += entries;
        bytes += 4 * 200 + 24 * 4 + 60 * entries + b.ips.bytes;
      }
      for (const h of r.hours ?? []) {
        if (!h) continue;
        s.hourBlocks++;
        bytes += 60 * 4 + 100;
      }
      s.recentEvents += (r.recent?.length ?? 0) - r.recentHead;
    }
    // Recent entries are shared between an event's suffixes: count each one's ~100 bytes once per record, an upper bound.
    s.approxBytes = bytes + s.recentEvents * 100;
    return s;
  }

  /** Releases what has aged out of every record; add() and summary() already do this incrementally. */
  pruneAll(nowMs: number): void {
    if (nowMs > this.horizonMs) this.horizonMs = nowMs;
    for (const r of this.domains.values()) this.prune(r);
  }

  private sweep(steps: number): void {
    for (let i = 0; i < steps; i++) {
      const next = (this.sweepCursor ??= this.domains.values()).next();
      if (next.done) {
        this.sweepCursor = undefined;
        return;
      }
      this.prune(next.value);
    }
  }

  /** Drops day buckets, hour blocks and recent events older than the horizon can need, then the rings themselves. */
  private prune(r: DomainRecord): void {
    const hour = Math.floor(this.horizonMs / HOUR_MS);
    if (!r.days || r.prunedHour === hour) return;
    r.prunedHour = hour;
    const oldestDay = Math.floor(this.horizonMs / DAY_MS) - (DAY_SLOTS - 1);
    let live = 0;
    for (let i = 0; i < DAY_SLOTS; i++) {
      if (r.days[i] && r.days[i]!.day < oldestDay) r.days[i] = undefined;
      if (r.days[i]) live++;
    }
    const hours = r.hours ?? [];
    for (let i = 0; i < hours.length; i++) if (hours[i] && hours[i]!.hour <= hour - HOUR_SLOTS) hours[i] = undefined;
    const recent = r.recent ?? [];
    while (r.recentHead < recent.length && recent[r.recentHead]!.ts < oldestDay * DAY_MS) r.recentHead++;
    if (live === 0) {
      r.days = r.hours = r.recent = undefined;
      r.recentHead = 0;
    } else if (r.recentHead > 0 && r.recentHead * 2 >= recent.length) {
      r.recent = recent.slice(r.recentHead);
      r.recentHead = 0;
    }
  }
}

function countDay(r: DomainRecord, day: number, ts: number, e: HoneypotDomainEvent, ipHash: number): void {
  const days = (r.days ??= new Array<DayBucket | undefined>(DAY_SLOTS).fill(undefined));
  const slot = day % DAY_SLOTS;
  let b = days[slot];
  if (b && b.day > day) return; // older than a bucket that replaced it: outside any window we serve
  if (!b || b.day < day) {
    b = { day, events: 0, hours: new Uint32Array(24), subdomains: new Map(), ports: new Map(), asns: new Map(), countries: new Map(), ips: new IpSketch() };
    days[slot] = b;
  }
  b.events++;
  b.hours[Math.floor((ts - day * DAY_MS) / HOUR_MS)]!++;
  bump(b.subdomains, e.domain);
  bump(b.ports, e.port);
  if (e.asn !== undefined) bump(b.asns, e.asn);
  if (e.country !== undefined) bump(b.countries, e.country);
  b.ips.add(e.sourceIp, ipHash);
}

function countMinute(r: DomainRecord, ts: number): void {
  const hours = (r.hours ??= new Array<HourBlock | undefined>(HOUR_SLOTS).fill(undefined));
  const hour = Math.floor(ts / HOUR_MS);
  const slot = hour % HOUR_SLOTS;
  let h = hours[slot];
  if (h && h.hour > hour) return;
  if (!h || h.hour < hour) hours[slot] = h = { hour, events: 0, minutes: new Uint32Array(60) };
  h.events++;
  h.minutes[Math.floor((ts - hour * HOUR_MS) / MINUTE_MS)]!++;
}

/**
 * Events in the minutes (m-1440, m] where m is now's minute: an event exactly 24 h old is out, one
 * 23 h 59 m old is in; an event up to 59.999 s less than 24 h old may fall out with its minute, and one
 * later than now within now's minute counts.
 */
function events24h(r: DomainRecord, nowMs: number): number {
  const nowMin = Math.floor(nowMs / MINUTE_MS);
  const lowMin = nowMin - 1440; // exclusive
  let n = 0;
  for (const h of r.hours ?? []) {
    if (!h) continue;
    const first = h.hour * 60;
    if (first > lowMin && first + 59 <= nowMin) n += h.events;
    else if (first + 59 > lowMin && first <= nowMin) {
      for (let i = Math.max(0, lowMin + 1 - first); i <= Math.min(59, nowMin - first); i++) n += h.minutes[i]!;
    }
  }
  return n;
}

function keepRecent(r: DomainRecord, e: Recent): void {
  const recent = (r.recent ??= []);
  if (recent.length === r.recentHead || recent[recent.length - 1]!.ts <= e.ts) recent.push(e);
  else {
    // Out of order: after every entry with ts <= e.ts, so equal timestamps keep arrival order.
    let lo = r.recentHead;
    let hi = recent.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (recent[mid]!.ts <= e.ts) lo = mid + 1;
      else hi = mid;
    }
    recent.splice(lo, 0, e);
  }
  if (recent.length - r.recentHead > RECENT_KEEP) r.recentHead++;
  if (r.recentHead >= RECENT_KEEP) {
    r.recent = recent.slice(r.recentHead);
    r.recentHead = 0;
  }
}

function recentEvents(r: DomainRecord, firstDay: number, limit: number): DomainData['recent_events'] {
  const out: DomainData['recent_events'] = [];
  const recent = r.recent ?? [];
  const from = firstDay * DAY_MS;
  const to = (firstDay + WINDOW_DAYS) * DAY_MS; // exclusive: the window's dates, like total_events_30d
  for (let i = recent.length - 1; i >= r.recentHead && out.length < limit; i--) {
    const e = recent[i]!;
    if (e.ts >= to) continue;
    if (e.ts < from) break;
    out.push({ timestamp: Math.floor(e.ts / 1000), source_ip_masked: maskIp(e.ip), target_subdomain: e.target, port: e.port });
  }
  return out;
}
