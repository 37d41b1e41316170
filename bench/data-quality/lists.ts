import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/lib/clock.ts';
import { parseIp } from '../../src/lib/ip-address.ts';
import { IntelIndex } from '../../src/modules/intel/engine/intel-index.ts';
import type { IntelList, IntelListStore } from '../../src/modules/intel/lists/intel-list.ts';
import { ListImporter, type ImportRequest } from '../../src/modules/intel/lists/list-importer.ts';
import { createGenerators } from '../../src/demo/simulator/generators.ts';
import { mulberry32 } from '../../src/demo/simulator/random.ts';
import { canonicalProvider, KNOWN_PROVIDERS } from '../../src/modules/providers/provider-registry.ts';
import type { QualityResult } from './check.ts';

/**
 * List aging on the packaged list sample: whole publisher files in UMBRA_REAL_LISTS_DIR (the same
 * folder list-formats.test.ts reads). The publication dates below were read by hand from each file's
 * own header (creationTime, createDate, modified) or, for files that carry none, from the sample's
 * notes (the snapshot column); they are the ground truth.
 */
const SAMPLE: Array<{ file: string; kind: string; provider?: string; published: string; dated: boolean }> = [
  { file: 'googlebot.json', kind: 'SEARCH_ENGINE', provider: 'GOOGLEBOT', published: '2026-08-20', dated: true },
  { file: 'googlesc.json', kind: 'SEARCH_ENGINE', provider: 'GOOGLE_SPECIAL_CRAWLERS', published: '2026-08-20', dated: true },
  { file: 'user-triggered-fetchers.json', kind: 'LINK_PREVIEW', provider: 'GOOGLE_FETCHERS', published: '2024-02-27', dated: true },
  { file: 'gcp.json', kind: 'DATACENTER', provider: 'GOOGLE_CLOUD', published: '2026-08-21', dated: true },
  { file: 'aws.json', kind: 'DATACENTER', provider: 'AWS', published: '2026-08-21', dated: true },
  { file: 'datadog.json', kind: 'UPTIME_MONITOR', published: '2026-02-24', dated: true },
  { file: 'stripe.json', kind: 'WEBHOOK_PROVIDER', published: '2026-08', dated: false },
  { file: 'cloudflare.json', kind: 'DATACENTER', provider: 'CLOUDFLARE', published: '2026-08', dated: false },
  { file: 'bing-ipv4.txt', kind: 'SEARCH_ENGINE', provider: 'BINGBOT', published: '2026-08', dated: false },
  { file: 'openai-ipv4.txt', kind: 'AI_CRAWLER', provider: 'OPENAI', published: '2026-08', dated: false },
  { file: 'protonvpn-ipv4.txt', kind: 'COMMERCIAL_VPN', provider: 'PROTONVPN', published: '2026-08', dated: false },
  { file: 'tor-bulk-exit-list-2022.txt', kind: 'TOR_NODE', published: '2022-01', dated: false },
];

