import type { Clock } from '../../lib/clock.ts';
import type { KeyCrypto } from '../../lib/key-crypto.ts';
import type { CreditLedger } from '../credits/credit-ledger.ts';
import type { AccountStore, KeyOwner } from './account-store.ts';
import type { Scope } from './scopes.ts';

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

// UUID-shaped, as service.md says keys are; anything else is refused before hashing or a store read.
const KEY_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export interface AccountServiceOptions {
  /** How long a verified (or refused) key is trusted before the store is asked again. */
  cacheMs: number;
  /** Most cached entries; the cache is cleared when full so memory stays bounded. */
  cacheSize?: number;
}

/**
 * Verifies keys and describes accounts. Key lookups are cached for cacheMs, so a revocation or scope
 * change made by another process (the admin CLI) takes effect within that time.
 */
export class AccountService {
  private readonly cache = new Map<string, { owner: KeyOwner | undefined; until: number }>();

  constructor(
    private readonly store: AccountStore,
    private readonly ledger: CreditLedger,
    private readonly crypto: KeyCrypto,
    private readonly clock: Clock,
    private readonly options: AccountServiceOptions,
  ) {}

  async verifyKey(secret: string | undefined): Promise<VerifyResult> {
    if (secret === undefined || secret === '') return { ok: false, reason: 'MISSING' };
    if (!KEY_SHAPE.test(secret)) return { ok: false, reason: 'INVALID' };
    const hash = this.crypto.hash(secret.toLowerCase());
    const now = this.clock.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.until <= now) {
      const owner = await this.store.findKeyByHash(hash);
      if (this.cache.size >= (this.options.cacheSize ?? 100_000)) this.cache.clear();
      entry = { owner, until: now + this.options.cacheMs };
      this.cache.set(hash, entry);
    }
    const owner = entry.owner;
    // The store found the row by hash; compare again in constant time so no code path short-circuits on it.
    if (!owner || !this.crypto.equal(owner.hash, hash)) return { ok: false, reason: 'INVALID' };
    if (owner.key.revokedAt !== null) return { ok: false, reason: 'REVOKED' };
    return { ok: true, caller: { keyId: owner.key.id, orgId: owner.org.id, scopes: new Set(owner.key.scopes), owner } };
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
