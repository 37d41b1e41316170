import type { Readable } from 'node:stream';

/** What a stored object carries besides its bytes; S3 keeps these as object metadata. */
export interface ObjectMeta {
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  rows: number;
  contentType?: string;
}

export interface ObjectInfo extends ObjectMeta {
  key: string;
  size: number;
}

/**
 * What a download URL selects: an object and the exact bytes it may serve, named by their SHA-256.
 * Hourly keys are reused every day, so the key alone would let an old URL serve the bytes that later
 * replaced the ones it was issued for.
 */
export interface DownloadTarget {
  key: string;
  /** Lower-case hex SHA-256 of the bytes the URL may serve. */
  sha256: string;
}

/** An object's metadata and bytes read as one version: `info` describes exactly what `body` yields. */
export interface StoredObject {
  info: ObjectInfo;
  body: Readable;
}

/**
 * Where export files live. Keys look like `{feed}/latest/{HH}_{feed}.parquet`; implementations refuse
 * any other shape. An object is visible only once complete: readers never see a partial upload.
 */
export interface ObjectStore {
  /**
   * Stores the file at `path` (a local file the caller keeps unchanged until this settles) under `key`,
   * replacing any previous object atomically. Refused, with nothing visible, when the file's SHA-256
   * is not `meta.sha256`: that checksum is what clients are told.
   */
  putFile(key: string, path: string, meta: ObjectMeta): Promise<ObjectInfo>;
  /** The same for bytes in memory (small objects and tests). */
  putBytes(key: string, bytes: Uint8Array, meta: ObjectMeta): Promise<ObjectInfo>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** The bytes of an object, or undefined when there is none. */
  get(key: string): Promise<Readable | undefined>;
  /**
   * The metadata and bytes of one version of an object, or undefined when there is none: a put that
   * replaces the object while the body is read changes neither (S3: one GetObject, whose response
   * metadata belongs to the version it streams). What umbra's download route serves after comparing
   * `info.sha256` with the checksum its URL signed.
   */
  read(key: string): Promise<StoredObject | undefined>;
  /** Removes an object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Keys under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
  /**
   * Optional fast path: makes `dest` (a local path that must not exist yet) a file with the object's
   * current bytes without streaming them through JS; a later put to the key leaves `dest` as it was.
   * false when there is no such object. Without it, readers stream get() to a file (fetchToFile).
   */
  copyToFile?(key: string, dest: string): Promise<boolean>;
  /**
   * Optional, for a store that customers can download from directly: an absolute URL to the store
   * itself, valid for `ttlSeconds` and needing no credentials, that serves the bytes whose SHA-256 is
   * `target.sha256` (stored under `target.key`) and never any other bytes: once the key holds other
   * bytes, the URL serves the ones it was issued for or fails. Without it (the embedded store),
   * customers download through umbra's own route with a DownloadSigner URL.
   */
  presignGet?(target: DownloadTarget, ttlSeconds: number): Promise<string>;
}

const KEY_RE = /^[a-z0-9_]+(\/[0-9A-Za-z_.-]+)+$/;

/** Keys are built from catalog ids and dates, but a store still refuses traversal or anything odd. */
export function isValidKey(key: string): boolean {
  return KEY_RE.test(key) && !key.split('/').some((seg) => seg === '.' || seg === '..');
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new Error(`invalid object key: ${JSON.stringify(key)}`);
}

const SHA256_RE = /^[0-9a-f]{64}$/;

/** A lower-case hex SHA-256, the only form a checksum is stored, signed or compared in. */
export const isSha256 = (s: string): boolean => SHA256_RE.test(s);
