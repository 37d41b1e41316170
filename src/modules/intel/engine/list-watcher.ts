import type { IntelListStore } from '../lists/intel-list.ts';
import type { IntelIndex } from './intel-index.ts';

export interface ListWatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Keeps the index's list table in step with the list store: the CLI imports lists from another
 * process, so the store's revision is polled (every 5 s by default, well inside the 60 s freshness
 * rule) and every list is re-read when it changes.
 */
export class ListWatcher {
  private revision: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: IntelListStore,
    private readonly index: IntelIndex,
    private readonly logger: ListWatcherLogger,
  ) {}

  /** Re-reads the lists when the revision moved; resolves when the index has them. */
  refresh(): Promise<void> {
    this.running = this.running.then(async () => {
      const revision = await this.store.revision();
      if (revision === this.revision) return;
      const lists = await this.store.all();
      this.index.setLists(lists);
      this.revision = revision;
      this.logger.info({ lists: lists.length, cidrs: lists.reduce((n, l) => n + l.cidrs.length, 0) }, 'intelligence lists loaded');
    }).catch((e: Error) => this.logger.warn({ err: e.message }, 'intelligence lists not reloaded; retrying at the next poll'));
    return this.running;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
