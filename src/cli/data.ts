import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import type { DatasetInfo } from '../modules/lookup/intel-source.ts';
import { action } from './context.ts';
import { registerListVerbs } from './data-lists.ts';
import type { Output } from './output.ts';
import { createProgress, type ProgressEvent } from './progress.ts';

/** Builds the IP dataset file from the packaged public datasets, with a progress bar on stderr. */
export async function buildDatasetWithProgress(config: Config, out: Output): Promise<DatasetInfo> {
  out.info(`building the IP dataset into ${config.datasetFile} (about a minute; sources: DB-IP Lite and RouteViews/NRO via @ip-location-db, CC BY 4.0)`);
  const progress = createProgress(true);
  const started = Date.now();
  // Loaded on use: admin verbs should not pay for the dataset code.
  const { buildDataset } = await import('../modules/intel/dataset-builder.ts');
  try {
    const info = await buildDataset({ outFile: config.datasetFile, onProgress: (e: ProgressEvent) => progress.update(e) });
    progress.stop();
    out.info(`IP dataset built in ${((Date.now() - started) / 1000).toFixed(1)} s (${(statSync(config.datasetFile).size / 1e6).toFixed(1)} MB)`);
    return info;
  } catch (e) {
    progress.stop();
    throw e;
  }
}

export function registerData(program: Command): void {
  const data = program.command('data').description('the IP dataset and intelligence lists');
  data
    .command('build')
    .description('build the IP dataset (network owner and location) from the packaged public datasets')
    .option('--if-missing', 'do nothing when the dataset file exists')
    .action(
      action(async (out, config, o: { ifMissing?: boolean }) => {
        const c = config();
        if (o.ifMissing && existsSync(c.datasetFile)) {
          out.result({ file: c.datasetFile, built: false }, () => `${c.datasetFile} exists; nothing to do`);
          return;
        }
        const info = await buildDatasetWithProgress(c, out);
        out.result({ file: c.datasetFile, built: true, info }, () => `dataset: ${c.datasetFile}\n${JSON.stringify(info.counts)}`);
      }),
    );
  registerListVerbs(data);
}
