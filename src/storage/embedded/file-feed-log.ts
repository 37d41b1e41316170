import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FEED_IDS, type FeedId } from '../../modules/feeds/feed-catalog.ts';
import type { FeedLog, FeedLogEntry, HourFile } from '../../modules/feeds/feed-log.ts';
import { hourOf } from '../../lib/time.ts';
import type { DiskSpace } from './disk-space.ts';

interface Pending {
  entries: readonly FeedLogEntry[];
  resolve: () => void;
  reject: (e: Error) => void;
}

const HANDLES_PER_FEED = 8;

/** An open partition and its length in bytes: whole lines only, between appends. */
interface Partition {
  fh: FileHandle;
  size: number;
}

/** `{dir}/{feed}/{YYYY-MM-DD}/{HH}.ndjson`; feed ids come from the catalog, never from a request. */
function partitionPath(dir: string, feed: FeedId, hourMs: number): { dayDir: string; file: string } {
  const iso = new Date(hourMs).toISOString();
  const dayDir = join(dir, feed, iso.slice(0, 10));
  return { dayDir, file: join(dayDir, `${iso.slice(11, 13)}.ndjson`) };
}

/**
 * The embedded durable log: NDJSON files per feed and hour. Appends are group-committed: while one
 * write+fdatasync is in flight, later appends queue and go out together in the next one, so a busy
 * feed pays one fsync per batch of requests, and every append resolves only after its fsync.
 *
 * A group is all or nothing: every byte count is checked, and when a write or the fdatasync fails
 * (a full disk, an I/O error) every partition it touched is cut back to its length before the group,
 * so no line of a rejected append stays and no torn line is left for the next append to glue onto.
 * With a DiskSpace, a group that would leave less than the reserve free is refused before any write.
 */
