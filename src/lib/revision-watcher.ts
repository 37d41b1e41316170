export interface WatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Keeps an in-memory copy in step with a store that another process writes (the CLI imports lists and
 * edits overlays while the server runs): the store's revision is polled (every 5 s by default, well
 * inside the 60 s freshness rule) and `load` runs when it moved.
 */
export class RevisionWatcher {
  private revision: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly what: string,
    private readonly currentRevision: () => Promise<string>,
    /** Loads what changed and returns a summary to log; `null` when it refused the new revision (and said why). */
    private readonly load: () => Promise<object | null>,
    private readonly logger: WatcherLogger,
  ) {}

  /** Records the revision of what is already loaded, so the next refresh loads only after a change. */
  async assume(revision: string): Promise<void> {
    await this.running;
    this.revision = revision;
  }

  /** Reloads when the revision moved; resolves when the reload is done. */
  refresh(): Promise<void> {
    this.running = this.running
      .then(async () => {
        const revision = await this.currentRevision();
        if (revision === this.revision) return;
        const summary = await this.load();
        this.revision = revision;
        if (summary) this.logger.info(summary, `${this.what} loaded`);
      })
      .catch((e: Error) => this.logger.warn({ err: e.message }, `${this.what} not reloaded; retrying at the next poll`));
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
