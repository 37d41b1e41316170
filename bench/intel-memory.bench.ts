// Memory of the intelligence index per distinct address: JS heap plus array buffers, measured after a
// full collection, for a typical mix of feed records (half torrent peers, proxy and JA4T sightings,
// honeypot HTTP sources). Needs --expose-gc:
//   node --expose-gc --import tsx bench/intel-memory.bench.ts [addresses=1000000] [mix|torrent|proxy|http] [budget MiB]
// With a budget, more addresses than it holds can be fed: it reports how many it keeps.
import { pathToFileURL } from 'node:url';
import { ManualClock } from '../src/lib/clock.ts';
import { FEEDS, type FeedId } from '../src/modules/feeds/feed-catalog.ts';
import { IntelIndex } from '../src/modules/intel/engine/intel-index.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const S0 = T0 / 1000;
const UAS = [
  'python-requests/2.32.3',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 zgrab/0.x',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
];
const PROXY_TYPES = ['RESIDENTIAL_PROXY', 'DATACENTER_PROXY', 'MOBILE_PROXY'];
const PROVIDERS = ['BRIGHTDATA', 'OXYLABS', 'PROXYJET', 'IPROYAL', 'SMARTPROXY', 'NETNUT'];

/** The i-th address: public-looking IPv4, one in 16 IPv6. */
function address(i: number): string {
  if (i % 16 === 15) return `2a02:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::${(i % 251).toString(16)}`;
  const v = (0x0b000000 + i * 2_654_435) >>> 0;
  return `${((v >>> 24) % 200) + 11}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

export type Mix = 'mix' | 'torrent' | 'proxy' | 'http';
const MIX_CASE = { torrent: 0, proxy: 5, http: 9 } as const;

/** The records that make the i-th address known, as a real mix would (docs/intelligence.md's demo counts). */
function recordsFor(i: number, mix: Mix): Array<[FeedId, Record<string, unknown>]> {
  const ip = address(i);
  const t = S0 - (i % 86_400);
  switch (mix === 'mix' ? i % 10 : MIX_CASE[mix]) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return [['torrents', { peers: [{ ip }], timestamp: t }]];
    case 5:
    case 6:
      return [['proxies', { ip, provider: PROVIDERS[i % 6], type: PROXY_TYPES[i % 3], timestamp: t }]];
    case 7:
      return [['ja4t', { ip, ja4t: '65535_2-4-8-1-3_1400_9', provider: PROVIDERS[i % 6], type: 'MOBILE_PROXY', timestamp: t }]];
    default: {
      const ua = UAS[i % UAS.length]!;
      const http = (uri: string, dt: number) => ({
        timestamp: (t + dt) * 1000,
        domain: 'mail.acme-logistics.com',
        source_ip: ip,
        details: { method: 'GET', uri, headers: { 'User-Agent': ua } },
        raw: '',
      });
      return [
        ['honeypot_http', http('/.env', 0)],
        ['honeypot_http', http('/wp-login.php', 5)],
      ];
    }
  }
}

export function measureIntelMemory(
  addresses: number,
  mix: Mix,
  makeIndex: (clock: ManualClock) => IntelIndex,
): Record<string, number | string> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const used = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, buffers: m.arrayBuffers };
  };
  const clock = new ManualClock(T0);
  const before = used();
  const index = makeIndex(clock);
  const stats = (index as Partial<IntelIndex>).stats?.bind(index);
  const started = performance.now();
  for (let i = 0; i < addresses; i += 1000) {
    const byFeed = new Map<FeedId, Record<string, unknown>[]>();
    for (let k = i; k < Math.min(addresses, i + 1000); k++) {
      for (const [feed, record] of recordsFor(k, mix)) {
        let list = byFeed.get(feed);
        if (!list) byFeed.set(feed, (list = []));
        list.push(record);
      }
    }
    for (const [feed, records] of byFeed)
      index.observe(
        FEEDS[feed],
        records.map((record) => ({ record: record as never, line: '' })),
      );
  }
  const ms = performance.now() - started;
  const after = used();
  index.close();
  const heap = after.heap - before.heap;
  const buffers = after.buffers - before.buffers;
  return {
    mix,
    'addresses fed': addresses,
    'addresses held': index.addresses,
    'observe ms': Math.round(ms),
    'JS heap bytes per address': Math.round(heap / index.addresses),
    'array buffer bytes per address': Math.round(buffers / index.addresses),
    'total bytes per address': Math.round((heap + buffers) / index.addresses),
    ...(stats
      ? {
          'index bytes (its own count)': stats().bytes,
          'budget bytes': stats().budget_bytes,
          'addresses evicted': stats().evictions.addresses,
        }
      : {}),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const n = Number(process.argv[2] ?? 1_000_000);
  const mix = (process.argv[3] ?? 'mix') as Mix;
  const budgetMiB = process.argv[4] === undefined ? 4096 : Number(process.argv[4]);
  console.log(measureIntelMemory(n, mix, (clock) => new IntelIndex(clock, { budgetBytes: budgetMiB * 2 ** 20 })));
}
