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

export type VerifyResult = { ok: true; key: string } | { ok: false; reason: 'MALFORMED' | 'UNKNOWN_KEY_ID' | 'BAD_SIGNATURE' | 'EXPIRED' };

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
  /** A download URL (path + query, or absolute for a remote store) valid for `ttlSeconds`. */
  presign(key: string, ttlSeconds: number): Promise<string>;
  /** Checks the query of a URL this store presigned (the embedded store serves its own downloads). */
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
