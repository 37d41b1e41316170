import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DomainAggregates, type HoneypotDomainEvent } from './domain-aggregates.ts';
import { COUNTER_LIMIT } from './top-counts.ts';
import type { DomainData } from './domain-source.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** A Sunday: heatmap row 6. */
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);
const ev = (
  timestampMs: number,
  domain: string,
  port: number,
  sourceIp: string,
  extra: Partial<HoneypotDomainEvent> = {},
): HoneypotDomainEvent => ({
  timestampMs,
  domain,
  port,
  sourceIp,
  ...extra,
});

// Hand-computed fixture; the comments give what each event is for.
const DAY30_BACK = Date.UTC(2026, 9, 23, 23, 59, 59, 999); // 2026-10-23: outside the window
const DAY29_BACK = Date.UTC(2026, 9, 24, 0, 0, 0); // 2026-10-24, a Saturday: the window's first date
const FIXTURE: HoneypotDomainEvent[] = [
  ev(DAY30_BACK, 'c.example.com', 22, '192.0.2.99'),
  ev(DAY29_BACK, 'c.example.com', 22, '192.0.2.5'),
  ev(NOW - 24 * HOUR, 'a.b.example.com', 80, '203.0.113.7'), // exactly 24 h old: not in events_24h
  ev(NOW - 24 * HOUR + MIN, 'b.example.com', 443, '2001:db8::1'), // 23 h 59 m old: in
  ev(NOW - HOUR, 'example.com', 80, '198.51.100.1', { asn: 64500, country: 'DE' }),
  ev(NOW, 'a.b.example.com', 53, '203.0.113.7', { asn: 64500, country: 'DE' }),
  ev(NOW - 2 * HOUR, 'other-example.com', 80, '192.0.2.1'),
  ev(NOW - 2 * HOUR, 'xample.com', 80, '192.0.2.1'),
  ev(NOW - 2 * HOUR, 'www.example.org', 8080, '192.0.2.1', { asn: 64501, country: 'FR' }),
];

function fixture(): DomainAggregates {
  const agg = new DomainAggregates();
  for (const e of FIXTURE) agg.add(e);
  return agg;
}

function assertSeriesConsistent(d: DomainData): void {
  assert.equal(d.time_series.length, 30);
  assert.equal(
    d.time_series.reduce((a, p) => a + p.events, 0),
    d.stats.total_events_30d,
  );
}