class MemoryLists implements IntelListStore {
  lists: IntelList[] = [];
  async put(l: IntelList) {
    this.lists = [...this.lists.filter((x) => x.kind !== l.kind || x.provider !== l.provider), l];
  }
  async remove() {
    return false;
  }
  async all() {
    return this.lists;
  }
  async revision() {
    return String(this.lists.length);
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const DAY_S = 86_400;

/** Imports one file now (as `umbra data import-list` would) and explains its first listed address. */
async function importAndExplain(clock: ManualClock, s: (typeof SAMPLE)[number], bytes: Buffer, extra: Record<string, unknown> = {}) {
  const store = new MemoryLists();
  const req = { kind: s.kind, provider: s.provider, bytes, ...extra } as ImportRequest;
  await new ListImporter(store, clock, sha256).import(req);
  const list = store.lists[0]!;
  const index = new IntelIndex(clock, { budgetBytes: 16 * 2 ** 20 });
  index.setLists(store.lists);
  const first = list.cidrs.find((c) => !c.includes(':')) ?? list.cidrs[0]!;
  const ip = parseIp(first.split('/')[0]!)!;
  const { evidence } = index.explain(ip);
  index.close();
  return { evidence, list };
}

/** Unix seconds of the start and end of a date (`2026-08-20`) or month (`2026-08`). */
function span(text: string): [number, number] {
  const [y, m, d] = text.split('-').map(Number) as [number, number, number | undefined];
  const start = Date.UTC(y, m - 1, d ?? 1) / 1000;
  const end = d === undefined ? Date.UTC(y, m, 1) / 1000 : start + DAY_S;
  return [start, end];
}

export async function listChecks(): Promise<QualityResult[]> {
  const dir = process.env.UMBRA_REAL_LISTS_DIR;
  if (!dir || !existsSync(dir))
    return [{ name: 'list aging (UMBRA_REAL_LISTS_DIR not set: a folder of whole publisher files)', sample: 0, right: 0 }];
  const clock = new ManualClock(Date.now());
  const timeMisses: string[] = [];
  let timeRight = 0;
  for (const s of SAMPLE) {
    const { evidence, list } = await importAndExplain(clock, s, readFileSync(join(dir, s.file)));
    // The time a lookup's evidence gives, else (network-type lists, expired lists) the one `umbra data lists` shows.
    const src = evidence.categories.flatMap((c) => c.sources).find((x) => x.source === 'list');
    const stored = (list as Partial<IntelList>).published_at ?? list.imported_at;
    const seen = src && 'last_seen' in src ? src.last_seen : stored;
    const [from, to] = span(s.published);
    if (seen >= from && seen < to + DAY_S) timeRight++;
    else timeMisses.push(`${s.file}: ${new Date(seen * 1000).toISOString().slice(0, 10)}`);
  }
  // The Tor list of 2022, imported today: once with its date given (--published), once as a bare file.
  const tor = SAMPLE.find((s) => s.file.startsWith('tor-'))!;
  const torBytes = readFileSync(join(dir, tor.file));
  const torMisses: string[] = [];
  let torRight = 0;
  for (const [label, extra] of [
    ['with --published 2022-01-18', { published: { at: Date.UTC(2022, 0, 18) / 1000, from: 'option' } }],
    ['bare file, no date', {}],
  ] as const) {
    const { evidence } = await importAndExplain(clock, tor, torBytes, extra);
    const current = evidence.categories.some((c) => c.category === 'TOR_NODE') && evidence.risk.category.value >= 60;
    if (!current) torRight++;
    else torMisses.push(`${label}: TOR_NODE at full strength (${evidence.risk.category.value})`);
  }
  return [
    {
      name: "list time reported = the publisher's time, packaged list sample",
      sample: SAMPLE.length,
      right: timeRight,
      detail: `right: the evidence's last_seen (else the stored list's time) falls on the publisher's date (its month where the file carries none); misses: ${
        timeMisses.join('; ') || 'none'
      }`,
    },
    {
      name: 'the 2022 Tor bulk exit list imported today does not count as current',
      sample: 2,
      right: torRight,
      detail: `right: no TOR_NODE at full strength (weight 60) for a listed exit; misses: ${torMisses.join('; ') || 'none'}`,
    },
  ];
}

/**
 * The demo simulator's provider attributions: a record that names a real provider (one of the
 * registry's, by any of its names or product-line tags) puts that name on an address the provider
 * does not publish, since the simulator draws addresses from networks no such provider claims.
 */
export async function demoProviderChecks(): Promise<QualityResult[]> {
  const g = createGenerators({
    rng: mulberry32(20),
    network: () => ({ asn: 0, country: '' }),
    tlsHello: () => ({ raw: new Uint8Array(0), details: null }),
  });
  const known = new Set(KNOWN_PROVIDERS);
  let sample = 0;
  let right = 0;
  const named = new Set<string>();
  for (let i = 0; i < 2000; i++)
    for (const feed of ['proxies', 'ja4t', 'anonymizers'] as const) {
      const r = g[feed](Date.UTC(2026, 10, 28) + i * 1000) as { provider: string };
      sample++;
      const real = known.has(canonicalProvider(r.provider).provider);
      if (!real) right++;
      else named.add(r.provider);
    }
  return [
    {
      name: "demo records that put no real provider's name on an address (proxies, ja4t, anonymizers)",
      sample,
      right,
      detail: `real names used: ${[...named].sort().slice(0, 12).join(', ') || 'none'}${named.size > 12 ? ` and ${named.size - 12} more` : ''}`,
    },
  ];
}
