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

export type VerifyResult =
  | ({ ok: true } & DownloadTarget)
  | { ok: false; reason: 'MALFORMED' | 'UNKNOWN_KEY_ID' | 'BAD_SIGNATURE' | 'EXPIRED' };

/** An object's metadata and bytes read as one version: `info` describes exactly what `body` yields. */
export interface StoredObject {
  info: ObjectInfo;
  body: Readable;
}

/** A signing secret with an id that presigned URLs name, so secrets rotate without breaking issued URLs. */
export interface SigningSecret {
  id: string;
  secret: string;
}

/**
 * Where export files live. Keys look like `{feed}/latest/{HH}_{feed}.parquet`; implementations refuse
 * any other shape. An object is visible only once complete: readers never see a partial upload.
 */
export interface ObjectStore {
  /** Stores a file (by path) or bytes under `key`, replacing any previous object atomically. */
  put(key: string, body: string | Uint8Array, meta: ObjectMeta): Promise<ObjectInfo>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** The bytes of an object, or undefined when there is none. */
  get(key: string): Promise<Readable | undefined>;
  /**
   * The metadata and bytes of one version of an object, or undefined when there is none: a put that
   * replaces the object while the body is read changes neither (S3: one GetObject, whose response
   * metadata belongs to the version it streams). What a download route serves after comparing
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
   * A download URL (path + query, or absolute for a remote store) valid for `ttlSeconds` that serves
   * the object at `target.key` only while its bytes have `target.sha256`, and nothing otherwise. The
   * signature covers everything that selects the bytes: the key and the checksum. The embedded store
   * signs the checksum into the query and its route compares it with the version it reads; a remote
   * store would presign a GET of the object version holding those bytes (S3: the versionId whose
   * metadata has that checksum, or a key that contains it), never the bare key.
   */
  presign(target: DownloadTarget, ttlSeconds: number): Promise<string>;
  /**
   * Checks the query of a URL this store presigned (the embedded store serves its own downloads) and
   * returns what it signed. A URL without a checksum is MALFORMED.
   */
  verify(query: URLSearchParams | Record<string, string | undefined>): VerifyResult;
}

const KEY_RE = /^[a-z0-9_]+(\/[0-9A-Za-z_.-]+)+$/;

/** Keys are built from catalog ids and dates, but a store still refuses traversal or anything odd. */
export function isValidKey(key: string): boolean {
  return KEY_RE.test(key) && !key.split('/').some((seg) => seg === '.' || seg === '..');
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new Error(`invalid object key: ${JSON.stringify(key)}`);
}
