import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  copyFile,
  constants as fsConstants,
  link,
  mkdir,
  open,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Clock } from '../../lib/clock.ts';
import { sweepOld } from '../../modules/exports/export-job.ts';
import {
  assertValidKey,
  isValidKey,
  type ObjectInfo,
  type ObjectMeta,
  type ObjectStore,
  type StoredObject,
} from '../../modules/exports/object-store.ts';

export interface FsObjectStoreOptions {
  /** The service data dir; objects live under `{dataDir}/exports/`. */
  dataDir: string;
  /** The age of temp files (sweepTemp). */
  clock: Clock;
}

interface Sidecar extends ObjectMeta {
  size: number;
  /**
   * Inode of the data file the sidecar describes (decimal). put() renames a new file in, so a reader
   * holding the file open knows the sidecar is that file's only when the inodes match. Absent in
   * sidecars written before it was recorded: such a file is hashed once and its sidecar rewritten.
   */
  ino?: string;
}

// Dot-directories cannot collide with keys: a key starts with [a-z0-9_].
const TMP = '.tmp';
const META = '.meta';

/**
 * Export files on the local disk. put() writes a temp file, fsyncs it and renames it into place, so an
 * object is either absent, the old one or the whole new one, even across a crash. A sidecar under
 * `.meta/` holds checksum, row count and the data file's inode; it is replaced right after the data.
 * Readers open the data file first and trust the sidecar only when it names that file's inode (a
 * crash or a put between the two renames leaves it naming another), else they hash what they opened.
 * It has no presignGet: customers download through umbra's route (DownloadSigner URLs), which reads here.
 */
