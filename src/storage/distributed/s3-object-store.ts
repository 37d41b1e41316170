import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DEPENDENCY_UNAVAILABLE } from '../../errors.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import {
  assertValidKey,
  isSha256,
  isValidKey,
  type DownloadTarget,
  type ObjectInfo,
  type ObjectMeta,
  type ObjectStore,
  type StoredObject,
} from '../../modules/exports/object-store.ts';

export interface S3ObjectStoreOptions {
  bucket: string;
  /** Default us-east-1 (what most S3-compatible servers expect when they have no regions). */
  region?: string;
  /** An S3-compatible server (MinIO, Ceph, a test server); default AWS's endpoint of the region. */
  endpoint?: string;
  /** `{endpoint}/{bucket}/{key}` instead of `{bucket}.{endpoint}/{key}`: local servers without bucket DNS names. */
  forcePathStyle?: boolean;
  /**
   * Static credentials; default the SDK's chain (environment, profile, instance role). Download URLs are
   * valid only as long as the credentials that signed them: temporary ones (an instance role's, often
   * 1 to 6 hours) cut the 24-hour URLs short, so sign with long-lived keys.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Where umbra's objects live in the bucket, e.g. `exports/` (a trailing slash is added); default the root. */
  keyPrefix?: string;
  /**
   * The endpoint customers reach, when it is not the one nodes use (`http://minio:9000` inside, a
   * public name outside): download URLs are signed for this host. Default `endpoint`.
   */
  publicEndpoint?: string;
  /** The signing time of download URLs and the age of released objects; default the system clock. */
  clock?: Clock;
  timeouts?: {
    /** TCP (and TLS) connection, ms; default 3,000. */
    connectMs?: number;
    /** Request sent to response headers, for every call but uploads, ms; default 5,000. */
    requestMs?: number;
    /** The same for one upload request (a whole part, or a file smaller than a part), ms; default 120,000. */
    uploadMs?: number;
    /** A socket with nothing to read or write (a stalled body), ms; default 30,000. */
    idleMs?: number;
  };
  /** Attempts per call, first included (the SDK's standard retry: transient faults, backoff); default 3. */
  maxAttempts?: number;
  /** Multipart part size for putFile, bytes (at least 5 MiB, S3's minimum); default 8 MiB. */
  partSizeBytes?: number;
  /** The longest download URL presignGet issues, seconds; released bytes are kept that long plus an hour. Default 86,400. */
  maxUrlTtlSeconds?: number;
}

const DEFAULTS = { connectMs: 3_000, requestMs: 5_000, uploadMs: 120_000, idleMs: 30_000 };
const MIN_PART = 5 << 20;
const HOUR_MS = 3_600_000;
// Dot-prefixed: a logical key starts with [a-z0-9_], so neither area can collide with one.
const OBJECTS = '.objects/';
const RELEASED = '.released/';

