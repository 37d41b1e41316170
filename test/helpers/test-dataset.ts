import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildDataset, packagedSources } from '../../src/modules/dataset/dataset-builder.ts';
import { FORMAT_VERSION } from '../../src/modules/dataset/dataset-format.ts';
import { loadDataset } from '../../src/modules/dataset/dataset-reader.ts';
import { writeMmdbFile, type MmdbImage } from './mmdb/mmdb-writer.ts';

let building: Promise<string> | undefined;

/**
 * Makes `file` with `make` unless it exists, one process at a time: test files run in parallel
 * processes, and two building the same cache file at once would race on its temporary name (and
 * double a minute of CPU). The others wait for the lock holder's file. A lock older than 10 minutes
 * is a crashed holder's and is taken over.
 */
async function once(file: string, make: () => Promise<void>): Promise<void> {
  mkdirSync(join(file, '..'), { recursive: true });
  const lock = `${file}.lock`;
  for (;;) {
    if (existsSync(file)) return;
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { force: true });
      } catch {
        // Released between the two calls.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (!existsSync(file)) await make();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Built datasets and MMDBs, kept between runs (git-ignored). */
const CACHE = join(import.meta.dirname, '../../.cache');
/** The code that shapes the dataset file: a change in it builds the cached file again. */
const DATASET_CODE = join(import.meta.dirname, '../../src/modules/dataset');

/**
 * The real dataset built from the installed packages, cached under .cache/ keyed by source versions
 * and format, so tests and benchmarks build it once (about 25 s) and reuse it.
 */
export function ensureRealDataset(): Promise<string> {
  building ??= (async () => {
    const sources = packagedSources();
    // Keyed by the sources and by the code that shapes the file, so a changed rule rebuilds it.
    const code = createHash('sha256');
    for (const f of ['dataset-builder.ts', 'dataset-format.ts', 'network-type.ts', 'network-owners.ts', 'range-table.ts', 'sources.ts'])
      code.update(readFileSync(join(DATASET_CODE, f)));
    const key = `${Object.values(sources.versions).join('_')}-${code.digest('hex').slice(0, 12)}`;
    const file = join(CACHE, `ip-dataset-f${FORMAT_VERSION}-${key}.bin`);
    // The builder renames atomically, so a file that exists is whole.
    await once(file, async () => void (await buildDataset({ outFile: file, sources })));
    return file;
  })();
  return building;
}

export interface RealMmdb {
  file: string;
  /** How the cached file was written: ms taken and its shape, recorded when it was written. */
  written: Omit<MmdbImage, 'parts'> & { ms: number; at: string };
}

let writingMmdb: Promise<RealMmdb> | undefined;

const mmdbOptions = (builtAt: number) => ({
  databaseType: 'umbra-ip-dataset',
  description: 'umbra IP dataset (network and location per range) for reader comparisons',
  buildEpoch: builtAt,
});

/**
 * The real dataset as an MMDB (mmdb-writer.ts), for comparing umbra with MaxMind readers; cached
 * beside the dataset, keyed by it and by the writer's code (writing takes about 6 s and 1 GB).
 */
export function ensureRealMmdb(): Promise<RealMmdb> {
  writingMmdb ??= (async () => {
    const dataset = await ensureRealDataset();
    const code = createHash('sha256');
    for (const f of ['mmdb/mmdb-writer.ts', 'mmdb/mmdb-tree.ts', 'mmdb/mmdb-data.ts', '../../src/modules/dataset/dataset-reader.ts'])
      code.update(readFileSync(join(import.meta.dirname, f)));
    const file = join(CACHE, `${basename(dataset, '.bin')}-${code.digest('hex').slice(0, 12)}.mmdb`);
    const stats = `${file}.json`;
    // The stats are written after the renamed file, so a file without them is rewritten.
    await once(stats, async () => {
      const ds = loadDataset(dataset);
      const t0 = performance.now();
      const info = writeMmdbFile(file, ds.ranges(), mmdbOptions(ds.info.built_at));
      writeFileSync(
        `${stats}.${process.pid}`,
        JSON.stringify({ ...info, ms: Math.round(performance.now() - t0), at: new Date().toISOString() }),
      );
      renameSync(`${stats}.${process.pid}`, stats);
    });
    return { file, written: JSON.parse(readFileSync(stats, 'utf8')) as RealMmdb['written'] };
  })();
  return writingMmdb;
}
