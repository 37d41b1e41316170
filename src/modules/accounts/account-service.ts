import type { Clock } from '../../lib/clock.ts';
import type { KeyCrypto } from '../../lib/key-crypto.ts';
import type { MaybePromise } from '../../lib/maybe-promise.ts';
import type { CreditLedger } from '../credits/credit-ledger.ts';
import type { AccountStore, KeyOwner } from './account-store.ts';
import type { Scope } from './scopes.ts';
import { isAppError } from '../../errors.ts';
import { BackgroundOnce } from '../../lib/background-once.ts';

/** The authenticated caller of one request. */
export interface Caller {
  keyId: string;
  orgId: string;
  scopes: ReadonlySet<Scope>;
  owner: KeyOwner;
}

export type VerifyResult = { ok: true; caller: Caller } | { ok: false; reason: 'MISSING' | 'INVALID' | 'REVOKED' };

export interface AccountInfo {
  first_name: string;
  last_name: string;
  email: string;
  organization: { id: string; name: string; relation: string };
  scopes: string[];
  lookup_quota: { credits: number; resets_in: number };
}

// UUID-shaped, as the contract says keys are; anything else is refused before hashing or a store read.
const KEY_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const MISSING: VerifyResult = Object.freeze({ ok: false, reason: 'MISSING' });
const INVALID: VerifyResult = Object.freeze({ ok: false, reason: 'INVALID' });
const REVOKED: VerifyResult = Object.freeze({ ok: false, reason: 'REVOKED' });

/**
 * While the account store is unavailable (its database locked by another process), a key verified
 * before the outage keeps its verdict this long past its cache time: serving such keys needs nothing
 * new from the store, and no revocation can be written meanwhile anyway.
 */
export const STALE_VERDICT_MAX_MS = 5 * 60_000;

export interface AccountServiceOptions {
  /** How long a verified (or refused) key is trusted before the store is asked again. */
  cacheMs: number;
  /** Most cached entries; the cache is cleared when full so memory stays bounded. */
  cacheSize?: number;
}

/**
 * Verifies keys and describes accounts. Verdicts are cached for cacheMs, so a revocation or scope
 * change made by another process (the admin CLI) takes effect within that time.
 *
 * The cache is keyed by the secret as sent, so a repeat request costs one Map lookup: no SHA-256, no
 * store read and no new Caller. The secret stays in this process's memory only (it is never logged);
 * the store still holds hashes alone.
 */
export class AccountService {
  private readonly cache = new Map<string, { result: VerifyResult; until: number }>();
  /** When the store last failed as unavailable; undefined once it answers again. */
  private storeFailingSince: number | undefined;
  /** Keys being verified again in the background while the store is failing. */
  private readonly refreshing = new BackgroundOnce<string>();

  constructor(
    private readonly store: AccountStore,
    private readonly ledger: CreditLedger,
    private readonly crypto: KeyCrypto,
    private readonly clock: Clock,
    private readonly options: AccountServiceOptions,
  ) {}

  /** Synchronous on a cache hit (every request but one per key per cacheMs); the result is shared, never mutate it. */
  verifyKey(secret: string | undefined): MaybePromise<VerifyResult> {
    if (secret === undefined || secret === '') return MISSING;
    const entry = this.cache.get(secret);
    if (entry !== undefined) {
      const now = this.clock.now();
      if (entry.until > now) return entry.result;
      // The store is failing: answer from the last verdict at once and verify again in the background.
      if (this.storeFailingSince !== undefined && now - entry.until < STALE_VERDICT_MAX_MS) {
        this.refreshing.start(secret, () => this.lookup(secret));
        return entry.result;
      }
    }
    if (!KEY_SHAPE.test(secret)) return INVALID;
    return this.lookup(secret);
  }

  private async lookup(secret: string): Promise<VerifyResult> {
    const hash = this.crypto.hash(secret.toLowerCase());
    const now = this.clock.now();
    let owner: KeyOwner | undefined;
    try {
      owner = await this.store.findKeyByHash(hash);
      this.storeFailingSince = undefined;
    } catch (e) {
      if (!(isAppError(e) && e.code === 'UNAVAILABLE')) throw e;
      this.storeFailingSince ??= now;
      const stale = this.cache.get(secret);
      if (stale !== undefined && now - stale.until < STALE_VERDICT_MAX_MS) return stale.result;
      throw e;
    }
    // The store found the row by hash; compare again in constant time so no code path short-circuits on it.
    const result: VerifyResult =
      !owner || !this.crypto.equal(owner.hash, hash)
        ? INVALID
        : owner.key.revokedAt !== null
          ? REVOKED
          : { ok: true, caller: { keyId: owner.key.id, orgId: owner.org.id, scopes: new Set(owner.key.scopes), owner } };
    if (this.cache.size >= (this.options.cacheSize ?? 100_000)) this.cache.clear();
    this.cache.set(secret, { result, until: now + this.options.cacheMs });
    return result;
  }

  /** Forgets cached keys (after an in-process admin change). */
  invalidate(): void {
    this.cache.clear();
  }

  async accountInfo(caller: Caller): Promise<AccountInfo> {
    const nowSec = Math.floor(this.clock.now() / 1000);
    const credits = await this.ledger.get(caller.orgId, nowSec);
    const { member, org, key } = caller.owner;
    return {
      first_name: member.firstName,
      last_name: member.lastName,
      email: member.email,
      organization: { id: org.id, name: org.name, relation: member.relation },
      scopes: [...key.scopes],
      lookup_quota: { credits: credits?.balance ?? 0, resets_in: Math.max(0, (credits?.resetsAt ?? nowSec) - nowSec) },
    };
  }
}
