import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * The sensor's on-disk queue of captured records, one per feed, so nothing captured is lost while the
 * umbra server is unreachable or the sensor is killed (even with SIGKILL).
 *
 * Layout under the spool dir: `spool-id` (random, names this spool in idempotency keys), `lock` (the
 * pid of the sensor using it), and per feed a directory of segment files `<first seq>.seg`, `acked`
 * (the last record the server stored) and `inflight` (the batch being uploaded: its key and range).
 * A frame is u32 length, u32 CRC-32 of the payload, then the payload (one record's JSON). Appends are
 * written at an explicit position in two steps a caller can wait on apart: `written` (the bytes are in
 * the file, so a crash of the sensor process, even SIGKILL, no longer loses them: the kernel has them)
 * and `durable` (fdatasync returned: they survive the machine's crash too). Only durable records count:
 * depth, batches and the uploader see nothing else. The appends of one turn of the event loop share
 * one write; writes go on while an fdatasync runs, and each
 * fdatasync covers every write done before it (group commit); at most MAX_UNSYNCED bytes are written
 * and not yet durable, so a slow disk slows the writers instead of widening that window. A torn tail
 * left by a crash fails its length or CRC check and is cut off when the spool is opened.
 *
 * Batches are cut from the spool by sequence number, and the range is made durable (inflight) before
 * it is sent: after a crash the same records go again under the same key, so the server stores them
 * once however often the answer was lost.
 */

const FRAME_HEADER = 8;
/** A payload no record can reach (the server's line limit is 2 MiB): a longer length is damage. */
const MAX_PAYLOAD = 8 * 1_048_576;
const SEG_RE = /^(\d{16})\.seg$/;
/**
 * Bytes written and not yet fsynced, at most (per feed): what a machine crash can lose of records
 * whose write was reported. Past it the next write waits for the fdatasync in progress.
 */
export const MAX_UNSYNCED = 1_048_576;
/**
 * The least time between the starts of two fdatasyncs of a feed while less than half of MAX_UNSYNCED
 * waits: under load each then covers a few hundred records instead of a few dozen, and the sensor
 * pays a fraction of the syscalls and thread-pool hand-offs (each a sleep and a wake-up) they cost.
 * Nothing waits for durability but the uploader, which it delays by at most this much.
 */
export const SYNC_GAP_MS = 5;

/** The append was refused: the spool holds its maximum. */
export class SpoolFull extends Error {
  constructor() {
    super('the spool is full');
  }
}

/** The byte budget all feeds' spools share. */
export class SpoolBudget {
  used = 0;
  constructor(readonly max: number) {}
}

interface Segment {
  startSeq: number;
  path: string;
  /** Durable records in it. */
  count: number;
  /** Durable bytes (the next frame is written here). */
  size: number;
}

export interface SpoolBatch {
  key: string;
  from: number;
  to: number;
  /** The records from..to, one JSON text each. */
  lines: Buffer[];
  bytes: number;
}

/** Told once per staged record: undefined once it is durable, else why it was not kept. */
export type DurableCallback = (error: unknown) => void;

/**
 * The appends of one write: they share one pwrite, one fdatasync and one `written` promise (callbacks
 * rather than a promise per record for the fsync: a flood stages thousands a second).
 */
class Group {
  readonly frames: Buffer[] = [];
  bytes = 0;
  readonly callbacks: DurableCallback[] = [];
  /** true once written, false when the write failed; never rejects. */
  readonly written: Promise<boolean>;
  private settle!: (ok: boolean) => void;

  constructor() {
    this.written = new Promise((res) => (this.settle = res));
  }

  resolveWritten(): void {
    this.settle(true);
  }

  resolveDurable(): void {
    for (const cb of this.callbacks) cb(undefined);
  }

  fail(e: unknown): void {
    this.settle(false);
    for (const cb of this.callbacks) cb(e);
  }
}

const NOT_WRITTEN = Promise.resolve(false);

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `name` in `dir` with `text`, durably: a crash leaves the old or the new content, never a mix. */
function writeAtomicSync(dir: string, name: string, text: string): void {
  const tmp = join(dir, `${name}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    const buf = Buffer.from(text);
    let off = 0;
    // writeSync may write less than asked (a full disk mid-write): loop on the count it returns.
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
  fsyncDir(dir);
}

/** The same without blocking the event loop (the uploader's progress files, written per batch). */
async function writeAtomic(dir: string, name: string, text: string): Promise<void> {
  const tmp = join(dir, `${name}.tmp`);
  const fh = await open(tmp, 'w', 0o600);
  try {
    const buf = Buffer.from(text);
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await fh.write(buf, off, buf.length - off, off);
      if (bytesWritten <= 0) throw new Error(`short write to ${tmp}`);
      off += bytesWritten;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, join(dir, name));
  await fsyncDirAsync(dir);
}

async function fsyncDirAsync(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Scans a segment's frames: how many whole, valid ones and where they end. */
function scanSegment(path: string): { count: number; size: number; fileSize: number } {
  const data = readFileSync(path);
  let off = 0;
  let count = 0;
  while (off + FRAME_HEADER <= data.length) {
    const len = data.readUInt32LE(off);
    if (len > MAX_PAYLOAD || off + FRAME_HEADER + len > data.length) break;
    const payload = data.subarray(off + FRAME_HEADER, off + FRAME_HEADER + len);
    if (crc32(payload) !== data.readUInt32LE(off + 4)) break;
    off += FRAME_HEADER + len;
    count++;
  }
  return { count, size: off, fileSize: data.length };
}

export interface SpoolOptions {
  /** The spool root (shared by all feeds of a sensor). */
  root: string;
  /** The feed id; names the directory under the root. */
  feed: string;
  spoolId: string;
  segmentBytes: number;
  budget: SpoolBudget;
}

/** One feed's queue. Open with Spool.open; append from listeners, read batches from the uploader. */
export class Spool {
  private readonly dir: string;
  private segments: Segment[] = [];
  private acked = 0;
  private inflight: { key: string; from: number; to: number } | undefined;
  /** The last durable sequence number. */
  private durableSeq = 0;
  private fh: FileHandle | undefined;
  /** Appends waiting for the next write. */
  private pending: Group | undefined;
  private writing = false;
  /** Written to the current segment and not yet fsynced, oldest first. */
  private unsynced: Group[] = [];
  private unsyncedBytes = 0;
  /** Bytes written to the current segment (its durable size plus what is unsynced). */
  private writtenSize = 0;
  /** The fdatasync loop, while it runs. */
  private syncing: Promise<void> | undefined;
  /** When the last fdatasync started (performance.now()). */
  private lastSyncAt = -Infinity;
  /** fdatasyncs done on this feed's segments since the spool was opened. */
  syncs = 0;
  /** A write failed on the current segment: the next write starts a new one (its pages are suspect). */
  private sealCurrent = false;
  private readonly waiters = new Set<() => void>();
  /** Bytes the spool had cut off as torn or damaged when it was opened. */
  repairedBytes = 0;

  private constructor(private readonly o: SpoolOptions) {
    this.dir = join(o.root, o.feed);
  }

  static async open(o: SpoolOptions): Promise<Spool> {
    const s = new Spool(o);
    await s.load();
    return s;
  }

  private async load(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    try {
      this.acked = Number(readFileSync(join(this.dir, 'acked'), 'utf8').trim()) || 0;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    try {
      const v = JSON.parse(readFileSync(join(this.dir, 'inflight'), 'utf8')) as { key: string; from: number; to: number };
      if (v.to > this.acked) this.inflight = v;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const names = readdirSync(this.dir)
      .map((n) => SEG_RE.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ startSeq: Number(m[1]), path: join(this.dir, m[0]) }))
      .sort((a, b) => a.startSeq - b.startSeq);
    for (const [i, n] of names.entries()) {
      const scan = scanSegment(n.path);
      if (scan.size < scan.fileSize) {
        // A torn tail (the crash came mid-append, before its fsync acknowledged anything): cut it off
        // so the next append is not written after garbage. In an older segment it is damage.
        this.repairedBytes += scan.fileSize - scan.size;
        const fh = await open(n.path, 'r+');
        try {
          await fh.truncate(scan.size);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      const seg: Segment = { startSeq: n.startSeq, path: n.path, count: scan.count, size: scan.size };
      // A segment wholly before the next one's start cannot overlap it; damage can only shorten it.
      const next = names[i + 1];
      if (next && seg.startSeq + seg.count > next.startSeq) seg.count = next.startSeq - seg.startSeq;
      this.segments.push(seg);
      this.o.budget.used += seg.size;
    }
    const last = this.segments.at(-1);
    this.durableSeq = last ? last.startSeq + last.count - 1 : this.acked;
    if (this.durableSeq < this.acked) this.durableSeq = this.acked;
    this.writtenSize = last?.size ?? 0;
    await this.dropUploaded();
  }

  /** Records spooled and not yet stored by the server. */
  get depth(): number {
    return this.durableSeq - this.acked;
  }

  get bytes(): number {
    return this.segments.reduce((n, s) => n + s.size, 0);
  }

  /**
   * Appends one record; resolves once it is on disk (fsynced). Concurrent appends share one write and
   * one fsync. Rejects with SpoolFull when the budget is used up, or with the write's error.
   */
  append(payload: Buffer): Promise<void> {
    return new Promise((resolve, reject) => void this.stage(payload, (e) => (e === undefined ? resolve() : reject(e))));
  }

  /**
   * Appends one record in the two steps the spool's comment describes: the promise resolves true once
   * it is written (false: not kept), and `onDurable` is told once it is fsynced or why it was not kept
   * (SpoolFull when the budget is used up). Appends made while a write runs share the next one.
   */
  stage(payload: Buffer, onDurable: DurableCallback): Promise<boolean> {
    const size = FRAME_HEADER + payload.length;
    if (this.o.budget.used + size > this.o.budget.max) {
      queueMicrotask(() => onDurable(new SpoolFull()));
      return NOT_WRITTEN;
    }
    this.o.budget.used += size;
    const header = Buffer.allocUnsafe(FRAME_HEADER);
    header.writeUInt32LE(payload.length, 0);
    header.writeUInt32LE(crc32(payload), 4);
    const g = (this.pending ??= new Group());
    g.frames.push(header, payload);
    g.callbacks.push(onDurable);
    g.bytes += size;
    if (!this.writing) void this.writeLoop();
    return g.written;
  }

  /** Writes the pending appends, one group at a time, while fdatasyncs of earlier ones run. */
  private async writeLoop(): Promise<void> {
    this.writing = true;
    // The appends made in this turn of the event loop share the write.
    await new Promise((r) => setImmediate(r));
    while (this.pending) {
      // A slow disk: wait for the fdatasync in progress rather than widen what a machine crash loses.
      while (this.unsyncedBytes >= MAX_UNSYNCED && this.syncing) await this.syncing;
      const g = this.pending;
      this.pending = undefined;
      let seg: Segment | undefined;
      try {
        seg = await this.writableSegment();
        const at = this.writtenSize;
        const buf = Buffer.concat(g.frames, g.bytes);
        // A synchronous pwrite on the event loop: it copies a few kilobytes into the page cache, some
        // ten microseconds. Handing it to another thread (the thread pool, or a writer thread of the
        // spool's own) adds a hop there and back to every write, and the connections waiting for
        // their answers wait for that hop too; on a loaded machine the other thread waits to be
        // scheduled, which costs more than the write. Nothing in umbra holds the file meanwhile; the
        // fdatasync, which waits for the disk, stays on the thread pool, and MAX_UNSYNCED bounds the
        // dirty data behind it.
        const fd = this.fh!.fd;
        let off = 0;
        while (off < buf.length) {
          const n = writeSync(fd, buf, off, buf.length - off, at + off);
          if (n <= 0) throw new Error(`short write to ${seg.path}`);
          off += n;
        }
        this.writtenSize = at + g.bytes;
        this.unsynced.push(g);
        this.unsyncedBytes += g.bytes;
        g.resolveWritten();
        this.syncing ??= this.syncLoop();
      } catch (e) {
        this.o.budget.used -= g.bytes;
        // The segment's pages past what is written are suspect: the next write starts a new segment.
        this.sealCurrent = true;
        if (seg && this.fh) await this.fh.truncate(this.writtenSize).catch(() => {});
        g.fail(e);
      }
    }
    this.writing = false;
  }

  /** fdatasyncs until every written group is durable; each call covers all groups written before it. */
  private async syncLoop(): Promise<void> {
    while (this.unsynced.length > 0) {
      // In a loop: a timer may fire up to a millisecond early (the event loop's clock is whole milliseconds).
      for (let gap = this.lastSyncAt + SYNC_GAP_MS - performance.now(); gap > 0 && this.unsyncedBytes < MAX_UNSYNCED / 2; ) {
        await new Promise((r) => setTimeout(r, Math.ceil(gap)));
        gap = this.lastSyncAt + SYNC_GAP_MS - performance.now();
      }
      this.lastSyncAt = performance.now();
      this.syncs++;
      const groups = this.unsynced.splice(0);
      const upto = this.writtenSize;
      const seg = this.segments.at(-1)!;
      let bytes = 0;
      let count = 0;
      for (const g of groups) {
        bytes += g.bytes;
        count += g.callbacks.length;
      }
      try {
        // The callback form, on the fd: fs/promises builds a heavier request object per call, and
        // this runs once per group commit (hundreds a second under load). No close runs meanwhile:
        // the writer waits for this loop to end before it closes the file.
        const fd = this.fh!.fd;
        await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
        seg.size = upto;
        seg.count += count;
        this.durableSeq += count;
        this.unsyncedBytes -= bytes;
        for (const g of groups) g.resolveDurable();
        for (const w of [...this.waiters]) w();
      } catch (e) {
        // After a failed fdatasync the kernel may have dropped the pages: nothing written since the
        // last good one can be trusted. The writer waits for this loop to end before it writes again
        // (sealCurrent: a new segment).
        const failed = [...groups, ...this.unsynced.splice(0)];
        for (const g of failed) this.o.budget.used -= g.bytes;
        this.unsyncedBytes = 0;
        this.sealCurrent = true;
        this.writtenSize = seg.size;
        await this.fh?.truncate(seg.size).catch(() => {});
        for (const g of failed) g.fail(e);
      }
    }
    this.syncing = undefined;
  }

  /** The segment appends go to, starting a new one when the current one is full or suspect. */
  private async writableSegment(): Promise<Segment> {
    const cur = this.segments.at(-1);
    if (cur && this.fh && !this.sealCurrent && this.writtenSize < this.o.segmentBytes) return cur;
    // The fdatasyncs pending on the current file finish before it is closed.
    while (this.syncing) await this.syncing;
    if (this.fh) await this.fh.close().catch(() => {});
    this.fh = undefined;
    if (cur && !this.sealCurrent && cur.size < this.o.segmentBytes) {
      // Reopened after a restart: keep appending to the last segment.
      this.fh = await open(cur.path, 'r+');
      this.writtenSize = cur.size;
      return cur;
    }
    this.sealCurrent = false;
    const startSeq = this.durableSeq + 1;
    const path = join(this.dir, `${String(startSeq).padStart(16, '0')}.seg`);
    this.fh = await open(path, 'wx', 0o600);
    // The new name must survive a crash too, or its records would vanish with it.
    await fsyncDirAsync(this.dir);
    const seg: Segment = { startSeq, path, count: 0, size: 0 };
    this.segments.push(seg);
    this.writtenSize = 0;
    return seg;
  }

  /** Resolves when a record is appended (or at once when records wait). */
  waitForRecords(signal?: AbortSignal): Promise<void> {
    if (this.depth > 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * The next batch to upload: the one in flight when the sensor stopped (same records, same key), else
   * the oldest records not stored yet, made durable as in flight before it is returned.
   * undefined when nothing waits.
   */
  async nextBatch(maxRecords: number, maxBytes: number): Promise<SpoolBatch | undefined> {
    if (this.inflight) {
      const { key, from, to } = this.inflight;
      const lines = await this.read(from, to - from + 1, Number.POSITIVE_INFINITY);
      if (lines.length === to - from + 1) return { key, from, to, lines, bytes: lines.reduce((n, l) => n + l.length, 0) };
      // The range is no longer on disk whole (damage): send what is there under a key of its own.
      this.inflight = undefined;
    }
    if (this.depth === 0) return undefined;
    const from = this.acked + 1;
    const lines = await this.read(from, Math.min(maxRecords, this.depth), maxBytes);
    if (lines.length === 0) return undefined;
    const to = from + lines.length - 1;
    const key = `${this.o.spoolId}.${this.o.feed}.${from}-${to}`;
    this.inflight = { key, from, to };
    await writeAtomic(this.dir, 'inflight', JSON.stringify(this.inflight));
    return { key, from, to, lines, bytes: lines.reduce((n, l) => n + l.length, 0) };
  }

  /** Where the last read ended, so the next batch is read from there, not from the segment's start. */
  private cursor: { path: string; seq: number; offset: number } | undefined;

  /** Reads up to `max` records from `from`, within one segment, at least one whatever its size. */
  private async read(from: number, max: number, maxBytes: number): Promise<Buffer[]> {
    const seg = this.segments.find((s) => from >= s.startSeq && from < s.startSeq + s.count);
    if (!seg) return [];
    const c = this.cursor;
    let seq = c && c.path === seg.path && c.seq <= from ? c.seq : seg.startSeq;
    let pos = c && c.path === seg.path && c.seq <= from ? c.offset : 0;
    const fh = await open(seg.path, 'r');
    try {
      const readAt = async (at: number, n: number): Promise<Buffer> => {
        const buf = Buffer.allocUnsafe(n);
        let got = 0;
        while (got < n) {
          const { bytesRead } = await fh.read(buf, got, n - got, at + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return buf.subarray(0, got);
      };
      const out: Buffer[] = [];
      let bytes = 0;
      while (out.length < max && pos + FRAME_HEADER <= seg.size) {
        // One read for many frames: as many bytes as the batch may hold, or the rest of the segment.
        const want = Number.isFinite(maxBytes) ? Math.min(seg.size - pos, maxBytes + FRAME_HEADER * (max - out.length)) : seg.size - pos;
        let data = await readAt(pos, want);
        let off = 0;
        let progressed = false;
        for (;;) {
          if (out.length >= max || off + FRAME_HEADER > data.length) break;
          const len = data.readUInt32LE(off);
          if (off + FRAME_HEADER + len > data.length) {
            if (off > 0 || len > MAX_PAYLOAD) break;
            // A single frame larger than the chunk: read it whole.
            data = await readAt(pos, FRAME_HEADER + len);
            if (FRAME_HEADER + len > data.length) break;
          }
          const payload = data.subarray(off + FRAME_HEADER, off + FRAME_HEADER + len);
          if (crc32(payload) !== data.readUInt32LE(off + 4)) {
            // Damage inside durable data: nothing past it in this segment can be trusted.
            return out;
          }
          if (seq >= from) {
            if (out.length > 0 && bytes + len > maxBytes) {
              this.cursor = { path: seg.path, seq, offset: pos + off };
              return out;
            }
            out.push(Buffer.from(payload));
            bytes += len;
          }
          off += FRAME_HEADER + len;
          seq++;
          progressed = true;
        }
        pos += off;
        this.cursor = { path: seg.path, seq, offset: pos };
        if (!progressed) break;
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  /** The server stored the batch: move past it and delete the segments it finished. */
  async ack(batch: SpoolBatch): Promise<void> {
    this.acked = Math.max(this.acked, batch.to);
    await writeAtomic(this.dir, 'acked', String(this.acked));
    this.inflight = undefined;
    try {
      await unlink(join(this.dir, 'inflight'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await this.dropUploaded();
  }

  /** Deletes segments whose every record the server has (never the one appends go to). */
  private async dropUploaded(): Promise<void> {
    while (this.segments.length > 1) {
      const s = this.segments[0]!;
      if (s.startSeq + s.count - 1 > this.acked) break;
      await unlink(s.path);
      this.o.budget.used -= s.size;
      this.segments.shift();
    }
  }

  async close(): Promise<void> {
    while (this.writing || this.syncing) await new Promise((r) => setImmediate(r));
    await this.fh?.close().catch(() => {});
    this.fh = undefined;
  }
}

/** The spool root: made if missing, locked to this process, with its id (made on first use). */
export function openSpoolRoot(root: string): { spoolId: string; release: () => void } {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const lock = join(root, 'lock');
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeFileSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      const pid = Number(readFileSync(lock, 'utf8').trim());
      if (pid > 0 && pid !== process.pid && alive(pid))
        throw new Error(`the spool ${root} is in use by another sensor (pid ${pid}); give each sensor a spool of its own`);
      // The holder died (a crash, a kill -9): its lock goes.
      unlinkSync(lock);
    }
  }
  let spoolId: string;
  try {
    spoolId = readFileSync(join(root, 'spool-id'), 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    spoolId = randomBytes(9).toString('base64url');
    writeAtomicSync(root, 'spool-id', spoolId);
  }
  if (!/^[A-Za-z0-9_-]{6,64}$/.test(spoolId)) throw new Error(`${join(root, 'spool-id')} is damaged; remove it only if the spool is empty`);
  return {
    spoolId,
    release: () => {
      try {
        if (Number(readFileSync(lock, 'utf8').trim()) === process.pid) unlinkSync(lock);
      } catch {
        // Already gone.
      }
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
