import { AppError, FAULT_RETRY_AFTER_S } from '../../errors.ts';

export interface SqliteGateOptions {
  /** How long a statement is retried while another process holds the database's lock (ms). */
  deadlineMs?: number;
  now?: () => number;
  /** Told once when the database becomes unavailable, and once when it is back. */
  onUnavailable?: (reason: string) => void;
  onRecovered?: (unavailableMs: number) => void;
}

const DEFAULT_DEADLINE_MS = 2_000;
const FIRST_DELAY_MS = 2;
const MAX_DELAY_MS = 100;

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown })?.code;
  return (
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    (typeof code === 'string' && (code.startsWith('SQLITE_BUSY_') || code.startsWith('SQLITE_LOCKED_')))
  );
};

/**
 * Runs the embedded database's statements so that a lock held by another process never holds the
 * event loop: SQLite's busy wait is off, a statement that meets the lock fails at once, and it is
 * retried here on timers (2 ms, doubling to 100 ms) until the deadline, after which the caller gets
 * UNAVAILABLE (503 with Retry-After). A statement run again must have had no effect the first time:
 * single statements and transactions qualify (a failed one changed nothing).
 */
export class SqliteGate {
  private readonly deadlineMs: number;
  private readonly now: () => number;
  private unavailableSince: number | undefined;
  private lastReason = '';

  constructor(private readonly opts: SqliteGateOptions) {
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.now = opts.now ?? Date.now;
  }

  async run<T>(fn: () => T): Promise<T> {
    let first: unknown;
    try {
      return this.ok(fn());
    } catch (e) {
      if (!isBusy(e)) throw e;
      first = e;
    }
    const start = this.now();
    let delay = FIRST_DELAY_MS;
    let last = first;
    while (this.now() - start < this.deadlineMs) {
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
      try {
        return this.ok(fn());
      } catch (e) {
        if (!isBusy(e)) throw e;
        last = e;
      }
    }
    this.unavailable(`${(last as { code?: string }).code}: locked by another process`);
    throw new AppError(
      'UNAVAILABLE',
      'The embedded database is locked by another process; requests that need it are refused until it is free. Retry shortly.',
      {
        retryAfter: FAULT_RETRY_AFTER_S,
      },
    );
  }

  /** One attempt, no wait (health probes): throws as the statement did. */
  tryNow<T>(fn: () => T): T {
    return this.ok(fn());
  }

  private ok<T>(value: T): T {
    if (this.unavailableSince !== undefined) {
      const ms = this.now() - this.unavailableSince;
      this.unavailableSince = undefined;
      this.opts.onRecovered?.(ms);
    }
    return value;
  }

  private unavailable(reason: string): void {
    this.lastReason = reason;
    if (this.unavailableSince !== undefined) return;
    this.unavailableSince = this.now();
    this.opts.onUnavailable?.(reason);
  }

  /** What /health says while statements keep failing on the lock. */
  problems(): string[] {
    if (this.unavailableSince === undefined) return [];
    const s = Math.round((this.now() - this.unavailableSince) / 1000);
    return [`embedded database: unavailable for ${s} s (${this.lastReason}); requests that need it answer 503`];
  }
}
