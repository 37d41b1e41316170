import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDataset, packagedSources } from './dataset-builder.ts';
import { FORMAT_VERSION } from './dataset-format.ts';

let building: Promise<string> | undefined;

/**
 * The real dataset built from the installed packages, cached under .cache/ keyed by source versions
 * and format, so tests and benchmarks build it once (about 25 s) and reuse it.
 */
export function ensureRealDataset(): Promise<string> {
  building ??= (async () => {
    const sources = packagedSources();
    // Keyed by the sources and by the code that shapes the file, so a changed rule rebuilds it.
    const code = createHash('sha256');
    for (const f of ['dataset-builder.ts', 'dataset-format.ts', 'network-type.ts', 'range-table.ts', 'sources.ts']) code.update(readFileSync(join(import.meta.dirname, f)));
    const key = `${Object.values(sources.versions).join('_')}-${code.digest('hex').slice(0, 12)}`;
    const file = join(import.meta.dirname, '../../../.cache', `ip-dataset-f${FORMAT_VERSION}-${key}.bin`);
    // Another test process may be building it: the builder renames atomically, so a file that exists is whole.
    if (!existsSync(file)) await buildDataset({ outFile: file, sources });
    return file;
  })();
  return building;
}
