// umbra's full lookup (network + location + intelligence) against the `maxmind` npm reader on an MMDB
// written from the same ranges (mmdb-writer.ts): same addresses as text, same process, one core, the
// rounds interleaved so machine load hits both alike. Then the resident memory of the loaded dataset,
// measured in fresh child processes so nothing else in this one counts.
import { LookupData } from '../src/modules/lookup/lookup-data.ts';
import { networkTypeOverride } from '../src/modules/intel/lists/network-type-override.ts';
import type { IntelList } from '../src/modules/intel/lists/intel-list.ts';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { open, Reader, type Response } from 'maxmind';
import { systemClock } from '../src/lib/clock.ts';
import { mulberry32 } from '../src/lib/prng.ts';
import type { CreditLedger } from '../src/modules/credits/credit-ledger.ts';
import { FEEDS } from '../src/modules/feeds/feed-catalog.ts';
import { IntelIndex } from '../src/modules/intel/engine/intel-index.ts';
import { loadDataset, type LoadedIpDataset } from '../src/modules/dataset/dataset-reader.ts';
import { mmdbAnswer } from '../test/helpers/mmdb/mmdb-writer.ts';
import { words } from '../test/helpers/random-ranges.ts';
import { ensureRealDataset, ensureRealMmdb } from '../test/helpers/test-dataset.ts';
import { formatV4, formatV6, parseIp, type ParsedIp } from '../src/lib/ip-address.ts';
import { LookupService } from '../src/modules/lookup/lookup-service.ts';

const ORG = 'org_bench';
const V4_ADDRESSES = 1_000_000;
const V6_ADDRESSES = 250_000;

function publicV4(random: () => number): number {
  for (;;) {
    const v = Math.floor(random() * 2 ** 32);
    const a = v >>> 24;
    if (a === 0 || a === 10 || a === 127 || a >= 224 || (a === 192 && ((v >>> 16) & 255) === 168)) continue;
    return v;
  }
}

/**
 * Random addresses in announced IPv6 ranges: a random range with a network record, then a random
 * address in it. Uniformly random 2000::/3 addresses are almost all unannounced, most of them in one
 * placeholder location range, which would measure a few records over and over.
 */
function announcedV6(ds: LoadedIpDataset, random: () => number, n: number): string[] {
  const ranges = ds.ranges();
  const { starts, pairs } = ranges.v6;
  const at = (s: number) =>
    (BigInt(starts[4 * s]!) << 96n) |
    (BigInt(starts[4 * s + 1]!) << 64n) |
    (BigInt(starts[4 * s + 2]!) << 32n) |
    BigInt(starts[4 * s + 3]!);
  const announced: number[] = [];
  for (let s = 0; s + 1 < pairs.length; s++) if (ranges.network(pairs[s]!)) announced.push(s);
  return Array.from({ length: n }, () => {
    const s = announced[Math.floor(random() * announced.length)]!;
    const first = at(s);
    const size = at(s + 1) - first;
    // Number(size) rounds for ranges past 2^53: clamp into the range.
    let x = first + BigInt(Math.floor(random() * Number(size)));
    if (x >= first + size) x = first + size - 1n;
    return formatV6(words(x));
  });
}

/**
 * An index shaped like a busy server's: imported lists (Tor exits, cloud ranges over about 2% of IPv4,
 * proxy and VPN ranges over about 0.3%, search-engine ranges), anonymizer ranges and per-address facts
 * from the feeds, one team's overlays. The cloud list is a network-type list: it reaches lookups as
 * network.type (through LookupData), not as a category.
 */
