/**
 * Starts at most one background job per key at a time (a record read again while its store fails):
 * a second start while the first runs is dropped. A job's failure is its own to report.
 */
export class BackgroundOnce<K> {
  private readonly running = new Set<K>();

  start(key: K, job: () => Promise<unknown>): void {
    if (this.running.has(key)) return;
    this.running.add(key);
    job()
      .catch(() => {})
      .finally(() => this.running.delete(key));
  }
}
