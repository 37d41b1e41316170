// In-process adds/s and summaries/s of the domain aggregates: 1M honeypot events over 1,000 domains,
// spread over 30 days in time order with a little jitter, as the feed layer would hand them over.
// Run: node --import tsx bench/domain-aggregates.bench.ts
import { pathToFileURL } from 'node:url';
import { DomainAggregates, type HoneypotDomainEvent } from '../src/modules/domains/domain-aggregates.ts';

const DAY_MS = 86_400_000;
const PORTS = [22, 23, 53, 80, 443, 445, 3389, 8080, 8443, 5900];
const COUNTRIES = ['US', 'CN', 'DE', 'RU', 'BR', 'NL', 'FR', 'IN'];

function makeEvents(n: number, domains: number, startMs: number): HoneypotDomainEvent[] {
  const subs = ['www', 'mail', 'api', 'a.b', 'dev', 'cdn', 'vpn', 'login'];
  const names = Array.from({ length: domains }, (_, d) => `site${d}.example${d % 10}.com`);
  const step = (30 * DAY_MS) / n;
  return Array.from({ length: n }, (_, i) => {
    const d = Math.floor(Math.random() ** 2 * domains); // skewed: a few busy domains, a long tail
    const sub = subs[i % subs.length]!;
    const ip =
      Math.random() < 0.8 ? `198.51.${(i >> 8) & 255}.${i & 255}` : `2001:db8:${(i & 0xffff).toString(16)}::${(i >> 16).toString(16)}`;
    return {
      timestampMs: Math.round(startMs + i * step - Math.random() * 5_000),
      domain: i % 5 === 0 ? names[d]! : `${sub}.${names[d]}`,
      port: PORTS[i % PORTS.length]!,
      sourceIp: ip,
      asn: 64_500 + (i % 50),
      country: COUNTRIES[i % COUNTRIES.length]!,
    };
  });
}

export async function benchDomainAggregates(): Promise<Record<string, number | string>> {
  const start = Date.UTC(2026, 9, 1);
  const events = makeEvents(1_000_000, 1_000, start);
  const nowMs = start + 30 * DAY_MS;
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const agg = new DomainAggregates();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (const e of events) agg.add(e);
  const addS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  // CPU time as well as wall time: on a shared machine the wall figure also counts waiting for a core.
  const addCpuS = (cpu.user + cpu.system) / 1e6;
  global.gc?.();
  const heapAfter = process.memoryUsage().heapUsed;
  const queried = Array.from({ length: 1_000 }, (_, i) => (i % 2 ? `site${i}.example${i % 10}.com` : `example${i % 10}.com`));
  const cpuMsPerSummary: number[] = [];
  const summaries = (limit: number, rounds: number): number => {
    let sink = 0;
    const t = performance.now();
    const c0 = process.cpuUsage();
    for (let r = 0; r < rounds; r++) for (const q of queried) sink += agg.summary(q, nowMs, limit).stats.total_events_30d;
    if (sink < 0) throw new Error('unreachable');
    const c = process.cpuUsage(c0);
    cpuMsPerSummary.push((c.user + c.system) / 1000 / (rounds * queried.length));
    return Math.round((rounds * queried.length) / ((performance.now() - t) / 1000));
  };
  const size = agg.estimateMemory();
  const sizeTable =
    `${size.dayBuckets} day buckets, ${size.hourBlocks} hour blocks, ${size.counterEntries} counter entries, ` +
    `${size.recentEvents} recent`;
  const limit50 = summaries(50, 3);
  const limit1000 = summaries(1000, 1);
  const fewBytes = bytesPerFewEventName(start + 29 * DAY_MS);
  return {
    'adds/s (1M events, 1,000 domains, ~3 suffixes each)': Math.round(events.length / addS),
    'µs per add (wall)': Number(((addS * 1e6) / events.length).toFixed(2)),
    'µs per add (CPU, GC threads included)': Number(((addCpuS * 1e6) / events.length).toFixed(2)),
    'summaries/s, limit 50 (half example<N>.com roll-ups)': limit50,
    'summaries/s, limit 1000': limit1000,
    'ms per summary (CPU), limit 50 / 1000': cpuMsPerSummary.map((ms) => ms.toFixed(3)).join(' / '),
    'domain suffixes / active': `${size.domains} / ${size.active}`,
    contents: sizeTable,
    'estimateMemory MB': Number((size.approxBytes / 1e6).toFixed(1)),
    'heap growth MB (events array excluded; exact with --expose-gc)': Number(((heapAfter - heapBefore) / 1e6).toFixed(1)),
    'heap bytes per name with 5 events (20,000 names; exact with --expose-gc)': fewBytes,
  };
}

/** The long tail: 20,000 single-suffix names with 5 events each over 3 days, as most names look. */
function bytesPerFewEventName(startMs: number): number {
  const names = 20_000;
  const events = Array.from({ length: names * 5 }, (_, i) => ({
    timestampMs: startMs + Math.floor(i / names) * 15 * 3_600_000 + (i % names),
    domain: `tail${i % names}.com`,
    port: PORTS[i % 3]!,
    sourceIp: `203.0.${(i >> 8) & 255}.${i & 255}`,
    asn: 64_500 + (i % 7),
    country: COUNTRIES[i % 3]!,
  }));
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const agg = new DomainAggregates();
  for (const e of events) agg.add(e);
  global.gc?.();
  const bytes = Math.round((process.memoryUsage().heapUsed - before) / names);
  if (agg.size !== names) throw new Error('unreachable');
  return bytes;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchDomainAggregates());
