import { stat } from 'node:fs/promises';
import type { IpDataset } from '../lookup/ip-dataset.ts';
import type { LookupData } from '../lookup/lookup-data.ts';
import { RevisionWatcher, type WatcherLogger } from '../../lib/revision-watcher.ts';
import { DatasetLoader } from './dataset-loader.ts';

export interface DatasetWatch {
  /** Loads the file now when it changed since the last load, then swaps it in. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export interface DatasetWatchEvents {
  swapped(dataset: IpDataset): void;
  refused(error: Error): void;
}

/**
 * Keeps `data` on the dataset file's latest complete version: a rebuild (`umbra data build` renames a
 * complete file into place) is noticed by the file's identity (polled, or on `refresh`), loaded in the
 * loader thread, and swapped in between two requests. A file that cannot be loaded is refused and the
 * current dataset keeps answering until the file changes again. `file` held the dataset `data` has now.
 */
export async function watchDatasetFile(
  file: string,
  data: LookupData,
  events: DatasetWatchEvents,
  logger: WatcherLogger & { error(obj: object, msg: string): void },
  intervalMs: number,
  /** The loader `data`'s dataset came from, if any (its arenas are reused); else a new one. */
  loader: DatasetLoader = new DatasetLoader(),
): Promise<DatasetWatch> {
  const identity = async () => {
    const st = await stat(file);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  };
  loader.start();
  // Both arenas now, before serving: no later swap hands V8 new memory to account for.
  loader.reserve(file);
  // The spare arena made resident now, in the background: the first swap then costs what later ones do.
  loader.prefaultSpare().catch((e: Error) => logger.error({ file, err: e.message }, 'could not prepare the memory for the next IP dataset load'));
  const loadNew = async () => {
    const started = Date.now();
    let next: IpDataset;
    try {
      next = await loader.load(file);
    } catch (e) {
      events.refused(e as Error);
      logger.error({ file, err: (e as Error).message, data_version: data.view().version.header }, 'IP dataset file changed but cannot be loaded; still serving the previous dataset');
      return null;
    }
    data.swapDataset(next);
    events.swapped(next);
    return { file, ms: Date.now() - started, data_version: data.view().version.header };
  };
  const watcher = new RevisionWatcher('IP dataset', identity, loadNew, logger);
  // The dataset `data` holds was loaded from this file: remember its identity without loading it again.
  await watcher.assume(await identity());
  watcher.start(intervalMs);
  return {
    refresh: () => watcher.refresh(),
    close: async () => {
      await watcher.stop();
      await loader.close();
    },
  };
}
