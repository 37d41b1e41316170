import { statfsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { AppError, FAULT_RETRY_AFTER_S } from '../../errors.ts';

export interface DiskSpaceOptions {
  /** The directory whose file system is watched (the data dir). */
  dir: string;
  /** Bytes that must stay free: writers that would go below it are refused first. */
  reserveBytes: number;
  /** How often the free space is read again (ms). */
  refreshMs?: number;
  now?: () => number;
}

const MB = 1024 * 1024;
/** A disk that refused a write counts as full until this much above the reserve is free again. */
const FULL_CLEARS_ABOVE = MB;
/** How long /health keeps reporting a refused write when nothing was written since. */
const REFUSAL_SHOWN_MS = 60_000;
const mb = (bytes: number) => `${Math.max(0, Math.floor(bytes / MB))} MB`;

/**
 * The free space of the data dir's file system, kept current without a syscall per write: statfs every
 * refreshMs, minus what writers reported since. Writers ask before writing, so ingestion is refused
 * while a reserve is still free (the database and the export jobs need room too) instead of meeting
 * ENOSPC halfway through a batch. A write that failed anyway for lack of space counts as a full disk
 * until statfs shows the reserve free again.
 */
export class DiskSpace {
  private free = Number.POSITIVE_INFINITY;
  private total = 0;
  private writtenSince = 0;
  private readAt = 0;
  private full: { code: string; at: number } | undefined;
  private refused: number | undefined;
  private fault: { message: string; at: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: DiskSpaceOptions) {
    this.now = opts.now ?? Date.now;
    // Once, synchronously, so the first write already knows the space (later reads are async).
    try {
      this.read(statfsSync(opts.dir));
    } catch {
      // Not created yet, or not readable: the timer and the writes will tell.
    }
  }

  private read(s: { bavail: number; bsize: number; blocks: number }): void {
    this.free = s.bavail * s.bsize;
    this.total = s.blocks * s.bsize;
    this.writtenSince = 0;
    this.readAt = this.now();
    if (this.full && this.free >= this.opts.reserveBytes + FULL_CLEARS_ABOVE) this.full = undefined;
  }

  get reserveBytes(): number {
    return this.opts.reserveBytes;
  }

  /** Reads the free space now; called at start, then every refreshMs. */
  async refresh(): Promise<void> {
    try {
      this.read(await statfs(this.opts.dir));
    } catch {
      // A data dir we cannot stat is reported by the writes that fail on it.
    }
  }

  start(): void {
    this.timer ??= setInterval(() => void this.refresh(), this.opts.refreshMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Free bytes as last read, less what was written since. */
  get freeBytes(): number {
    return this.free - this.writtenSince;
  }

  /**
   * Throws INSUFFICIENT_STORAGE (507, Retry-After) when writing `bytes` would leave less than the
   * reserve free, or while a write has just failed for lack of space.
   */
  admit(bytes: number, what: string): void {
    if (this.full || this.freeBytes - bytes < this.opts.reserveBytes) this.refused = this.now();
    if (this.full)
      throw new AppError(
        'INSUFFICIENT_STORAGE',
        `The server's disk is full (${this.full.code}); ${what} is refused until space is freed. Retry later.`,
        { retryAfter: FAULT_RETRY_AFTER_S },
      );
    if (this.freeBytes - bytes < this.opts.reserveBytes) {
      throw new AppError(
        'INSUFFICIENT_STORAGE',
        `The server's disk has ${mb(this.freeBytes)} free, below its reserve of ${mb(this.opts.reserveBytes)}; ${what} is refused until ` +
          `space is freed. Retry later.`,
        { retryAfter: FAULT_RETRY_AFTER_S },
      );
    }
  }

  /** A writer wrote this many bytes (they count against the free space until the next statfs). */
  wrote(bytes: number): void {
    this.writtenSince += bytes;
    this.refused = undefined;
  }

  /** A write failed: a full disk blocks writers until statfs shows the reserve free; any fault shows in problems(). */
  failed(e: NodeJS.ErrnoException): void {
    const at = this.now();
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'EFBIG') this.full = { code: e.code, at };
    this.fault = { message: e.code ?? e.message, at };
  }

  /** A write succeeded: an earlier fault no longer describes the disk. */
  succeeded(): void {
    this.fault = undefined;
  }

  /** What /health reports: space below the reserve, a full disk, a failing write. */
  problems(): string[] {
    const out: string[] = [];
    if (this.full)
      out.push(`disk: full (${this.full.code} at ${new Date(this.full.at).toISOString()}); ingestion is refused until space is freed`);
    else if (this.freeBytes < this.opts.reserveBytes)
      out.push(
        `disk: ${mb(this.freeBytes)} free of ${mb(this.total)}, below the reserve of ${mb(this.opts.reserveBytes)}; ingestion is refused`,
      );
    else if (this.refused !== undefined && this.now() - this.refused < REFUSAL_SHOWN_MS) {
      out.push(
        `disk: ${mb(this.freeBytes)} free of ${mb(this.total)}, too close to the reserve of ${mb(this.opts.reserveBytes)}: ingestion was ` +
          `refused at ${new Date(this.refused).toISOString()}`,
      );
    }
    if (this.fault && !this.full) out.push(`disk: a write failed (${this.fault.message} at ${new Date(this.fault.at).toISOString()})`);
    return out;
  }

  /** For /metrics and data status. */
  snapshot(): { free_bytes: number; total_bytes: number; reserve_bytes: number; read_at: number } {
    return {
      free_bytes: Number.isFinite(this.freeBytes) ? this.freeBytes : 0,
      total_bytes: this.total,
      reserve_bytes: this.opts.reserveBytes,
      read_at: this.readAt,
    };
  }
}