export class FsObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(private readonly opts: FsObjectStoreOptions) {
    this.root = join(opts.dataDir, 'exports');
  }

  putFile(key: string, path: string, meta: ObjectMeta): Promise<ObjectInfo> {
    return this.write(key, { path }, meta);
  }

  putBytes(key: string, bytes: Uint8Array, meta: ObjectMeta): Promise<ObjectInfo> {
    return this.write(key, { bytes }, meta);
  }

  private async write(key: string, body: Body, meta: ObjectMeta): Promise<ObjectInfo> {
    assertValidKey(key);
    await mkdir(join(this.root, TMP), { recursive: true });
    const tmp = join(this.root, TMP, `${randomBytes(8).toString('hex')}.part`);
    try {
      const { size, sha256, ino } = await writeSynced(tmp, body);
      // The caller's checksum is what clients will be told; refuse to store bytes that do not match it.
      if (sha256 !== meta.sha256) throw new Error(`checksum mismatch for ${key}: got ${sha256}, expected ${meta.sha256}`);
      // rename() keeps the inode, so the sidecar can name the file it describes before it is in place.
      const sidecar: Sidecar = { sha256, rows: meta.rows, size, ino, ...(meta.contentType ? { contentType: meta.contentType } : {}) };
      const metaTmp = `${tmp}.json`;
      await writeSynced(metaTmp, { bytes: Buffer.from(JSON.stringify(sidecar)) });
      const file = this.file(key);
      await mkdir(dirname(file), { recursive: true });
      await rename(tmp, file);
      await mkdir(dirname(this.metaFile(key)), { recursive: true });
      await rename(metaTmp, this.metaFile(key));
      await syncDir(dirname(file));
      return infoOf(key, sidecar);
    } finally {
      await rm(tmp, { force: true });
      await rm(`${tmp}.json`, { force: true });
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const opened = await this.openObject(key);
    if (!opened) return undefined;
    await opened.fh.close();
    return opened.info;
  }

  async read(key: string): Promise<StoredObject | undefined> {
    const opened = await this.openObject(key);
    if (!opened) return undefined;
    // Positional reads of the handle opened before the sidecar was read: these bytes, whatever a put does.
    return { info: opened.info, body: opened.fh.createReadStream({ start: 0, highWaterMark: 1 << 20 }) };
  }

  /**
   * Opens the data file, then finds the metadata of exactly that file: the sidecar when it names the
   * file's inode and size, else the SHA-256 of the opened bytes (a crash or a concurrent put between
   * the data and sidecar renames; or a sidecar from before inodes were recorded, which is rewritten).
   */
  private async openObject(key: string): Promise<{ fh: FileHandle; info: ObjectInfo } | undefined> {
    if (!isValidKey(key)) return undefined;
    let fh: FileHandle;
    try {
      fh = await open(this.file(key), 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') return undefined;
      throw e;
    }
    try {
      const st = await fh.stat({ bigint: true });
      // A key prefix is a directory here, never an object.
      if (!st.isFile()) {
        await fh.close();
        return undefined;
      }
      const size = Number(st.size);
      const ino = String(st.ino);
      const side = await readFile(this.metaFile(key), 'utf8').then(
        (t) => JSON.parse(t) as Sidecar,
        () => undefined,
      );
      if (side && side.ino === ino && side.size === size) return { fh, info: infoOf(key, side) };
      const sha256 = await hashHandle(fh);
      // Same bytes, written before sidecars named inodes: record it, so later reads need not hash.
      if (side && side.ino === undefined && side.size === size && side.sha256 === sha256) {
        const upgraded: Sidecar = { ...side, ino };
        await this.rewriteSidecar(key, upgraded).catch(() => {});
        return { fh, info: infoOf(key, upgraded) };
      }
      return { fh, info: { key, size, sha256, rows: -1 } };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /**
   * Replaces a sidecar by rename. Should a put slip in between, the sidecar names an inode that is no
   * longer the data file's, which readers then hash: never wrong, only slower.
   */
  private async rewriteSidecar(key: string, side: Sidecar): Promise<void> {
    await mkdir(join(this.root, TMP), { recursive: true });
    const tmp = join(this.root, TMP, `${randomBytes(8).toString('hex')}.part.json`);
    try {
      await writeFile(tmp, JSON.stringify(side), { flag: 'wx' });
      await rename(tmp, this.metaFile(key));
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async get(key: string): Promise<Readable | undefined> {
    if (!isValidKey(key)) return undefined;
    try {
      const fh = await open(this.file(key), 'r');
      if (!(await fh.stat()).isFile()) {
        await fh.close();
        return undefined;
      }
      return fh.createReadStream();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await rm(this.file(key), { force: true });
    await rm(this.metaFile(key), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let names: import('node:fs').Dirent[];
      try {
        names = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const d of names) {
        if (rel === '' && d.name.startsWith('.')) continue;
        const k = rel === '' ? d.name : `${rel}/${d.name}`;
        // Only descend where the prefix can still match.
        if (!k.startsWith(prefix) && !prefix.startsWith(`${k}/`)) continue;
        if (d.isDirectory()) await walk(join(dir, d.name), k);
        else if (d.isFile() && k.startsWith(prefix) && isValidKey(k)) out.push(k);
      }
    };
    await walk(this.root, '');
    return out.sort();
  }

  /**
   * Removes temp files of puts cut short by a crash (a live put takes seconds, so an hour-old temp
   * file is dead). For the composition root to call at startup; they are never visible as objects.
   */
  async sweepTemp(olderThanMs = 3_600_000): Promise<number> {
    return sweepOld(join(this.root, TMP), this.opts.clock.now() - olderThanMs);
  }

  /**
   * A hard link: no bytes move, and since put() renames a new file over the key instead of writing in
   * place, the link keeps the bytes it was made from. A copy where links are impossible (another
   * file system).
   */
  async copyToFile(key: string, dest: string): Promise<boolean> {
    if (!isValidKey(key)) return false;
    const file = this.file(key);
    try {
      if (!(await stat(file)).isFile()) return false;
      await link(file, dest);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw e;
      await copyFile(file, dest, fsConstants.COPYFILE_EXCL);
    }
    return true;
  }

  /** Local path of an object, for a download route that streams it with sendfile. */
  pathOf(key: string): string {
    assertValidKey(key);
    return this.file(key);
  }

  private file(key: string): string {
    return join(this.root, ...key.split('/'));
  }

  private metaFile(key: string): string {
    return `${join(this.root, META, ...key.split('/'))}.json`;
  }
}

/** What a put stores: a local file, streamed, or bytes in memory. */
type Body = { path: string } | { bytes: Uint8Array };

const infoOf = (key: string, side: Sidecar): ObjectInfo => ({
  key,
  size: side.size,
  sha256: side.sha256,
  rows: side.rows,
  ...(side.contentType ? { contentType: side.contentType } : {}),
});

async function writeSynced(target: string, body: Body): Promise<{ size: number; sha256: string; ino: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const out = await open(target, 'wx');
  try {
    if ('path' in body) {
      for await (const chunk of createReadStream(body.path, { highWaterMark: 1 << 20 })) {
        const buf = chunk as Buffer;
        hash.update(buf);
        size += buf.length;
        await writeAll(out, buf);
      }
    } else {
      hash.update(body.bytes);
      size = body.bytes.length;
      await writeAll(out, body.bytes);
    }
    await out.sync();
    return { size, sha256: hash.digest('hex'), ino: String((await out.stat({ bigint: true })).ino) };
  } finally {
    await out.close();
  }
}

/** FileHandle.write may write less than asked; loop until all bytes are out. */
async function writeAll(fh: import('node:fs/promises').FileHandle, buf: Uint8Array): Promise<void> {
  for (let off = 0; off < buf.length; ) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
}

/** SHA-256 of an open file by positional reads (the handle's position stays at 0 for a later stream). */
async function hashHandle(fh: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let pos = 0; ; ) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) return hash.digest('hex');
    hash.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
}

/** Makes the rename itself durable. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
