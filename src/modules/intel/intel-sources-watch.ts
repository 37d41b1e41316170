import type { Lifecycle } from '../../lib/lifecycle.ts';
import { RevisionWatcher, type WatcherLogger } from '../../lib/revision-watcher.ts';
import type { IntelIndex } from './engine/intel-index.ts';
import type { IntelList, IntelListStore } from './lists/intel-list.ts';
import type { OverlayStore } from './overlays/overlay-store.ts';

export interface IntelSourcesOptions {
  index: IntelIndex;
  lists: IntelListStore;
  overlays: OverlayStore;
  /**
   * Called with every list set loaded (network-type lists feed lookups' network.type) and the time it is
   * loaded at (Unix seconds); returns what to log.
   */
  onLists(lists: IntelList[], nowS: number): object;
  /** Milliseconds since the epoch (injected in tests). */
  now: () => number;
  logger: WatcherLogger;
  intervalMs: number;
}

const DAY_MS = 86_400_000;

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
      const nowS = Math.floor(o.now() / 1000);
      return { lists: lists.length, cidrs: lists.reduce((n, l) => n + l.cidrs.length, 0), ...o.onLists(lists, nowS) };
    };
    const loadOverlays = async () => {
      const overlays = await o.overlays.all();
      o.index.setOverlays(overlays);
      return { overlays: overlays.length };
    };
    this.watchers = [
      // The UTC day is part of the lists' revision: the lists are loaded again once a day even when none
      // changed, so that what is built from them at load time (the network-type ranges) ages too. The
      // index ages category lists at each query; lists expire in whole days, so a day's delay at most.
      new RevisionWatcher(
        'intelligence lists',
        async () => `${await o.lists.revision()}@${Math.floor(o.now() / DAY_MS)}`,
        loadLists,
        o.logger,
      ),
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
