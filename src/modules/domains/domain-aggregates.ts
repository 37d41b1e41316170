import { WINDOW_DAYS, windowDates, type DomainData, type DomainIntelSource } from './domain-source.ts';
import { IpSketch, hashIp } from './ip-sketch.ts';
import { maskIp } from './mask-ip.ts';
import { RecentRing, type RecentEvent } from './recent-ring.ts';
import { addAll, bump, topCounts } from './top-counts.ts';

export { maskIp } from './mask-ip.ts';

/** One honeypot hit (honeypot_http, honeypot_https, honeypot_dns) as the feed layer hands it over. */
export interface HoneypotDomainEvent {
  /** ms since the epoch */
  timestampMs: number;
  /** lower-case Punycode FQDN of the honeypot tunnel hit, as normalizeDomain returns it: the event is
   * counted under it and every parent with two labels or more */
  domain: string;
  /**
   * The name the event asked for when it lies below `domain` (a DNS qname such as x7f3k2.example.com).
   * It is counted in top_subdomains and recent_events but gets no lookup record of its own, so a
   * random-subdomain flood cannot create unbounded records. Defaults to `domain`.
   */
  subdomain?: string;
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
  subdomains: Map<string, number>;
  ports: Map<number, number>;
  asns: Map<number, number> | undefined;
  countries: Map<string, number> | undefined;
  ips: IpSketch;
}

/** Minute counts of one clock hour: events_24h needs minute precision only at the window's far edge. */
interface HourBlock {
  hour: number;
  events: number;
  minutes: Uint32Array;
}

interface DomainRecord {
  firstMs: number;
  lastMs: number;
  /** slot = day % DAY_SLOTS; a slot whose stamp is not the wanted day is stale and ignored */
  days: Array<DayBucket | undefined> | undefined;
  /** events per UTC hour of each day slot (slot * 24 + hour), for the hour × weekday heatmap */
  dayHours: Uint32Array | undefined;
  hours: Array<HourBlock | undefined> | undefined;
  recent: RecentRing | undefined;
  /** horizon day of the last prune: buckets age by the day, so pruning more often frees nothing */
  prunedDay: number;
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
  /** the same records in creation order, for the sweep: an index walks it without allocating */
  private readonly records: DomainRecord[] = [];
  private sweepAt = 0;
  private horizonMs = -Infinity;