/**
 * Export files in an S3 bucket (AWS or S3-compatible), laid out so that a download URL the store
 * presigns can only ever serve the bytes it was issued for, whatever later happens to the key:
 *
 * - the bytes live in a **content object** whose key holds their SHA-256,
 *   `{prefix}.objects/{dir of key}/{sha256}/{file name}` (user metadata `sha256`, `rows`, `type`), and
 *   content objects are never written with other bytes;
 * - the logical key (`{prefix}{feed}/latest/05_feed.parquet`, what the port and the catalog name) is an
 *   empty **pointer object** whose metadata (`sha256`, `rows`, `size`, `type`) names the content
 *   object. A put uploads the content object (S3 shows an object only once complete; a multipart
 *   upload only at CompleteMultipartUpload), then replaces the pointer in one PutObject;
 * - presignGet signs a plain GET of the content object (only the `host` header signed, so a `curl -L`
 *   follows it), from the key and checksum alone, without a request;
 * - bytes the pointer stops naming (a put of other bytes, a delete) are **released**: a marker
 *   `{prefix}.released/{same path}` records when, written before the pointer changes. sweepReleased()
 *   deletes a released content object once its marker is older than the longest URL plus an hour, so
 *   every URL issued while the bytes were named keeps working until it expires. A content object that
 *   no pointer names and no marker covers (a put cut short before its pointer) goes once it is that old.
 *
 * Every call has a connection and a response bound and a bounded number of attempts; what fails (no
 * answer, a refusal other than "no such object") is thrown as a DEPENDENCY_UNAVAILABLE error, which
 * the transports answer with 503.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly s3: S3Client;
  private readonly uploads: S3Client;
  private readonly signing: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly partSize: number;
  private readonly maxUrlTtlS: number;

  constructor(opts: S3ObjectStoreOptions) {
    this.bucket = opts.bucket;
    this.prefix = opts.keyPrefix ? `${opts.keyPrefix.replace(/\/+$/, '')}/` : '';
    if (this.prefix && !isValidKey(`${this.prefix}x`)) throw new Error(`invalid key prefix: ${JSON.stringify(opts.keyPrefix)}`);
    this.clock = opts.clock ?? systemClock;
    this.partSize = Math.max(MIN_PART, opts.partSizeBytes ?? 8 << 20);
    this.maxUrlTtlS = opts.maxUrlTtlSeconds ?? 86_400;
    const t = { ...DEFAULTS, ...opts.timeouts };
    const base = (requestMs: number, endpoint = opts.endpoint): S3ClientConfig => ({
      region: opts.region ?? 'us-east-1',
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: opts.forcePathStyle ?? false,
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      maxAttempts: opts.maxAttempts ?? 3,
      // Checksums only where S3 requires them: S3-compatible servers do not all know the newer
      // checksum headers or aws-chunked bodies, and every put is checked against its SHA-256 here.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: t.connectMs, requestTimeout: requestMs, throwOnRequestTimeout: true, socketTimeout: t.idleMs },
    });
    this.s3 = new S3Client(base(t.requestMs));
    // Uploads send a whole part before the answer, so their bound is longer.
    this.uploads = new S3Client(base(t.uploadMs));
    this.signing = opts.publicEndpoint ? new S3Client(base(t.requestMs, opts.publicEndpoint)) : this.s3;
  }

  async putFile(key: string, path: string, meta: ObjectMeta): Promise<ObjectInfo> {
    assertPut(key, meta);
    // A missing file fails here, before anything is sent.
    await stat(path);
    const hash = createHash('sha256');
    let size = 0;
    let got: string | undefined;
    let local: unknown;
    const expected = meta.sha256;
    // Hashed on the way out; on a mismatch the stream fails before its end, so the upload is never
    // completed (single PutObject never sent, multipart never completed) and no object appears.
    const body = Readable.from(
      (async function* () {
        try {
          for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
            hash.update(chunk as Buffer);
            size += (chunk as Buffer).length;
            yield chunk as Buffer;
          }
        } catch (e) {
          local = e;
          throw e;
        }
        got = hash.digest('hex');
        if (got !== expected) throw checksumMismatch(key, got, expected);
      })(),
    );
    const upload = new Upload({
      client: this.uploads,
      params: { Bucket: this.bucket, Key: this.contentKey(key, meta.sha256), Body: body, ...this.contentParams(meta) },
      partSize: this.partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (e) {
      // The mismatch, or the local file's own error (the disk's fault, not S3's), wins over whatever
      // aborting the multipart upload answered.
      if (got !== undefined && got !== expected) throw checksumMismatch(key, got, expected);
      if (local !== undefined) throw local;
      throw fault('upload', e);
    }
    return this.point(key, meta, size);
  }

  async putBytes(key: string, bytes: Uint8Array, meta: ObjectMeta): Promise<ObjectInfo> {
    assertPut(key, meta);
    const got = createHash('sha256').update(bytes).digest('hex');
    if (got !== meta.sha256) throw checksumMismatch(key, got, meta.sha256);
    await this.call('put', () =>
      this.uploads.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.contentKey(key, meta.sha256),
          Body: bytes,
          ContentLength: bytes.length,
          ...this.contentParams(meta),
        }),
      ),
    );
    return this.point(key, meta, bytes.length);
  }

  /** Makes `key` name the uploaded content object; the bytes it named before are released first. */
  private async point(key: string, meta: ObjectMeta, size: number): Promise<ObjectInfo> {
    const before = await this.head(key);
    if (before && before.sha256 !== meta.sha256) await this.release(key, before.sha256);
    const info: ObjectInfo = {
      key,
      size,
      sha256: meta.sha256,
      rows: meta.rows,
      ...(meta.contentType ? { contentType: meta.contentType } : {}),
    };
    await this.call('put', () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.prefix + key,
          Body: new Uint8Array(0),
          ContentLength: 0,
          Metadata: {
            sha256: info.sha256,
            rows: String(info.rows),
            size: String(size),
            ...(meta.contentType ? { type: meta.contentType } : {}),
          },
        }),
      ),
    );
    return info;
  }

  /** Records when `key` stopped naming these bytes; their content object stays for URLs already issued. */
  private async release(key: string, sha256: string): Promise<void> {
    await this.call('put', () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.prefix + RELEASED + contentPath(key, sha256),
          Body: new Uint8Array(0),
          ContentLength: 0,
        }),
      ),
    );
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    if (!isValidKey(key)) return undefined;
    const out = await this.call('head', () => this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })), true);
    return out && infoOf(key, out.Metadata, Number(out.Metadata?.size));
  }

  async read(key: string): Promise<StoredObject | undefined> {
    const pointer = await this.head(key);
    if (!pointer) return undefined;
    // One GetObject of a content object, which is never rewritten with other bytes: its metadata
    // describes exactly the bytes it streams, whatever puts happen meanwhile.
    const out = await this.call(
      'get',
      () => this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.contentKey(key, pointer.sha256) })),
      true,
    );
    if (!out) return undefined;
    const info = infoOf(key, out.Metadata, Number(out.ContentLength));
    if (!info || !(out.Body instanceof Readable)) {
      (out.Body as Readable | undefined)?.destroy?.();
      return undefined;
    }
    return { info, body: out.Body };
  }

  async get(key: string): Promise<Readable | undefined> {
    return (await this.read(key))?.body;
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    const before = await this.head(key);
    if (!before) return;
    await this.release(key, before.sha256);
    await this.call('delete', () => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })));
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for (const o of await this.listRaw(this.prefix + prefix)) {
      const key = o.key.slice(this.prefix.length);
      if (isValidKey(key)) out.push(key);
    }
    return out.sort();
  }

  /**
   * A GET of the content object holding exactly these bytes, signed for `ttlSeconds` (at most
   * maxUrlTtlSeconds) with nothing but the `host` header signed, and named as a download of the
   * key's file. Computed from the key and checksum, with no request: bytes the key never held, or
   * released ones swept after every URL for them expired, answer S3's 404.
   */
  async presignGet(target: DownloadTarget, ttlSeconds: number): Promise<string> {
    assertValidKey(target.key);
    if (!isSha256(target.sha256)) throw new Error(`not a lower-case hex SHA-256: ${JSON.stringify(target.sha256)}`);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > this.maxUrlTtlS)
      throw new Error(`a download URL lives 1 to ${this.maxUrlTtlS} s, not ${ttlSeconds}`);
    const file = target.key.slice(target.key.lastIndexOf('/') + 1);
    return getSignedUrl(
      this.signing,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.contentKey(target.key, target.sha256),
        ResponseContentDisposition: `attachment; filename="${file}"`,
      }),
      { expiresIn: ttlSeconds, signingDate: new Date(this.clock.now()) },
    );
  }

  /**
   * Deletes content objects no pointer names once no URL for them can still be valid: released ones
   * when their marker is older than the longest URL plus an hour, unmarked ones (a put cut short
   * before its pointer) when that old themselves. For the composition root to run now and then (an
   * hourly pass is plenty); any node may, and two at once only delete the same objects. Returns how
   * many content objects went.
   */
  async sweepReleased(): Promise<number> {
    const graceMs = this.maxUrlTtlS * 1000 + HOUR_MS;
    const now = this.clock.now();
    const old = (at: number) => now - at >= graceMs;
    const pointers = new Set(await this.list(''));
    const contents = new Map<string, Array<{ sha256: string; raw: string; at: number }>>();
    for (const o of await this.listRaw(this.prefix + OBJECTS)) {
      const ref = parseContentPath(o.key.slice(this.prefix.length + OBJECTS.length));
      if (!ref) continue;
      const list = contents.get(ref.key) ?? [];
      list.push({ sha256: ref.sha256, raw: o.key, at: o.at });
      contents.set(ref.key, list);
    }
    const markers = new Map<string, { raw: string; at: number }>();
    for (const o of await this.listRaw(this.prefix + RELEASED))
      markers.set(o.key.slice(this.prefix.length + RELEASED.length), { raw: o.key, at: o.at });

    let deleted = 0;
    for (const [key, list] of contents) {
      // A pointer names an existing content object, so the only one of its key is the one it names.
      const named = pointers.has(key) ? (list.length === 1 ? list[0]!.sha256 : (await this.head(key))?.sha256) : undefined;
      for (const c of list) {
        if (c.sha256 === named) continue;
        const marker = markers.get(contentPath(key, c.sha256));
        if (!old(marker?.at ?? c.at)) continue;
        await this.deleteRaw(c.raw);
        deleted++;
      }
    }
    // An old marker's bytes are gone now (deleted above, or earlier) or named again: it has done its work.
    for (const m of markers.values()) if (old(m.at)) await this.deleteRaw(m.raw);
    return deleted;
  }

  /** Closes the clients' connections. */
  close(): void {
    this.s3.destroy();
    this.uploads.destroy();
    if (this.signing !== this.s3) this.signing.destroy();
  }

  private contentKey(key: string, sha256: string): string {
    return this.prefix + OBJECTS + contentPath(key, sha256);
  }

  private contentParams(meta: ObjectMeta) {
    return {
      ContentType: meta.contentType ?? 'application/octet-stream',
      Metadata: { sha256: meta.sha256, rows: String(meta.rows), ...(meta.contentType ? { type: meta.contentType } : {}) },
    };
  }

  private async listRaw(prefix: string): Promise<Array<{ key: string; at: number }>> {
    const out: Array<{ key: string; at: number }> = [];
    try {
      const pages = paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: prefix });
      for await (const page of pages as AsyncIterable<ListObjectsV2CommandOutput>)
        for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, at: o.LastModified?.getTime() ?? 0 });
    } catch (e) {
      throw fault('list', e);
    }
    return out;
  }

  private async deleteRaw(raw: string): Promise<void> {
    await this.call('delete', () => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: raw })));
  }

  /** Runs one SDK call; "no such object" is undefined when `missingOk`, anything else a dependency fault. */
  private async call<T>(op: string, run: () => Promise<T>, missingOk = false): Promise<T | undefined> {
    try {
      return await run();
    } catch (e) {
      if (missingOk && isMissing(e)) return undefined;
      throw fault(op, e);
    }
  }
}

