import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { assertValidKey, isSha256, isValidKey, type DownloadTarget } from './object-store.ts';

/** A signing secret with an id that signed URLs name, so secrets rotate without breaking issued URLs. */
export interface SigningSecret {
  id: string;
  secret: string;
}

export type VerifyResult =
  | ({ ok: true } & DownloadTarget)
  | { ok: false; reason: 'MALFORMED' | 'UNKNOWN_KEY_ID' | 'BAD_SIGNATURE' | 'EXPIRED' };

export interface DownloadSignerOptions {
  /** Current secret first, then previous ones still accepted for URLs already issued. */
  secrets: readonly SigningSecret[];
  clock: Clock;
  /** Path of umbra's route that serves these downloads (wired by the composition root). */
  path?: string;
}

/**
 * Signs and checks the URLs of umbra's own download route: whatever store holds the files, a node
 * serves such a URL by reading the object (ObjectStore.read) and comparing its checksum with the one
 * signed here. The store's own URLs (ObjectStore.presignGet) are the store's business; these are the
 * choice when the store cannot presign or the operator wants every download to pass through umbra.
 */
export class DownloadSigner {
  private readonly path: string;

  constructor(private readonly opts: DownloadSignerOptions) {
    if (opts.secrets.length === 0) throw new Error('DownloadSigner needs at least one signing secret');
    this.path = opts.path ?? '/downloads';
  }

  /** Path and query of a URL valid for `ttlSeconds` that serves `target.key` only while it holds `target.sha256`. */
  sign(target: DownloadTarget, ttlSeconds: number): string {
    const { key, sha256 } = target;
    assertValidKey(key);
    if (!isSha256(sha256)) throw new Error(`not a lower-case hex SHA-256: ${JSON.stringify(sha256)}`);
    const current = this.opts.secrets[0]!;
    const expires = Math.floor(this.opts.clock.now() / 1000) + ttlSeconds;
    // `object`, not `key`: access logs redact members named like a key, and the object's path is no secret.
    const q = new URLSearchParams({
      object: key,
      sha256,
      expires: String(expires),
      kid: current.id,
      sig: mac(current.secret, current.id, key, sha256, expires),
    });
    return `${this.path}?${q.toString()}`;
  }

  /** Checks the query of a URL signed here and returns what it signed. A URL without a checksum is MALFORMED. */
  verify(query: URLSearchParams | Record<string, string | undefined>): VerifyResult {
    const get = (n: string): string | undefined => (query instanceof URLSearchParams ? (query.get(n) ?? undefined) : query[n]);
    const key = get('object');
    const sha256 = get('sha256');
    const exp = get('expires');
    const kid = get('kid');
    const sig = get('sig');
    if (!key || !sha256 || !exp || !kid || !sig || !/^\d{1,12}$/.test(exp) || !isValidKey(key) || !isSha256(sha256))
      return { ok: false, reason: 'MALFORMED' };
    const secret = this.opts.secrets.find((s) => s.id === kid);
    if (!secret) return { ok: false, reason: 'UNKNOWN_KEY_ID' };
    const expires = Number(exp);
    const want = Buffer.from(mac(secret.secret, kid, key, sha256, expires));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'BAD_SIGNATURE' };
    // Checked after the signature so a forged expiry never reads as merely "expired".
    if (this.opts.clock.now() / 1000 > expires) return { ok: false, reason: 'EXPIRED' };
    return { ok: true, key, sha256 };
  }
}

/**
 * Everything that selects the bytes is signed: the key and their checksum (a key is reused daily), the
 * expiry, and the key id, so a signature cannot be replayed under another secret's id. `v2` sets these
 * apart from URLs of the format that signed no checksum, which are therefore refused.
 */
function mac(secret: string, kid: string, key: string, sha256: string, expires: number): string {
  return createHmac('sha256', secret).update(`v2\n${kid}\n${key}\n${sha256}\n${expires}`).digest('base64url');
}
