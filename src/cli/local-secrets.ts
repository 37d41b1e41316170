import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Config } from '../config.ts';

/**
 * The operator ingestion token: UMBRA_OPERATOR_TOKEN when set, else one kept in a 0600 file under the
 * data dir (made on first use), so `umbra serve` and `umbra ingest` on the same data dir agree.
 */
export function operatorToken(config: Config, create: boolean): string | undefined {
  if (config.operatorToken) return config.operatorToken;
  if (existsSync(config.operatorTokenFile)) return readFileSync(config.operatorTokenFile, 'utf8').trim() || undefined;
  if (!create) return undefined;
  const token = randomBytes(24).toString('base64url');
  writeFileSync(config.operatorTokenFile, `${token}\n`, { mode: 0o600 });
  chmodSync(config.operatorTokenFile, 0o600);
  return token;
}

/**
 * Download-URL and cursor signing keys: UMBRA_SIGNING_KEYS when set, else one key kept in a 0600 file
 * under the data dir, so URLs issued before a restart stay valid for their 24 hours.
 */
export function signingKeys(config: Config): Array<{ id: string; secret: string }> {
  if (config.signingKeys) return config.signingKeys;
  if (!existsSync(config.signingKeysFile)) {
    writeFileSync(config.signingKeysFile, `k1:${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    chmodSync(config.signingKeysFile, 0o600);
  }
  return readFileSync(config.signingKeysFile, 'utf8')
    .trim()
    .split(',')
    .map((pair) => ({ id: pair.slice(0, pair.indexOf(':')), secret: pair.slice(pair.indexOf(':') + 1) }));
}
