import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, constants as fsConstants, link, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Clock } from '../../lib/clock.ts';
import { sweepOld } from '../../modules/exports/export-job.ts';
import { assertValidKey, isValidKey, type ObjectInfo, type ObjectMeta, type ObjectStore, type SigningSecret, type VerifyResult } from '../../modules/exports/object-store.ts';

export interface FsObjectStoreOptions {
  /** The service data dir; objects live under `{dataDir}/exports/`. */
  dataDir: string;
  /** Current secret first, then previous ones still accepted for URLs already issued. */
  secrets: readonly SigningSecret[];
  clock: Clock;
  /** Path of the route that serves downloads (wired by the HTTP layer). */
  downloadPath?: string;
}

interface Sidecar extends ObjectMeta {
  size: number;
}

// Dot-directories cannot collide with keys: a key starts with [a-z0-9_].
const TMP = '.tmp';
const META = '.meta';

/**
 * Export files on the local disk. put() writes a temp file, fsyncs it and renames it into place, so an
 * object is either absent, the old one or the whole new one, even across a crash. A sidecar under
 * `.meta/` holds checksum and row count; it is replaced right after the data.
 */
export class FsObjectStore implements ObjectStore {
  private readonly root: string;
  private readonly downloadPath: string;

  constructor(private readonly opts: FsObjectStoreOptions) {
    if (opts.secrets.length === 0) throw new Error('FsObjectStore needs at least one signing secret');
    this.root = join(opts.dataDir, 'exports');
    this.downloadPath = opts.downloadPath ?? '/downloads';
  }

  async put(key: string, body: string | Uint8Array, meta: ObjectMeta): Promise<ObjectInfo> {
    assertValidKey(key);
    await mkdir(join(this.root, TMP), { recursive: true });
    const tmp = join(this.root, TMP, `${randomBytes(8).toString('hex')}.part`);
    try {
      const { size, sha256 } = await writeSynced(tmp, body);
      // The caller's checksum is what clients will be told; refuse to store bytes that do not match it.
      if (sha256 !== meta.sha256) throw new Error(`checksum mismatch for ${key}: got ${sha256}, expected ${meta.sha256}`);
      const sidecar: Sidecar = { sha256, rows: meta.rows, size, ...(meta.contentType ? { contentType: meta.contentType } : {}) };
      const metaTmp = `${tmp}.json`;
      await writeSynced(metaTmp, Buffer.from(JSON.stringify(sidecar)));
      const file = this.file(key);
      await mkdir(dirname(file), { recursive: true });
      await rename(tmp, file);
      await mkdir(dirname(this.metaFile(key)), { recursive: true });
      await rename(metaTmp, this.metaFile(key));
      await syncDir(dirname(file));
      return { key, ...sidecar };
    } finally {
      await rm(tmp, { force: true });
      await rm(`${tmp}.json`, { force: true });
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    if (!isValidKey(key)) return undefined;
    let size: number;
    try {
      const st = await stat(this.file(key));
      // A key prefix is a directory here, never an object.
      if (!st.isFile()) return undefined;
      size = st.size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    const side = await readFile(this.metaFile(key), 'utf8').then((t) => JSON.parse(t) as Sidecar, () => undefined);
    // A crash between the two renames leaves an older sidecar: trust the bytes, not it.
    if (side && side.size === size) return { key, ...side };
    return { key, size, sha256: await hashFile(this.file(key)), rows: side?.rows ?? -1 };
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

  async presign(key: string, ttlSeconds: number): Promise<string> {
    assertValidKey(key);
    const current = this.opts.secrets[0]!;
    const expires = Math.floor(this.opts.clock.now() / 1000) + ttlSeconds;
    const q = new URLSearchParams({ key, expires: String(expires), kid: current.id, sig: sign(current.secret, current.id, key, expires) });
    return `${this.downloadPath}?${q.toString()}`;
  }

  verify(query: URLSearchParams | Record<string, string | undefined>): VerifyResult {
    const get = (n: string): string | undefined => (query instanceof URLSearchParams ? (query.get(n) ?? undefined) : query[n]);
    const key = get('key');
    const exp = get('expires');
    const kid = get('kid');
    const sig = get('sig');
    if (!key || !exp || !kid || !sig || !/^\d{1,12}$/.test(exp) || !isValidKey(key)) return { ok: false, reason: 'MALFORMED' };
    const secret = this.opts.secrets.find((s) => s.id === kid);
    if (!secret) return { ok: false, reason: 'UNKNOWN_KEY_ID' };
    const expires = Number(exp);
    const want = Buffer.from(sign(secret.secret, kid, key, expires));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'BAD_SIGNATURE' };
    // Checked after the signature so a forged expiry never reads as merely "expired".
    if (this.opts.clock.now() / 1000 > expires) return { ok: false, reason: 'EXPIRED' };
    return { ok: true, key };
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
    return join(this.root, META, ...key.split('/')) + '.json';
  }
}

/** The key id is signed too, so a signature cannot be replayed under another secret's id. */
function sign(secret: string, kid: string, key: string, expires: number): string {
  return createHmac('sha256', secret).update(`${kid}\n${key}\n${expires}`).digest('base64url');
}

async function writeSynced(target: string, body: string | Uint8Array): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const out = await open(target, 'wx');
  try {
    if (typeof body === 'string') {
      for await (const chunk of createReadStream(body, { highWaterMark: 1 << 20 })) {
        const buf = chunk as Buffer;
        hash.update(buf);
        size += buf.length;
        await writeAll(out, buf);
      }
    } else {
      hash.update(body);
      size = body.length;
      await writeAll(out, body);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  return { size, sha256: hash.digest('hex') };
}

/** FileHandle.write may write less than asked; loop until all bytes are out. */
async function writeAll(fh: import('node:fs/promises').FileHandle, buf: Uint8Array): Promise<void> {
  for (let off = 0; off < buf.length; ) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
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
