// In-process lookups/s of the IP dataset (network + location per lookup) on random public addresses.
import { pathToFileURL } from 'node:url';
import { statSync } from 'node:fs';
import { loadDataset } from '../src/modules/dataset/dataset-reader.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { parseIp, type ParsedIp } from '../src/lib/ip-address.ts';

function randomPublicV4(): ParsedIp {
  for (;;) {
    const v = (Math.random() * 2 ** 32) >>> 0;
    const a = v >>> 24;
    if (a === 0 || a === 10 || a === 127 || a >= 224 || (a === 192 && ((v >>> 16) & 255) === 168)) continue;
    return parseIp(`${a}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`)!;
  }
}

function randomGlobalV6(): ParsedIp {
  const g = () => Math.floor(Math.random() * 0x10000).toString(16);
  return parseIp(
    `2${Math.floor(Math.random() * 0x1000)
      .toString(16)
      .padStart(3, '0')}:${g()}:${g()}:${g()}::${g()}`,
  )!;
}

export async function benchIntelIndex(): Promise<Record<string, number | string>> {
  const started = Date.now();
  const file = await ensureRealDataset();
  const ensureMs = Date.now() - started;
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const ds = loadDataset(file);
  const loadMs = performance.now() - t0;
  // Taken now, not after the sample addresses below are made, which would count them too.
  const rssAfterLoad = process.memoryUsage().rss;
  const run = (ips: ParsedIp[], rounds: number): number => {
    let sink = 0;
    let best = 0;
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      for (let i = 0; i < ips.length; i++) sink += ds.network(ips[i]!).asn + ds.location(ips[i]!).country.length;
      best = Math.max(best, ips.length / ((performance.now() - t) / 1000));
    }
    if (sink < 0) throw new Error('unreachable');
    return Math.round(best);
  };
  const v4 = Array.from({ length: 1_000_000 }, randomPublicV4);
  const v6 = Array.from({ length: 300_000 }, randomGlobalV6);
  return {
    'dataset file MB': Number((statSync(file).size / 1e6).toFixed(1)),
    'dataset ready (cached or built) ms': ensureMs,
    'load ms': Math.round(loadMs),
    'RSS growth from load MB': Math.round((rssAfterLoad - rssBefore) / 1e6),
    'RSS after load MB': Math.round(rssAfterLoad / 1e6),
    'IPv4 lookups/s, best of 4 (target >= 3,000,000)': run(v4, 4),
    'IPv6 lookups/s, best of 4': run(v6, 4),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchIntelIndex());
