import type { Lifecycle } from '../../lib/lifecycle.ts';
import { RevisionWatcher, type WatcherLogger } from '../../lib/revision-watcher.ts';
import type { IntelIndex } from './engine/intel-index.ts';
import type { IntelList, IntelListStore } from './lists/intel-list.ts';
import type { OverlayStore } from './overlays/overlay-store.ts';

export interface IntelSourcesOptions {
  index: IntelIndex;
  lists: IntelListStore;
  overlays: OverlayStore;
  /** Called with every list set loaded (network-type lists feed lookups' network.type); returns what to log. */
  onLists(lists: IntelList[]): object;
  logger: WatcherLogger;
  intervalMs: number;
}

/**
 * Keeps the intelligence index on the imported lists and team overlays, which other processes (the
 * CLI) change while the server runs: loaded at start, then polled by revision.
 */
export class IntelSourcesWatch implements Lifecycle {
  readonly name = 'intelligence lists and overlays';
  private readonly watchers: RevisionWatcher[];

  constructor(private readonly o: IntelSourcesOptions) {
    const loadLists = async () => {
      const lists = await o.lists.all();
      o.index.setLists(lists);
      return { lists: lists.length, cidrs: lists.reduce((n, l) => n + l.cidrs.length, 0), ...o.onLists(lists) };
    };
    const loadOverlays = async () => {
      const overlays = await o.overlays.all();
      o.index.setOverlays(overlays);
      return { overlays: overlays.length };
    };
    this.watchers = [
      new RevisionWatcher('intelligence lists', () => o.lists.revision(), loadLists, o.logger),
      new RevisionWatcher('intelligence overlays', () => o.overlays.revision(), loadOverlays, o.logger),
    ];
  }

  async start(): Promise<void> {
    for (const w of this.watchers) {
      await w.refresh();
      w.start(this.o.intervalMs);
    }
  }

  /** Reads both again now (the server also polls them). */
  async refresh(): Promise<void> {
    await Promise.all(this.watchers.map((w) => w.refresh()));
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) await w.stop();
    this.o.index.close();
  }
}
