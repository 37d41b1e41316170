import { DAY_MS } from '../../lib/time.ts';
/** The domain lookup's `data` member. */
export interface DomainData {
  domain: string;
  status: 'ok' | 'dormant' | 'unknown';
  stats: { events_24h: number; total_events_30d: number };
  /** Per UTC day, oldest first, 30 days ending today. */
  time_series: Array<{ date: string; events: number }>;
  top_subdomains: Array<{ subdomain: string; count: number }>;
  top_ports: Array<{ port: number; count: number }>;
  /**
   * Newest first, capped by the request's limit. `simulated` is present (true) only on events umbra's
   * demo simulator made up, so demo traffic never passes for a real attacker's.
   */
  recent_events: Array<{ timestamp: number; source_ip_masked: string; target_subdomain: string; port: number; simulated?: true }>;
  // Extras beyond the contract's members; optional because a source may not keep them. Windows as above.
  /** Distinct source IPs in the 30-day window: exact up to 128 a day, else an estimate (about ±5%). */
  unique_ips?: number;
  /** Unix seconds of the first and last event ever seen, older than the window included. */
  activity_stats?: { first_seen: number; last_seen: number };
  /** [weekday][UTC hour] event counts over the window; weekday 0 is Monday. */
  hour_dow_heatmap?: number[][];
  top_asn?: Array<{ asn: number; count: number }>;
  /** Source countries (ISO 3166-1 alpha-2), most events first. */
  geo_distribution?: Array<{ country: string; count: number }>;
}

/** Honeypot aggregates per domain, maintained as events arrive (the feeds work fills it). */
export interface DomainIntelSource {
  summary(domain: string, nowMs: number, recentLimit: number): DomainData;
}

export const WINDOW_DAYS = 30;

/** The 30 UTC dates ending with today's, oldest first. */
export function windowDates(nowMs: number): string[] {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const out: string[] = [];
  for (let i = WINDOW_DAYS - 1; i >= 0; i--) out.push(new Date(today - i * DAY_MS).toISOString().slice(0, 10));
  return out;
}

/** The source before any honeypot event exists: every domain is unknown, with zero counts. */
export const noEventsDomainSource: DomainIntelSource = {
  summary: (domain, nowMs) => ({
    domain,
    status: 'unknown',
    stats: { events_24h: 0, total_events_30d: 0 },
    time_series: windowDates(nowMs).map((date) => ({ date, events: 0 })),
    top_subdomains: [],
    top_ports: [],
    recent_events: [],
  }),
};
