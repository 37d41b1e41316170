import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UmbraClient } from './client.js';
import { apiError, ConnectionError, IntegrityError, problemOf } from './errors.js';
import type { FeedId, SnapshotMeta } from './feeds.js';
import { RETRYABLE_STATUS } from './retry.js';

export interface DownloadOptions {
  /** Called as bytes arrive: bytes on disk so far (resumed ones included) and the expected total. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Resume from `FILE.part` left by an interrupted download (default true): its bytes are hashed
   * and the rest asked for with `Range`; a storage host that ignores ranges sends it all again.
   */
  resume?: boolean;
  signal?: AbortSignal;
}

export interface DownloadResult {
  file: string;
  size: number;
  sha256: string;
  /** Bytes that were already on disk from an earlier attempt. */
  resumedFrom: number;
  meta: SnapshotMeta;
}

/**
 * Downloads a snapshot: metadata first (size and SHA-256), then the 307 from umbra, then the presigned
 * URL fetched WITHOUT the API key (it is a storage host's URL, which needs none and must not see it).
 * Bytes go to `FILE.part`, renamed to FILE only once size and SHA-256 match the metadata; a mismatch
 * deletes the part file and throws IntegrityError. A failure mid-body keeps the part file and, within
 * the retry recipe, resumes it with a new presigned URL.
 */
export async function downloadSnapshot(
  client: UmbraClient,
  feed: FeedId,
  id: string,
  file: string,
  options: DownloadOptions,
): Promise<DownloadResult> {
  const { signal } = options;
  const meta = await client.snapshotMeta(feed, id, signal);
  const part = `${file}.part`;
  if (options.resume === false) await rm(part, { force: true });
  for (let attempt = 1; ; attempt++) {
    const url = await client.snapshotUrl(feed, id, signal);
    let have = await sizeOf(part);
    if (have > meta.size) {
      await rm(part, { force: true });
      have = 0;
    }
    let res: Response;
    try {
      // Only the user agent: no x-api-key on the storage host's request.
      const headers: Record<string, string> = { 'user-agent': client.userAgent };
      if (have > 0) headers.range = `bytes=${have}-`;
      res = await fetch(url, { headers, signal, redirect: 'follow' });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (await client.backoff(attempt, undefined, undefined, { method: 'GET', path: url }, signal)) continue;
      throw new ConnectionError(`download of ${feed} ${id}: ${(e as Error).message}`, e, attempt);
    }
    if (res.status !== 200 && res.status !== 206) {
      const text = await res.text().catch(() => '');
      const err = apiError(res.status, problemOf(res.status, text, res.statusText), res.headers, attempt);
      if (
        RETRYABLE_STATUS.has(res.status) &&
        (await client.backoff(attempt, res.status, err.retryAfter, { method: 'GET', path: url }, signal))
      )
        continue;
      throw err;
    }
    const hash = createHash('sha256');
    let done = 0;
    let append = false;
    if (res.status === 206 && have > 0 && contentRangeStart(res.headers.get('content-range')) === have) {
      for await (const chunk of createReadStream(part)) hash.update(chunk as Buffer);
      done = have;
      append = true;
    } else if (res.status === 206) {
      // A range we did not ask for: start over.
      await res.body?.cancel();
      await rm(part, { force: true });
      continue;
    }
    const resumedFrom = append ? have : 0;
    options.onProgress?.(done, meta.size);
    try {
      const counted = async function* (body: AsyncIterable<Uint8Array>) {
        for await (const chunk of body) {
          hash.update(chunk);
          done += chunk.byteLength;
          options.onProgress?.(done, meta.size);
          yield chunk;
        }
      };
      await pipeline(
        Readable.fromWeb(res.body! as import('node:stream/web').ReadableStream<Uint8Array>),
        counted,
        createWriteStream(part, { flags: append ? 'a' : 'w' }),
      );
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      // The part file keeps what arrived; the next attempt asks for the rest.
      if (await client.backoff(attempt, undefined, undefined, { method: 'GET', path: url }, signal)) continue;
      throw new ConnectionError(`download of ${feed} ${id} broke off after ${done} bytes: ${(e as Error).message}`, e, attempt);
    }
    const sha256 = hash.digest('hex');
    if (done !== meta.size || sha256 !== meta.checksum) {
      await rm(part, { force: true });
      throw new IntegrityError(
        `download of ${feed} ${id} does not match its metadata: ${done} bytes with SHA-256 ${sha256}, expected ${meta.size} bytes with ${meta.checksum}`,
        { size: meta.size, sha256: meta.checksum },
        { size: done, sha256 },
      );
    }
    await rename(part, file);
    return { file, size: done, sha256, resumedFrom, meta };
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

function contentRangeStart(v: string | null): number | undefined {
  const m = v ? /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}