  add(e: HoneypotDomainEvent): void {
    const ts = e.timestampMs;
    if (!Number.isFinite(ts)) return;
    if (ts > this.horizonMs) this.horizonMs = ts;
    const day = Math.floor(ts / DAY_MS);
    const inWindow = day > Math.floor(this.horizonMs / DAY_MS) - WINDOW_DAYS;
    const inLastDay = ts > this.horizonMs - DAY_MS - HOUR_MS;
    const recent: RecentEvent | undefined = inWindow ? { ts, ip: e.sourceIp, target: e.subdomain ?? e.domain, port: e.port } : undefined;
    const ipHash = inWindow ? hashIp(e.sourceIp) : 0;
    const name = e.domain;
    let created = 0;
    // Every suffix with at least two labels: stop when the rest has no dot left.
    for (let start = 0; name.indexOf('.', start) > 0; start = name.indexOf('.', start) + 1) {
      const suffix = start === 0 ? name : name.slice(start);
      let r = this.domains.get(suffix);
      if (!r) {
        r = { firstMs: ts, lastMs: ts, days: undefined, dayHours: undefined, hours: undefined, recent: undefined, prunedDay: -Infinity };
        this.domains.set(suffix, r);
        this.records.push(r);
        created++;
      }
      if (ts < r.firstMs) r.firstMs = ts;
      if (ts > r.lastMs) r.lastMs = ts;
      if (!recent) continue;
      countDay(r, day, ts, e, ipHash);
      if (inLastDay) countMinute(r, ts);
      (r.recent ??= new RecentRing(RECENT_KEEP)).add(recent);
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
    for (const [slot, b] of (r?.days ?? []).entries()) {
      if (!b || b.day < firstDay || b.day >= firstDay + WINDOW_DAYS) continue;
      perDay[b.day - firstDay] = b.events;
      addAll(subdomains, b.subdomains);
      addAll(ports, b.ports);
      if (b.asns) addAll(asns, b.asns);
      if (b.countries) addAll(countries, b.countries);
      sketches.push(b.ips);
      // 1970-01-01, day 0, was a Thursday; row 0 is Monday.
      const row = heatmap[(b.day + 3) % 7]!;
      for (let h = 0; h < 24; h++) row[h]! += r!.dayHours![slot * 24 + h]!;
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
      bytes += 2 * 8 * (DAY_SLOTS + HOUR_SLOTS) + 4 * 24 * DAY_SLOTS + 8 * (r.recent?.length ?? 0);
      for (const b of r.days) {
        if (!b) continue;
        s.dayBuckets++;
        const entries = b.subdomains.size + b.ports.size + (b.asns?.size ?? 0) + (b.countries?.size ?? 0);
        s.counterEntries += entries;
        bytes += 100 + 2 * 150 + 60 * entries + b.ips.bytes;
      }
      for (const h of r.hours ?? []) {
        if (!h) continue;
        s.hourBlocks++;
        bytes += 60 * 4 + 100;
      }
      s.recentEvents += r.recent?.length ?? 0;
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

  /** Visits more records than the add created, so the cursor laps every record again and again. */
  private sweep(steps: number): void {
    const records = this.records;
    for (let i = 0; i < steps; i++) {
      if (this.sweepAt >= records.length) this.sweepAt = 0;
      this.prune(records[this.sweepAt++]!);
    }
  }

  /** Drops day buckets, hour blocks and recent events older than the horizon can need, then the rings themselves. */
  private prune(r: DomainRecord): void {
    const today = Math.floor(this.horizonMs / DAY_MS);
    if (!r.days || r.prunedDay === today) return;
    r.prunedDay = today;
    const hour = Math.floor(this.horizonMs / HOUR_MS);
    const oldestDay = today - (DAY_SLOTS - 1);
    let live = 0;
    for (let i = 0; i < DAY_SLOTS; i++) {
      if (r.days[i] && r.days[i]!.day < oldestDay) r.days[i] = undefined;
      if (r.days[i]) live++;
    }
    const hours = r.hours ?? [];
    for (let i = 0; i < hours.length; i++) if (hours[i] && hours[i]!.hour <= hour - HOUR_SLOTS) hours[i] = undefined;
    r.recent?.dropBefore(oldestDay * DAY_MS);
    if (live === 0) {
      r.days = r.hours = r.recent = r.dayHours = undefined;
    }
  }
}

function countDay(r: DomainRecord, day: number, ts: number, e: HoneypotDomainEvent, ipHash: number): void {
  const days = (r.days ??= new Array<DayBucket | undefined>(DAY_SLOTS).fill(undefined));
  const dayHours = (r.dayHours ??= new Uint32Array(DAY_SLOTS * 24));
  const slot = day % DAY_SLOTS;
  let b = days[slot];
  if (b && b.day > day) return; // older than a bucket that replaced it: outside any window we serve
  if (!b) {
    days[slot] = b = { day, events: 0, subdomains: new Map(), ports: new Map(), asns: undefined, countries: undefined, ips: new IpSketch() };
  } else if (b.day < day) {
    // Reuse the stale bucket of 32 days ago: fewer allocations, less garbage for the GC.
    b.day = day;
    b.events = 0;
    dayHours.fill(0, slot * 24, slot * 24 + 24);
    b.subdomains.clear();
    b.ports.clear();
    b.asns?.clear();
    b.countries?.clear();
    b.ips = new IpSketch();
  }
  b.events++;
  dayHours[slot * 24 + Math.floor((ts - day * DAY_MS) / HOUR_MS)]!++;
  bump(b.subdomains, e.subdomain ?? e.domain);
  bump(b.ports, e.port);
  if (e.asn !== undefined) bump((b.asns ??= new Map()), e.asn);
  if (e.country !== undefined) bump((b.countries ??= new Map()), e.country);
  b.ips.add(ipHash);
}

function countMinute(r: DomainRecord, ts: number): void {
  const hours = (r.hours ??= new Array<HourBlock | undefined>(HOUR_SLOTS).fill(undefined));
  const hour = Math.floor(ts / HOUR_MS);
  const slot = hour % HOUR_SLOTS;
  let h = hours[slot];
  if (h && h.hour > hour) return;
  if (!h) hours[slot] = h = { hour, events: 0, minutes: new Uint32Array(60) };
  else if (h.hour < hour) {
    h.hour = hour;
    h.events = 0;
    h.minutes.fill(0);
  }
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

function recentEvents(r: DomainRecord, firstDay: number, limit: number): DomainData['recent_events'] {
  const out: DomainData['recent_events'] = [];
  const recent = r.recent;
  const from = firstDay * DAY_MS;
  const to = (firstDay + WINDOW_DAYS) * DAY_MS; // exclusive: the window's dates, like total_events_30d
  for (let i = (recent?.length ?? 0) - 1; i >= 0 && out.length < limit; i--) {
    const e = recent!.at(i);
    if (e.ts >= to) continue;
    if (e.ts < from) break;
    out.push({ timestamp: Math.floor(e.ts / 1000), source_ip_masked: maskIp(e.ip), target_subdomain: e.target, port: e.port });
  }
  return out;
}
