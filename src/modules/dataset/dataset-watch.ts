import { stat } from 'node:fs/promises';
import type { IpDataset } from '../lookup/ip-dataset.ts';
import type { LookupData } from '../lookup/lookup-data.ts';
import { RevisionWatcher, type WatcherLogger } from '../../lib/revision-watcher.ts';
import { DatasetLoader } from './dataset-loader.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';

export interface DatasetWatchEvents {
  swapped(dataset: IpDataset): void;
  refused(error: Error): void;
}

export interface DatasetWatchOptions {
  file: string;
  data: LookupData;
  events: DatasetWatchEvents;
  logger: WatcherLogger & { error(obj: object, msg: string): void };
  intervalMs: number;
  /** The loader `data`'s dataset came from, if any (its arenas are reused); else a new one. */
  loader?: DatasetLoader;
}

/**
 * Keeps `data` on the dataset file's latest complete version: a rebuild (`umbra data build` renames a
 * complete file into place) is noticed by the file's identity (polled, or on `refresh`), loaded in the
 * loader thread, and swapped in between two requests. A file that cannot be loaded is refused and the
 * current dataset keeps answering until the file changes again. `file` held the dataset `data` has now.
 */
export class DatasetWatch implements Lifecycle {
  readonly name = 'IP dataset watch';
  private readonly loader: DatasetLoader;
  private readonly watcher: RevisionWatcher;

  constructor(private readonly o: DatasetWatchOptions) {
    this.loader = o.loader ?? new DatasetLoader();
    this.watcher = new RevisionWatcher(
      'IP dataset',
      () => this.identity(),
      () => this.loadNew(),
      o.logger,
    );
  }

  private async identity(): Promise<string> {
    const st = await stat(this.o.file);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  }

  private async loadNew(): Promise<object | null> {
    const { file, data, events, logger } = this.o;
    const started = Date.now();
    let next: IpDataset;
    try {
      next = await this.loader.load(file);
    } catch (e) {
      events.refused(e as Error);
      logger.error(
        { file, err: (e as Error).message, data_version: data.view().version.header },
        'IP dataset file changed but cannot be loaded; still serving the previous dataset',
      );
      return null;
    }
    data.swapDataset(next);
    events.swapped(next);
    return { file, ms: Date.now() - started, data_version: data.view().version.header };
  }

  async start(): Promise<void> {
    const { file } = this.o;
    this.loader.start();
    // Both arenas now, before serving: no later swap hands V8 new memory to account for. The spare
    // one stays untouched (no RAM) until a rebuilt file is loaded into it (DatasetLoader).
    this.loader.reserve(file);
    // The dataset `data` holds was loaded from this file: remember its identity without loading it again.
    await this.watcher.assume(await this.identity());
    this.watcher.start(this.o.intervalMs);
  }

  /** Loads the file now when it changed since the last load, then swaps it in. */
  refresh(): Promise<void> {
    return this.watcher.refresh();
  }

  async stop(): Promise<void> {
    await this.watcher.stop();
    await this.loader.close();
  }
}