function assertPut(key: string, meta: ObjectMeta): void {
  assertValidKey(key);
  if (!isSha256(meta.sha256)) throw new Error(`checksum of ${key} is not a lower-case hex SHA-256: ${JSON.stringify(meta.sha256)}`);
}

const checksumMismatch = (key: string, got: string, expected: string): Error =>
  new Error(`checksum mismatch for ${key}: got ${got}, expected ${expected}`);

/** `{dir of key}/{sha256}/{file name}`: the checksum as a directory keeps the file's own name last in the URL. */
function contentPath(key: string, sha256: string): string {
  const cut = key.lastIndexOf('/');
  return `${key.slice(0, cut)}/${sha256}/${key.slice(cut + 1)}`;
}

function parseContentPath(path: string): { key: string; sha256: string } | undefined {
  const parts = path.split('/');
  if (parts.length < 3) return undefined;
  const file = parts.pop()!;
  const sha256 = parts.pop()!;
  const key = `${parts.join('/')}/${file}`;
  return isSha256(sha256) && isValidKey(key) ? { key, sha256 } : undefined;
}

function infoOf(key: string, m: Record<string, string> | undefined, size: number): ObjectInfo | undefined {
  const sha256 = m?.sha256;
  const rows = Number(m?.rows);
  // An object umbra did not write (no checksum) is not one of its exports.
  if (!sha256 || !isSha256(sha256) || !Number.isInteger(rows) || !Number.isInteger(size) || size < 0) return undefined;
  return { key, size, sha256, rows, ...(m?.type ? { contentType: m.type } : {}) };
}

/** No such object. A missing bucket is a fault, not an empty store (HEAD answers carry no code to tell them apart). */
function isMissing(e: unknown): boolean {
  const x = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (x?.name === 'NoSuchBucket') return false;
  return x?.$metadata?.httpStatusCode === 404 || x?.name === 'NotFound' || x?.name === 'NoSuchKey';
}

/**
 * The error a failed call becomes: the transports answer 503 (errors.ts), the message names the
 * operation and what S3 or the network said, never credentials or a URL.
 */
function fault(op: string, e: unknown): Error {
  const x = e as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = x?.$metadata?.httpStatusCode;
  const why = [x?.name, x?.code, status].filter((v) => v !== undefined && v !== '').join(' ') || String(e);
  return Object.assign(new Error(`object store ${op} failed: ${why}`, { cause: e }), {
    code: DEPENDENCY_UNAVAILABLE,
    dependency: 'object store',
  });
}