export class FileFeedLog implements FeedLog {
  private readonly pending = new Map<FeedId, Pending[]>();
  private readonly flushing = new Set<FeedId>();
  private readonly handles = new Map<string, Partition>();
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly disk?: DiskSpace,
  ) {}

  append(feed: FeedId, entries: readonly FeedLogEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('feed log is closed'));
    if (entries.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let q = this.pending.get(feed);
      if (!q) this.pending.set(feed, (q = []));
      q.push({ entries, resolve, reject });
      if (!this.flushing.has(feed)) void this.flush(feed);
    });
  }

  private async flush(feed: FeedId): Promise<void> {
    this.flushing.add(feed);
    try {
      for (;;) {
        const batch = this.pending.get(feed);
        if (!batch || batch.length === 0) return;
        this.pending.set(feed, []);
        try {
          await this.write(feed, batch);
          for (const p of batch) p.resolve();
        } catch (e) {
          for (const p of batch) p.reject(e as Error);
        }
      }
    } finally {
      this.flushing.delete(feed);
    }
  }

  private async write(feed: FeedId, batch: Pending[]): Promise<void> {
    const byHour = new Map<number, string[]>();
    for (const p of batch) {
      for (const e of p.entries) {
        const h = hourOf(e.timeMs);
        let lines = byHour.get(h);
        if (!lines) byHour.set(h, (lines = []));
        lines.push(e.line);
      }
    }
    // One buffer per partition; the trailing newline marks the last line as whole.
    const bufs = [...byHour].map(([hour, lines]) => ({ hour, buf: Buffer.from(`${lines.join('\n')}\n`) }));
    this.disk?.admit(
      bufs.reduce((n, b) => n + b.buf.length, 0),
      'ingestion',
    );
    const touched: Array<{ part: Partition; file: string; start: number }> = [];
    try {
      for (const { hour, buf } of bufs) {
        const { part, file } = await this.handle(feed, hour);
        touched.push({ part, file, start: part.size });
        await writeAll(part.fh, buf);
        part.size += buf.length;
      }
      await Promise.all(touched.map((t) => t.part.fh.datasync()));
    } catch (e) {
      this.disk?.failed(e as NodeJS.ErrnoException);
      await this.rollBack(touched);
      throw e;
    }
    this.disk?.wrote(bufs.reduce((n, b) => n + b.buf.length, 0));
    this.disk?.succeeded();
    await this.evict(feed);
  }

  /**
   * Cuts each partition of a failed group back to its length before the group. Shrinking needs no
   * free space; should it fail anyway, the handle is dropped, and the next open cuts a torn tail.
   */
  private async rollBack(touched: Array<{ part: Partition; file: string; start: number }>): Promise<void> {
    for (const t of touched) {
      try {
        await t.part.fh.truncate(t.start);
        await t.part.fh.datasync();
        t.part.size = t.start;
      } catch {
        this.handles.delete(t.file);
        await t.part.fh.close().catch(() => {});
      }
    }
  }

  /** Keeps the few most recent partitions of a feed open; older ones are rarely written again. */
  private async evict(feed: FeedId): Promise<void> {
    const prefix = `${join(this.dir, feed)}/`;
    const mine = [...this.handles.keys()].filter((k) => k.startsWith(prefix)).sort();
    for (const file of mine.slice(0, Math.max(0, mine.length - HANDLES_PER_FEED))) {
      await this.handles.get(file)!.fh.close();
      this.handles.delete(file);
    }
  }

  private async handle(feed: FeedId, hour: number): Promise<{ part: Partition; file: string }> {
    const { dayDir, file } = partitionPath(this.dir, feed, hour);
    const cached = this.handles.get(file);
    if (cached) return { part: cached, file };
    await makeDir(dayDir);
    const fh = await open(file, 'a+');
    try {
      const part = { fh, size: await repairTornTail(fh) };
      this.handles.set(file, part);
      return { part, file };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  async *readHour(feed: FeedId, hourStartMs: number): AsyncIterable<string> {
    for await (const block of this.readHourBlocks(feed, hourStartMs)) yield* block.split('\n');
  }

  async *readHourBlocks(feed: FeedId, hourStartMs: number): AsyncIterable<string> {
    const { file } = partitionPath(this.dir, feed, hourOf(hourStartMs));
    let rest = '';
    try {
      for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
        const text = rest + (chunk as string);
        const cut = text.lastIndexOf('\n');
        if (cut === -1) {
          rest = text;
          continue;
        }
        rest = text.slice(cut + 1);
        // Appends write whole non-empty lines, so a block between newlines holds no empty line.
        if (cut > 0) yield text.slice(0, cut);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    // `rest` has no newline: a write cut short by a crash (never acknowledged), or one in progress.
  }

  async hourFile(feed: FeedId, hourStartMs: number): Promise<HourFile | undefined> {
    const { file } = partitionPath(this.dir, feed, hourOf(hourStartMs));
    let fh: FileHandle;
    try {
      fh = await open(file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const st = await fh.stat({ bigint: true });
      const valid = await validLength(fh, Number(st.size));
      if (valid === 0) return undefined;
      // Append-only: the valid length grows with every record and never shrinks (only a torn tail is
      // cut); the inode tells a partition dropped and written again from the one read before.
      return { path: file, whole: valid === Number(st.size), version: `${st.ino}:${valid}` };
    } finally {
      await fh.close();
    }
  }

  async hours(feed: FeedId): Promise<number[]> {
    const out: number[] = [];
    const feedDir = join(this.dir, feed);
    for (const day of await listDir(feedDir)) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) continue;
      for (const f of await listDir(join(feedDir, day))) {
        const m = /^(\d{2})\.ndjson$/.exec(f);
        if (m) out.push(Date.parse(`${day}T${m[1]}:00:00Z`));
      }
    }
    return out.sort((a, b) => a - b);
  }

  async dropBefore(feed: FeedId, hourStartMs: number): Promise<number> {
    let dropped = 0;
    for (const h of await this.hours(feed)) {
      if (h >= hourStartMs) break;
      const { dayDir, file } = partitionPath(this.dir, feed, h);
      await this.handles.get(file)?.fh.close();
      this.handles.delete(file);
      await rm(file, { force: true });
      if ((await listDir(dayDir)).length === 0) await rm(dayDir, { recursive: true, force: true });
      dropped++;
    }
    return dropped;
  }

  async close(): Promise<void> {
    // Let queued appends finish so nothing acknowledged-in-flight is cut off.
    for (const feed of FEED_IDS)
      while (this.flushing.has(feed) || (this.pending.get(feed)?.length ?? 0) > 0) await new Promise((r) => setTimeout(r, 1));
    this.closed = true;
    for (const p of this.handles.values()) await p.fh.close();
    this.handles.clear();
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/**
 * Cuts a partial last line (a crash mid-write, never acknowledged) so new lines start on a line of
 * their own; returns the length left.
 */
async function repairTornTail(fh: FileHandle): Promise<number> {
  const { size } = await fh.stat();
  const valid = await validLength(fh, size);
  if (valid !== size) {
    await fh.truncate(valid);
    await fh.datasync();
  }
  return valid;
}

/**
 * mkdir -p that reports the real cause: node's recursive mkdir answers ENOENT on a read-only file
 * system; making the missing levels one by one surfaces EROFS (or EACCES, ENOSPC).
 */
async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const missing: string[] = [];
    for (let d = dir; ; d = dirname(d)) {
      if (
        await stat(d).then(
          () => true,
          () => false,
        )
      )
        break;
      missing.unshift(d);
      if (dirname(d) === d) break;
    }
    for (const d of missing) await mkdir(d);
  }
}

/** FileHandle.write may write fewer bytes than asked (a nearly full disk): write the rest, or throw. */
async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  for (let off = 0; off < buf.length; ) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    // A write that makes no progress would loop forever; the kernel reports ENOSPC on the next call.
    if (bytesWritten <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    off += bytesWritten;
  }
}

/** Bytes up to and including the last '\n' of a file of `size` bytes: its whole lines. */
async function validLength(fh: FileHandle, size: number): Promise<number> {
  if (size === 0) return 0;
  const tail = Buffer.alloc(Math.min(size, 1 << 16));
  let end = size;
  for (;;) {
    const start = Math.max(0, end - tail.length);
    const { bytesRead } = await fh.read(tail, 0, end - start, start);
    if (end === size && tail[bytesRead - 1] === 0x0a) return size;
    const nl = tail.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    if (start === 0) return 0;
    end = start;
  }
}
