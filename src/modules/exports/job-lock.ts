import { AppError } from '../../errors.ts';

/** The lock every export job runs under, scheduled or asked for by hand. */
export const EXPORT_LOCK = 'exports';

/** How long a job asked for by hand waits for another node's pass to finish (ms). */
export const MANUAL_LOCK_WAIT_MS = 60_000;

/** A lock held by this process; `lost` is aborted if the backend lets it go (a dropped connection). */
export interface HeldLock {
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/**
 * Whose turn it is to run export jobs. In distributed mode every node schedules them, and the lock
 * makes a pass run on one node at a time; the others skip theirs and look again a minute later, so a
 * node that dies mid-job is replaced within a minute. In embedded mode one process holds the data dir,
 * and the lock only keeps its own passes apart.
 */
export interface JobLock {
  /** Takes the lock of `name` when nobody holds it; undefined when someone (another node) does. */
  tryAcquire(name: string): Promise<HeldLock | undefined>;
}

/** The lock of one process: names held in memory. */
export class LocalJobLock implements JobLock {
  private readonly held = new Set<string>();

  async tryAcquire(name: string): Promise<HeldLock | undefined> {
    if (this.held.has(name)) return undefined;
    this.held.add(name);
    return {
      lost: new AbortController().signal,
      release: async () => {
        this.held.delete(name);
      },
    };
  }
}

/**
 * Takes the export lock for a job asked for by hand, waiting (checking twice a second) while another
 * node runs a pass; 503 after `waitMs`.
 */
export async function waitForExportLock(lock: JobLock, waitMs = MANUAL_LOCK_WAIT_MS): Promise<HeldLock> {
  const until = Date.now() + waitMs;
  for (;;) {
    const held = await lock.tryAcquire(EXPORT_LOCK);
    if (held) return held;
    if (Date.now() >= until)
      throw new AppError('UNAVAILABLE', 'Another node is running export jobs; retry once it has finished.', { retryAfter: 30 });
    await new Promise((r) => setTimeout(r, 500));
  }
}