describe(DomainAggregates.name, () => {
  it('should count the 24 h window by minute and the 30-day window by UTC date', () => {
    const d = fixture().summary('example.com', NOW, 50);
    assert.equal(d.status, 'ok');
    assert.deepEqual(d.stats, { events_24h: 3, total_events_30d: 5 });
    assert.equal(d.time_series[0]!.date, '2026-10-24');
    assert.equal(d.time_series[29]!.date, '2026-11-22');
    assert.deepEqual(
      d.time_series.filter((p) => p.events > 0),
      [
        { date: '2026-10-24', events: 1 },
        { date: '2026-11-21', events: 2 },
        { date: '2026-11-22', events: 2 },
      ],
    );
    assertSeriesConsistent(d);
  });

  it('should roll subdomains up to every parent with two labels or more, and nothing else', () => {
    const agg = fixture();
    assert.deepEqual(agg.summary('example.com', NOW, 50).top_subdomains, [
      { subdomain: 'a.b.example.com', count: 2 },
      { subdomain: 'b.example.com', count: 1 },
      { subdomain: 'c.example.com', count: 1 },
      { subdomain: 'example.com', count: 1 },
    ]);
    const b = agg.summary('b.example.com', NOW, 50);
    assert.deepEqual(b.stats, { events_24h: 2, total_events_30d: 3 });
    assert.deepEqual(b.top_subdomains, [
      { subdomain: 'a.b.example.com', count: 2 },
      { subdomain: 'b.example.com', count: 1 },
    ]);
    assert.equal(agg.summary('a.b.example.com', NOW, 50).stats.total_events_30d, 2);
    for (const other of ['other-example.com', 'xample.com']) {
      const d = agg.summary(other, NOW, 50);
      assert.deepEqual([d.stats.total_events_30d, d.top_subdomains], [1, [{ subdomain: other, count: 1 }]]);
    }
    assert.equal(agg.summary('example.org', NOW, 50).stats.total_events_30d, 1);
    assert.equal(agg.summary('com', NOW, 50).status, 'unknown', 'one-label suffixes are not kept');
  });

  it('should order ports, ASNs and countries by count, then key', () => {
    const d = fixture().summary('example.com', NOW, 50);
    assert.deepEqual(d.top_ports, [
      { port: 80, count: 2 },
      { port: 22, count: 1 },
      { port: 53, count: 1 },
      { port: 443, count: 1 },
    ]);
    assert.deepEqual(d.top_asn, [{ asn: 64500, count: 2 }]);
    assert.deepEqual(d.geo_distribution, [{ country: 'DE', count: 2 }]);
    assert.equal(d.unique_ips, 4);
  });

  it('should return recent events newest first, masked, within the window and the limit', () => {
    const agg = fixture();
    assert.deepEqual(agg.summary('example.com', NOW, 50).recent_events, [
      { timestamp: sec(NOW), source_ip_masked: '203.0.113.x', target_subdomain: 'a.b.example.com', port: 53 },
      { timestamp: sec(NOW - HOUR), source_ip_masked: '198.51.100.x', target_subdomain: 'example.com', port: 80 },
      { timestamp: sec(NOW - 24 * HOUR + MIN), source_ip_masked: '2001:db8::x', target_subdomain: 'b.example.com', port: 443 },
      { timestamp: sec(NOW - 24 * HOUR), source_ip_masked: '203.0.113.x', target_subdomain: 'a.b.example.com', port: 80 },
      { timestamp: sec(DAY29_BACK), source_ip_masked: '192.0.2.x', target_subdomain: 'c.example.com', port: 22 },
    ]);
    assert.deepEqual(
      agg.summary('example.com', NOW, 2).recent_events.map((e) => e.timestamp),
      [sec(NOW), sec(NOW - HOUR)],
    );
  });

  it('should keep the 1000 newest events per domain, sorted even when they arrive out of order', () => {
    const agg = new DomainAggregates();
    for (let i = 0; i < 1500; i++) agg.add(ev(NOW - 2 * DAY + i * MIN, `h${i % 7}.many.test`, 80, `192.0.2.${i % 200}`));
    agg.add(ev(NOW - 2 * DAY + 1200.5 * MIN, 'late.many.test', 81, '192.0.2.1'));
    const all = agg.summary('many.test', NOW, 1000).recent_events;
    assert.equal(all.length, 1000);
    assert.equal(all[0]!.timestamp, sec(NOW - 2 * DAY + 1499 * MIN));
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.timestamp >= all[i]!.timestamp, `sorted at ${i}`);
    assert.ok(all.some((e) => e.target_subdomain === 'late.many.test'));
    assert.equal(agg.summary('many.test', NOW, 7).recent_events.length, 7);
    assert.equal(agg.summary('many.test', NOW, 1000).stats.total_events_30d, 1501);
  });

  it('should cap top lists at 10, ties by name or by number', () => {
    const agg = new DomainAggregates();
    for (let i = 1; i <= 12; i++) {
      const n = i === 5 ? 3 : 1;
      for (let k = 0; k < n; k++)
        agg.add(ev(NOW - HOUR, `n${String(i).padStart(2, '0')}.cap.test`, i === 5 ? 12 : i === 12 ? 5 : i, '192.0.2.1'));
    }
    const d = agg.summary('cap.test', NOW, 50);
    assert.deepEqual(
      d.top_subdomains.map((s) => `${s.subdomain}=${s.count}`),
      ['n05.cap.test=3', ...['01', '02', '03', '04', '06', '07', '08', '09', '10'].map((n) => `n${n}.cap.test=1`)],
    );
    assert.deepEqual(
      d.top_ports.map((p) => `${p.port}=${p.count}`),
      ['12=3', '1=1', '2=1', '3=1', '4=1', '5=1', '6=1', '7=1', '8=1', '9=1'],
    );
  });

  it('should tell ok, dormant and unknown apart and keep first and last seen', () => {
    const agg = fixture();
    agg.add(ev(NOW - 40 * DAY, 'old.test', 80, '192.0.2.1'));
    const old = agg.summary('old.test', NOW, 50);
    assert.equal(old.status, 'dormant');
    assert.deepEqual(old.activity_stats, { first_seen: sec(NOW - 40 * DAY), last_seen: sec(NOW - 40 * DAY) });
    assert.deepEqual([old.stats, old.recent_events, old.top_ports], [{ events_24h: 0, total_events_30d: 0 }, [], []]);
    assertSeriesConsistent(old);
    const none = agg.summary('never.test', NOW, 50);
    assert.equal(none.status, 'unknown');
    assert.equal(none.activity_stats, undefined);
    assertSeriesConsistent(none);
    assert.deepEqual(agg.summary('example.com', NOW, 50).activity_stats, { first_seen: sec(DAY30_BACK), last_seen: sec(NOW) });
  });

  it('should build the weekday × hour heatmap over the window, Monday first', () => {
    const heat = fixture().summary('example.com', NOW, 50).hour_dow_heatmap!;
    assert.equal(heat.length, 7);
    const cells = heat.flatMap((row, dow) => row.flatMap((n, h) => (n ? [`${dow}/${h}=${n}`] : [])));
    assert.deepEqual(cells, ['5/0=1', '5/12=2', '6/11=1', '6/12=1']);
  });

  it('should age everything out after 31 days but keep the domain dormant', () => {
    const agg = fixture();
    const later = agg.summary('example.com', NOW + 31 * DAY, 50);
    assert.equal(later.status, 'dormant');
    assert.deepEqual(later.stats, { events_24h: 0, total_events_30d: 0 });
    assert.deepEqual([later.top_subdomains, later.top_ports, later.recent_events, later.unique_ips], [[], [], [], 0]);
    assertSeriesConsistent(later);
    assert.equal(later.time_series[29]!.date, '2026-12-23');
    // Buckets are kept 2 days past the window for clocks running ahead, and released after that.
    agg.pruneAll(NOW + 33 * DAY);
    const size = agg.estimateMemory();
    assert.deepEqual([size.domains, size.active, size.dayBuckets, size.recentEvents], [agg.size, 0, 0, 0]);
  });

  it('should drop the 24 h count hour by hour while the day counts stay', () => {
    const agg = fixture();
    const d = agg.summary('example.com', NOW + HOUR - MIN, 50); // only ev(NOW - 24h + 1m) left the 24 h
    assert.deepEqual(d.stats, { events_24h: 2, total_events_30d: 5 });
    assert.equal(agg.summary('example.com', NOW + 24 * HOUR, 50).stats.events_24h, 0);
  });

  it('should ignore events older than the window for counts, but not for first_seen', () => {
    const agg = fixture();
    agg.add(ev(NOW - 30 * DAY, 'example.com', 9999, '192.0.2.1'));
    const d = agg.summary('example.com', NOW, 50);
    assert.equal(d.stats.total_events_30d, 5);
    assert.ok(!d.top_ports.some((p) => p.port === 9999));
    assert.equal(d.activity_stats!.first_seen, sec(NOW - 30 * DAY));
  });

  it('should release the buckets of domains that went quiet as other events arrive', () => {
    const agg = new DomainAggregates();
    for (let i = 0; i < 200; i++) agg.add(ev(NOW, `d${i}.quiet.test`, 80, '192.0.2.1'));
    assert.equal(agg.estimateMemory().active, 201);
    for (let i = 0; i < 200; i++) agg.add(ev(NOW + 33 * DAY + i * 1000, 'busy.test', 80, '192.0.2.1'));
    const size = agg.estimateMemory();
    assert.deepEqual([size.domains, size.active], [202, 1]);
    assert.equal(agg.summary('d7.quiet.test', NOW + 33 * DAY, 50).status, 'dormant');
  });

  it('should count distinct source IPs exactly when few and within a few percent when many', () => {
    const agg = new DomainAggregates();
    for (let i = 0; i < 50; i++) agg.add(ev(NOW - (i % 3) * DAY, 'few.test', 80, `192.0.2.${i % 40}`));
    assert.equal(agg.summary('few.test', NOW, 1).unique_ips, 40);
    for (let i = 0; i < 20_000; i++)
      agg.add(ev(NOW - (i % 10) * DAY, 'many.test', 80, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`));
    const n = agg.summary('many.test', NOW, 1).unique_ips!;
    assert.ok(Math.abs(n - 20_000) < 20_000 * 0.1, `estimate ${n}`);
  });

  it('should stay bounded under a flood of distinct subdomains, ports and IPs and still count every event', () => {
    const agg = new DomainAggregates();
    for (let i = 0; i < 100_000; i++) {
      const ts = NOW - 3 * DAY + Math.floor((i * 3 * DAY) / 100_000);
      agg.add(
        ev(ts, 'flood.test', 1024 + (i % 60_000), `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, { subdomain: `r${i}.flood.test` }),
      );
    }
    for (let i = 0; i < 500; i++) agg.add(ev(NOW - HOUR, 'flood.test', 53, '192.0.2.1', { subdomain: 'heavy.flood.test' }));
    const size = agg.estimateMemory();
    assert.equal(size.domains, 1, 'subdomains get no records of their own');
    // Subdomain and port maps each hold at most COUNTER_LIMIT keys, each with at most 4 days here.
    assert.ok(size.counterEntries <= 2 * COUNTER_LIMIT * 4, `${size.counterEntries} counter entries`);
    const d = agg.summary('flood.test', NOW, 5);
    assert.equal(d.stats.total_events_30d, 100_500);
    assertSeriesConsistent(d);
    assert.deepEqual(d.top_subdomains[0], { subdomain: 'heavy.flood.test', count: 500 });
    assert.deepEqual(d.top_ports[0], { port: 53, count: 500 });
    assert.ok(Math.abs(d.unique_ips! - 100_001) < 100_001 * 0.1, `estimate ${d.unique_ips}`);
    assert.equal(d.recent_events.length, 5);
  });

  it('should allocate little for a name that saw a handful of events', () => {
    const agg = new DomainAggregates();
    for (let i = 0; i < 5; i++) agg.add(ev(NOW - i * DAY, `www.few${i % 2}.test`, 80 + (i % 2), `192.0.2.${i}`));
    const size = agg.estimateMemory();
    assert.equal(size.domains, 4);
    assert.ok(size.approxBytes / size.domains < 5_000, `${size.approxBytes} bytes`);
    assert.deepEqual(agg.summary('few0.test', NOW, 50).stats, { events_24h: 1, total_events_30d: 3 });
  });
});