function loadedIntelIndex(random: () => number): { index: IntelIndex; lists: IntelList[] } {
  const index = new IntelIndex(systemClock);
  const now = Math.floor(Date.now() / 1000);
  const list = (kind: string, provider: string, cidrs: string[]) => ({
    kind,
    provider,
    version: '0',
    imported_at: now,
    published_at: now,
    published_from: 'import' as const,
    format: 'cidr-lines',
    cidrs,
  });
  const v4 = () => formatV4(publicV4(random));
  const block = (bits: number) => `${formatV4((publicV4(random) >>> (32 - bits)) * 2 ** (32 - bits))}/${bits}`;
  const lists = [
    list(
      'TOR_NODE',
      'TOR',
      Array.from({ length: 2_000 }, () => `${v4()}/32`),
    ),
    list(
      'DATACENTER',
      'AWS',
      Array.from({ length: 5_000 }, () => block(18)),
    ),
    list(
      'DATACENTER_PROXY',
      'PROXYJET',
      Array.from({ length: 2_000 }, () => block(20)),
    ),
    list(
      'SEARCH_ENGINE',
      'GOOGLEBOT',
      Array.from({ length: 300 }, () => block(27)),
    ),
    list(
      'COMMERCIAL_VPN',
      'NORDVPN',
      Array.from({ length: 3_000 }, () => block(22)),
    ),
  ];
  index.setLists(lists);
  index.setOverlays(
    Array.from({ length: 200 }, (_, id) => ({
      id,
      org_id: ORG,
      cidr: block(24),
      category: 'TOR_NODE',
      provider: null,
      action: 'deny' as const,
      created_at: now,
    })),
  );
  const feed = (id: keyof typeof FEEDS, records: Record<string, unknown>[]) =>
    index.observe(
      FEEDS[id],
      records.map((record) => ({ record: record as never, line: '' })),
    );
  feed(
    'proxies',
    Array.from({ length: 50_000 }, () => ({
      ip: v4(),
      provider: 'BRIGHTDATA',
      type: 'RESIDENTIAL_PROXY',
      timestamp: now - Math.floor(random() * 86_400),
      country_code: 'US',
      asn: 7922,
    })),
  );
  feed(
    'anonymizers',
    Array.from({ length: 2_000 }, () => {
      const start = publicV4(random) & ~63;
      return {
        range_start: formatV4(start),
        range_end: formatV4(start + 63),
        provider: 'MULLVAD',
        type: 'COMMERCIAL_VPN',
        timestamp: now,
        country_code: 'SE',
        asn: 39351,
      };
    }),
  );
  feed(
    'honeypot_http',
    Array.from({ length: 20_000 }, () => ({
      timestamp: Date.now(),
      domain: 'mail.acme-logistics.com',
      details: {
        method: 'GET',
        uri: '/.env',
        version: 'HTTP/1.1',
        headers: { host: 'mail.acme-logistics.com', 'user-agent': 'zgrab/0.x' },
      },
      raw: '',
      source_ip: v4(),
    })),
  );
  (index as unknown as { rebuildAnonymizers(): void }).rebuildAnonymizers(); // as the timer would
  return { index, lists };
}

/** Lookups/s of `look` over `items`, one round; the sink keeps the work from being optimised away. */
function round<T>(items: T[], look: (item: T) => number): number {
  let sink = 0;
  const t = performance.now();
  for (let i = 0; i < items.length; i++) sink += look(items[i]!);
  const rate = items.length / ((performance.now() - t) / 1000);
  if (sink < 0) throw new Error('unreachable');
  return rate;
}

/** Best of `rounds` for each contender, their rounds interleaved. */
function race<T>(items: T[], rounds: number, contenders: Record<string, (item: T) => number>): Record<string, number> {
  const best: Record<string, number> = {};
  for (let r = 0; r < rounds; r++)
    for (const [name, look] of Object.entries(contenders)) best[name] = Math.max(best[name] ?? 0, round(items, look));
  return Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v)]));
}

