import { MINUTE_MS, HOUR_MS, DAY_MS } from '../../lib/time.ts';
import { WINDOW_DAYS, windowDates, type DomainData, type DomainIntelSource } from './domain-source.ts';
import { bumpSeries, countOf, newSeries, trimSeries, unitOf, type DaySeries } from './day-series.ts';
import { IpDays, hashIp } from './ip-sketch.ts';
import { maskIp } from './mask-ip.ts';
import { MINUTE_SPAN, MinuteCounts } from './minute-counts.ts';
import { RecentRing, type RecentEvent } from './recent-ring.ts';
import { bumpKeyDay, keyDayEntries, topInWindow, trimKeyDays, type KeyDays } from './top-counts.ts';

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
  /** The record was made up by umbra's demo simulator. */
  simulated?: true;
}

export interface DomainAggregatesSize {
  /** domain suffixes known, dormant ones included */
  domains: number;
  /** of which with counts still inside the day ring */
  active: number;
  /** (domain, day) counts held */
  dayBuckets: number;
  /** (domain, clock hour) spans with minute counts for events_24h */
  hourBlocks: number;
  /** (key, day) counts over the subdomain, port, ASN and country maps of all domains */
  counterEntries: number;
  recentEvents: number;
  /** rough heap estimate, for metrics and capacity planning, not for accounting */
  approxBytes: number;
}

/** The 30-day window plus 2 days of tolerance for sensor clocks running ahead. */
const DAY_SLOTS = WINDOW_DAYS + 2;
export const RECENT_KEEP = 1000;
/**
 * Walking every key of a busy domain each day cost a tenth of all add() time; every few days is
 * enough, as summaries filter by day anyway and a key trims itself when it sees a new day; a key gone
 * quiet keeps its aged counts at most KEY_TRIM_DAYS - 1 days longer.
 */
const KEY_TRIM_DAYS = 4;
const TOP_N = 10;

/**
 * Everything but the first five fields is allocated on the record's first event inside the window,
 * one structure at a time, and released together once the day ring holds nothing for it.
 */
interface DomainRecord {
  firstMs: number;
  lastMs: number;
  /** the next suffix up (example.com for b.example.com): an add follows links instead of slicing and hashing names */
  parent: DomainRecord | undefined;
  /** horizon day of the last prune: counts age by the day, so pruning more often frees nothing */
  prunedDay: number;
  /** horizon day of the last walk over the key maps (see KEY_TRIM_DAYS) */
  keysTrimmedDay: number;
  /** events per UTC day in the ring; undefined while the record holds nothing in it */
  days: DaySeries | undefined;
  /** events per (day * 24 + UTC hour), for the hour × weekday heatmap */
  hours: DaySeries | undefined;
  /** only once an event falls in the last day */
  minutes: MinuteCounts | undefined;
  subdomains: KeyDays<string> | undefined;
  ports: KeyDays<number> | undefined;
  asns: KeyDays<number> | undefined;
  countries: KeyDays<string> | undefined;
  ips: IpDays | undefined;
  recent: RecentRing | undefined;
}

const newRecord = (ts: number): DomainRecord => ({
  firstMs: ts,
  lastMs: ts,
  parent: undefined,
  prunedDay: -Infinity,
  keysTrimmedDay: -Infinity,
  days: undefined,
  hours: undefined,
  minutes: undefined,
  subdomains: undefined,
  ports: undefined,
  asns: undefined,
  countries: undefined,
  ips: undefined,
  recent: undefined,
});

