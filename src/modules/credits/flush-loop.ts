export interface FlushHooks {
  /** The first flush that failed after a success: charges stay buffered and are sent again. */
  onFailing?: (err: Error, pendingCredits: number) => void;
  /** The first flush that succeeded after failures. */
  onRecovered?: (failedForMs: number) => void;
}

/** Flushes back off from the interval to this while they fail (ms). */
const MAX_FLUSH_BACKOFF_MS = 1_000;

/**
 * Runs a ledger's flush every intervalMs; while flushes fail, the wait doubles up to a second and the
 * charges stay buffered for the next attempt. Shared by the write-behind buffer (embedded) and the
 * block ledger (distributed), so both fail and recover alike.
 */
export class FlushLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failingSince: number | undefined;
  private lastError = '';

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly nowMs: () => number,
    private readonly unsentCredits: () => number,
  ) {}

  start(intervalMs: number, hooks: FlushHooks = {}): void {
    let delay = intervalMs;
    const tick = () => {
      this.flush()
        .then(
          () => {
            if (this.failingSince !== undefined) hooks.onRecovered?.(this.nowMs() - this.failingSince);
            this.failingSince = undefined;
            delay = intervalMs;
          },
          (e: Error) => {
            this.lastError = e.message;
            if (this.failingSince === undefined) {
              this.failingSince = this.nowMs();
              hooks.onFailing?.(e, this.unsentCredits());
            }
            delay = Math.min(Math.max(delay * 2, intervalMs), MAX_FLUSH_BACKOFF_MS);
          },
        )
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, delay).unref();
        });
    };
    this.timer = setTimeout(tick, delay).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** What /health says while charges cannot be written. */
  problems(): string[] {
    if (this.failingSince === undefined) return [];
    const s = Math.round((this.nowMs() - this.failingSince) / 1000);
    const unsent = this.unsentCredits();
    // A pass can fail with nothing to write (a distributed node renewing its block leases): saying
    // "0 credits not yet written" would read as a loss of charges that is not happening.
    if (unsent === 0)
      return [
        `credits: the ledger has not answered for ${s} s (${this.lastError}); no charge is waiting, and lookups spend what this node already holds`,
      ];
    return [`credits: ${unsent} charged credits not yet written for ${s} s (${this.lastError}); they are kept and retried`];
  }
}