/** MMDB and dataset answer alike for every address of the sample, or the race compares different things. */
function assertSameAnswers(ds: LoadedIpDataset, reader: Reader<Response>, texts: string[]): void {
  for (const text of texts) {
    const ip = parseIp(text)!;
    const want = { network: ds.network(ip), location: ds.location(ip) };
    const got = mmdbAnswer(reader, text);
    if (!isDeepStrictEqual(got, want))
      throw new Error(`MMDB and dataset differ at ${text}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  }
}

interface MemoryFigures {
  rssMB: number;
  rssGrowthMB: number;
  heapGrowthMB: number;
  externalGrowthMB: number;
  allRecordsRssMB?: number;
  allRecordsHeapGrowthMB?: number;
}

/** Runs this file in a fresh process that loads one thing and reports its memory (see childMemory). */
function measureInChild(kind: 'dataset' | 'mmdb', file: string): MemoryFigures {
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--memory', kind, file], {
    encoding: 'utf8',
    cwd: join(import.meta.dirname, '..'),
  });
  if (r.status !== 0) throw new Error(`memory child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as MemoryFigures;
}

/** What the memory child loaded: module-level, so no collection can free it before the last figure is taken. */
const held: unknown[] = [];

function childMemory(kind: 'dataset' | 'mmdb', file: string): MemoryFigures {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const mb = (n: number) => Math.round(n / 2 ** 20);
  gc();
  const before = process.memoryUsage();
  if (kind === 'dataset') held.push(loadDataset(file));
  else held.push(new Reader<Response>(readFileSync(file)));
  gc();
  const after = process.memoryUsage();
  const out: MemoryFigures = {
    rssMB: mb(after.rss),
    rssGrowthMB: mb(after.rss - before.rss),
    heapGrowthMB: mb(after.heapUsed - before.heapUsed),
    externalGrowthMB: mb(after.external - before.external),
  };
  if (kind === 'dataset') {
    // Records become objects on first use: after long serving, every one has been.
    const ranges = (held[0] as LoadedIpDataset).ranges();
    for (let p = 0; p < ranges.pairCount; p++) {
      ranges.network(p);
      ranges.location(p);
    }
    held.push(ranges);
    gc();
    const all = process.memoryUsage();
    out.allRecordsRssMB = mb(all.rss);
    out.allRecordsHeapGrowthMB = mb(all.heapUsed - before.heapUsed);
  }
  return out;
}

export async function benchIntelMmdb(): Promise<Record<string, number | string>> {
  const datasetFile = await ensureRealDataset();
  const mmdb = await ensureRealMmdb();
  const ds = loadDataset(datasetFile);
  const random = mulberry32(20261123);
  const { index: intel, lists } = loadedIntelIndex(random);
  const data = new LookupData(ds);
  data.setLists(lists, networkTypeOverride(lists, Math.floor(Date.now() / 1000)));
  // resolve() is the lookup without billing, which an MMDB reader has no counterpart for.
  const lookup = new LookupService(data, intel, {} as CreditLedger, systemClock);
  const plain = new Reader<Response>(readFileSync(mmdb.file));
  // maxmind.open() as applications call it: the same reader with an LRU of 10,000 decoded records.
  const cached = await open<Response>(mmdb.file);

  const v4 = Array.from({ length: V4_ADDRESSES }, () => formatV4(publicV4(random)));
  const v6 = announcedV6(ds, random, V6_ADDRESSES);
  const t0 = performance.now();
  assertSameAnswers(ds, plain, v4.slice(0, 100_000));
  assertSameAnswers(ds, plain, v6.slice(0, 50_000));
  const checkMs = performance.now() - t0;
  const withIntel = v4.slice(0, 100_000).filter((t) => lookup.resolve(parseIp(t)!, ORG).intelligence.categories.length > 0).length;

  const contenders = {
    umbra: (t: string) => {
      const r = lookup.resolve(parseIp(t)!, ORG);
      return r.network.asn + r.location.country.length + r.intelligence.risk_score;
    },
    mmdb: (t: string) => (plain.get(t) === null ? 0 : 1),
    mmdbLru: (t: string) => (cached.get(t) === null ? 0 : 1),
  };
  const r4 = race(v4, 3, contenders);
  const r6 = race(v6, 3, contenders);
  const preParsed = race(
    v4.map((t) => parseIp(t)!),
    3,
    { umbra: (ip: ParsedIp) => lookup.resolve(ip, ORG).intelligence.risk_score },
  );
  intel.close();
  const ratio = (r: Record<string, number>) => Number((r.umbra! / Math.max(r.mmdb!, r.mmdbLru!)).toFixed(2));

  const dsMem = measureInChild('dataset', datasetFile);
  const mmdbMem = measureInChild('mmdb', mmdb.file);
  return {
    'MMDB write s (when first cached)': Number((mmdb.written.ms / 1000).toFixed(1)),
    'MMDB size MB': Number((mmdb.written.bytes / 1e6).toFixed(1)),
    'MMDB nodes / record bits': `${mmdb.written.nodeCount} / ${mmdb.written.recordSize}`,
    'dataset file MB': Number((statSync(datasetFile).size / 1e6).toFixed(1)),
    'answers compared, all equal (v4 + v6)': 150_000,
    'comparison ms': Math.round(checkMs),
    'v4 sample flagged by intelligence (categories)': `${(withIntel / 1000).toFixed(2)}%`,
    'IPv4 umbra lookups/s (text → network+location+intel)': r4.umbra!,
    'IPv4 maxmind Reader.get/s (no cache)': r4.mmdb!,
    'IPv4 maxmind.open() get/s (LRU 10,000)': r4.mmdbLru!,
    'IPv4 ratio umbra / best MMDB (target >= 3)': ratio(r4),
    'IPv6 (in announced ranges) umbra lookups/s': r6.umbra!,
    'IPv6 maxmind Reader.get/s (no cache)': r6.mmdb!,
    'IPv6 maxmind.open() get/s (LRU 10,000)': r6.mmdbLru!,
    'IPv6 ratio umbra / best MMDB (target >= 3)': ratio(r6),
    'IPv4 umbra lookups/s, address already parsed': preParsed.umbra!,
    'dataset loaded: process RSS MB (target < 1024)': dsMem.rssMB,
    'dataset loaded: RSS growth MB': dsMem.rssGrowthMB,
    'dataset loaded: heap / external growth MB': `${dsMem.heapGrowthMB} / ${dsMem.externalGrowthMB}`,
    'dataset, every record materialised: RSS MB': dsMem.allRecordsRssMB!,
    'dataset, every record materialised: heap growth MB': dsMem.allRecordsHeapGrowthMB!,
    'MMDB loaded in maxmind Reader: RSS growth MB': mmdbMem.rssGrowthMB,
  };
}

if (process.argv[2] === '--memory') console.log(JSON.stringify(childMemory(process.argv[3] as 'dataset' | 'mmdb', process.argv[4]!)));
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchIntelMmdb());
