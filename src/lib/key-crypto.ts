import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** Randomness and hashing for keys and ids, injected so tests can make them deterministic. */
export interface KeyCrypto {
  /** A new API key secret: UUID-shaped, 122 random bits. */
  newSecret(): string;
  /** Lower-case hex SHA-256; the only form in which a key is stored. */
  hash(secret: string): string;
  /** A new identifier such as `org_3f9a…`. */
  newId(prefix: string): string;
  /** Constant-time comparison of two hex hashes. */
  equal(a: string, b: string): boolean;
}

export const nodeKeyCrypto: KeyCrypto = {
  newSecret: () => randomUUID(),
  hash: (secret) => createHash('sha256').update(secret).digest('hex'),
  newId: (prefix) => `${prefix}_${randomBytes(10).toString('hex')}`,
  equal: (a, b) => {
    const x = Buffer.from(a, 'hex');
    const y = Buffer.from(b, 'hex');
    return x.length === y.length && timingSafeEqual(x, y);
  },
};