/**
 * Honeypot aggregates per domain suffix, fed one event at a time. An event for a.b.example.com is
 * counted under a.b.example.com, b.example.com and example.com, so a lookup reads one record and never
 * scans events. Each record stores every key (subdomain, port, ASN, country) once, with its counts per
 * UTC day over a 32-day ring (see DaySeries), day and day × hour totals the same way, and minute counts
 * for the last 25 h (MinuteCounts); every count carries its day or minute, so aging is exact, and key
 * caps keep memory bounded under floods.
 *
 * The horizon is the latest event time or summary now seen. Events whose UTC day is more than 29 days
 * before it only move first_seen/last_seen. Each add prunes a few records ahead of a sweep cursor
 * (more than it can create), so the counts of quiet domains are released in O(1) amortised time and
 * only first_seen/last_seen remain. summary(now) is exact for any now from one hour before the horizon
 * on.
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
    const before = this.records.length;
    let r = this.domains.get(e.domain) ?? this.create(e.domain, ts);
    const today = Math.floor(this.horizonMs / DAY_MS);
    const day = Math.floor(ts / DAY_MS);
    if (day <= today - WINDOW_DAYS) {
      for (; r; r = r.parent) seen(r, ts);
    } else {
      const oldest = today - (DAY_SLOTS - 1);
      const hour = day * 24 + Math.floor((ts - day * DAY_MS) / HOUR_MS);
      const inLastDay = ts > this.horizonMs - DAY_MS - HOUR_MS;
      const minute = Math.floor(ts / MINUTE_MS);
      const oldestMinute = Math.floor(this.horizonMs / MINUTE_MS) - MINUTE_SPAN + 1;
      const target = e.subdomain ?? e.domain;
      const recent: RecentEvent = e.simulated
        ? { ts, ip: e.sourceIp, target, port: e.port, simulated: true }
        : { ts, ip: e.sourceIp, target, port: e.port };
      const ipHash = hashIp(e.sourceIp);
      for (; r; r = r.parent) {
        seen(r, ts);
        if (r.days) bumpSeries(r.days, day, oldest);
        else r.days = newSeries(day);
        if (r.hours) bumpSeries(r.hours, hour, oldest * 24);
        else r.hours = newSeries(hour);
        bumpKeyDay((r.subdomains ??= new Map()), target, day, oldest);
        bumpKeyDay((r.ports ??= new Map()), e.port, day, oldest);
        if (e.asn !== undefined) bumpKeyDay((r.asns ??= new Map()), e.asn, day, oldest);
        if (e.country !== undefined) bumpKeyDay((r.countries ??= new Map()), e.country, day, oldest);
        (r.ips ??= new IpDays(DAY_SLOTS)).add(ipHash, day);
        if (inLastDay) (r.minutes ??= new MinuteCounts()).add(minute, oldestMinute);
        (r.recent ??= new RecentRing(RECENT_KEEP)).add(recent);
      }
    }
    this.sweep(this.records.length - before + 2);
  }

  summary(domain: string, nowMs: number, recentLimit: number): DomainData {
    if (nowMs > this.horizonMs) this.horizonMs = nowMs;
    const dates = windowDates(nowMs);
    const r = this.domains.get(domain);
    if (r) this.prune(r);
    const firstDay = Math.floor(nowMs / DAY_MS) - (WINDOW_DAYS - 1);
    const endDay = firstDay + WINDOW_DAYS; // exclusive
    const perDay = new Array<number>(WINDOW_DAYS).fill(0);
    let total = 0;
    for (const v of r?.days ?? []) {
      const d = unitOf(v);
      if (d < firstDay || d >= endDay) continue;
      perDay[d - firstDay] = countOf(v);
      total += countOf(v);
    }
    const heatmap = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
    for (const v of r?.hours ?? []) {
      const u = unitOf(v);
      const d = Math.floor(u / 24);
      // 1970-01-01, day 0, was a Thursday; row 0 is Monday.
      if (d >= firstDay && d < endDay) heatmap[(d + 3) % 7]![u - d * 24]! += countOf(v);
    }
    const nowMin = Math.floor(nowMs / MINUTE_MS);
    const lastSeen = r && { first_seen: Math.floor(r.firstMs / 1000), last_seen: Math.floor(r.lastMs / 1000) };
    return {
      domain,
      status: total > 0 ? 'ok' : r ? 'dormant' : 'unknown',
      // Minutes (m-1440, m] where m is now's minute: an event exactly 24 h old is out, one 23 h 59 m old
      // is in; one up to 59.999 s less than 24 h old may fall out with its minute.
      stats: { events_24h: r?.minutes?.sum(nowMin - 1440, nowMin) ?? 0, total_events_30d: total },
      time_series: dates.map((date, i) => ({ date, events: perDay[i]! })),
      top_subdomains: topInWindow(r?.subdomains, firstDay, endDay, TOP_N).map(([subdomain, count]) => ({ subdomain, count })),
      top_ports: topInWindow(r?.ports, firstDay, endDay, TOP_N).map(([port, count]) => ({ port, count })),
      recent_events: r ? recentEvents(r, firstDay, recentLimit) : [],
      unique_ips: r?.ips?.count(firstDay, endDay) ?? 0,
      ...(lastSeen ? { activity_stats: lastSeen } : {}),
      hour_dow_heatmap: heatmap,
      top_asn: topInWindow(r?.asns, firstDay, endDay, TOP_N).map(([asn, count]) => ({ asn, count })),
      geo_distribution: topInWindow(r?.countries, firstDay, endDay, TOP_N).map(([country, count]) => ({ country, count })),
    };
  }

  /** Domain suffixes known, dormant ones included. */
  get size(): number {
    return this.domains.size;
  }

  /** Walks every record: O(domains + keys), meant for an occasional metrics scrape. */
  estimateMemory(): DomainAggregatesSize {
    const s: DomainAggregatesSize = {
      domains: this.domains.size,
      active: 0,
      dayBuckets: 0,
      hourBlocks: 0,
      counterEntries: 0,
      recentEvents: 0,
      approxBytes: 0,
    };
    let bytes = 0;
    for (const [name, r] of this.domains) {
      // record object + the domains map entry + the name (+ the records array slot)
      bytes += 180 + 2 * name.length;
      if (!r.days) continue;
      s.active++;
      s.dayBuckets += r.days.length;
      s.hourBlocks += r.minutes?.hours ?? 0;
      s.recentEvents += r.recent?.length ?? 0;
      for (const m of [r.subdomains, r.ports, r.asns, r.countries]) {
        if (!m) continue;
        const entries = keyDayEntries(m);
        s.counterEntries += entries;
        // map header, ~40 bytes a map slot, a small array per key, 8 bytes a (key, day) count
        bytes += 100 + 90 * m.size + 8 * entries;
      }
      bytes += 2 * 50 + 8 * (r.days.length + (r.hours?.length ?? 0)) + (r.ips?.bytes ?? 0) + (r.minutes?.bytes ?? 0);
      bytes += 50 + 8 * (r.recent?.length ?? 0);
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

  /** Records for name and each parent suffix with two labels or more, linked upwards; returns name's record. */
  private create(name: string, ts: number): DomainRecord | undefined {
    let first: DomainRecord | undefined;
    let child: DomainRecord | undefined;
    // Every suffix with at least two labels: stop when the rest has no dot left.
    for (let start = 0; name.indexOf('.', start) > 0; start = name.indexOf('.', start) + 1) {
      const suffix = start === 0 ? name : name.slice(start);
      const existing = this.domains.get(suffix);
      const r = existing ?? newRecord(ts);
      if (child) child.parent = r;
      else first = r;
      if (existing) break; // its parents are linked already
      this.domains.set(suffix, r);
      this.records.push(r);
      child = r;
    }
    return first;
  }

  /** Visits more records than the add created, so the cursor laps every record again and again. */
  private sweep(steps: number): void {
    const records = this.records;
    for (let i = 0; i < steps && records.length > 0; i++) {
      if (this.sweepAt >= records.length) this.sweepAt = 0;
      this.prune(records[this.sweepAt++]!);
    }
  }

  /** Drops counts and recent events older than the ring, then the structures once the days are empty. */
  private prune(r: DomainRecord): void {
    const today = Math.floor(this.horizonMs / DAY_MS);
    if (!r.days || r.prunedDay === today) return;
    r.prunedDay = today;
    const oldest = today - (DAY_SLOTS - 1);
    trimSeries(r.days, oldest);
    if (r.days.length === 0) {
      r.days = r.hours = r.minutes = r.subdomains = r.ports = r.asns = r.countries = r.ips = r.recent = undefined;
      return;
    }
    trimSeries(r.hours!, oldest * 24);
    if (today - r.keysTrimmedDay >= KEY_TRIM_DAYS) {
      r.keysTrimmedDay = today;
      if (r.subdomains) trimKeyDays(r.subdomains, oldest);
      if (r.ports) trimKeyDays(r.ports, oldest);
      if (r.asns) trimKeyDays(r.asns, oldest);
      if (r.countries) trimKeyDays(r.countries, oldest);
    }
    r.ips?.trim(oldest);
    if (r.minutes?.trim(Math.floor(this.horizonMs / MINUTE_MS) - MINUTE_SPAN + 1)) r.minutes = undefined;
    r.recent?.dropBefore(oldest * DAY_MS);
  }
}

function seen(r: DomainRecord, ts: number): void {
  if (ts < r.firstMs) r.firstMs = ts;
  if (ts > r.lastMs) r.lastMs = ts;
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
    const event = { timestamp: Math.floor(e.ts / 1000), source_ip_masked: maskIp(e.ip), target_subdomain: e.target, port: e.port };
    out.push(e.simulated ? { ...event, simulated: true } : event);
  }
  return out;
}
