import { AppError } from '../../errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyCrypto } from '../../lib/key-crypto.ts';
import type { CreditLedger } from '../credits/credit-ledger.ts';
import { BUCKETS, DEFAULT_BUCKETS, type BucketName, type BucketRule } from '../ratelimit/buckets.ts';
import type { AccountStore, ApiKeyRecord, Org } from './account-store.ts';
import type { LimitStore } from '../ratelimit/limit-store.ts';
import { RELATIONS, type Relation, type Scope } from './scopes.ts';

export const DEFAULT_CREDITS = 10_000;
export const DEFAULT_PERIOD_SECONDS = 30 * 86400;
export const DEFAULT_MAX_STREAMS = 10;
const MAX_CREDITS = 1e15;

export interface OrgView {
  id: string;
  name: string;
  credits: { balance: number; allotment: number; reset_period_seconds: number; resets_at: number; resets_in: number };
  max_streams: number;
  created_at: number;
  keys: Array<KeyView>;
  limits: Record<BucketName, BucketRule & { overridden: boolean }>;
}

export interface KeyView {
  id: string;
  name: string | null;
  member_id: string;
  scopes: Scope[];
  created_at: number;
  revoked_at: number | null;
}

const keyView = (k: ApiKeyRecord): KeyView => ({
  id: k.id,
  name: k.name,
  member_id: k.memberId,
  scopes: k.scopes,
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
});

function wholeNumber(field: string, n: number, min: number): void {
  if (!Number.isSafeInteger(n) || n < min || n > MAX_CREDITS)
    throw AppError.field(field, `must be a whole number from ${min} to ${MAX_CREDITS}`);
}

/** Operator actions on teams, members, keys, credits and limits. Every input is checked before anything changes. */
function checkMaxStreams(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0 || n > 100_000) throw AppError.field('max-streams', 'must be a whole number from 0 to 100000');
}

export class AdminService {
  constructor(
    private readonly store: AccountStore,
    private readonly limits: LimitStore,
    private readonly ledger: CreditLedger,
    private readonly crypto: KeyCrypto,
    private readonly clock: Clock,
  ) {}

  private nowSec(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  async org(idOrName: string): Promise<Org> {
    const org = await this.store.findOrg(idOrName);
    if (!org) throw new AppError('NOT_FOUND', `No organization with id or name '${idOrName}'.`);
    return org;
  }

  async createOrg(input: { name: string; credits?: number; resetPeriodSeconds?: number; maxStreams?: number }): Promise<OrgView> {
    const name = input.name.trim();
    if (name === '' || name.length > 200) throw AppError.field('name', 'must be 1 to 200 characters');
    if (/^org_/.test(name)) throw AppError.field('name', "must not start with 'org_' (reserved for ids)");
    const credits = input.credits ?? DEFAULT_CREDITS;
    wholeNumber('credits', credits, 0);
    const period = input.resetPeriodSeconds ?? DEFAULT_PERIOD_SECONDS;
    wholeNumber('reset-period', period, 1);
    const maxStreams = input.maxStreams ?? DEFAULT_MAX_STREAMS;
    checkMaxStreams(maxStreams);
    const id = this.crypto.newId('org');
    const created = await this.store.createOrg({
      id,
      name,
      creditAllotment: credits,
      resetPeriodSeconds: period,
      maxStreams,
      createdAt: this.nowSec(),
    });
    if (!created) throw AppError.field('name', `an organization named '${name}' already exists`);
    await this.ledger.open(id, { allotment: credits, periodSeconds: period }, this.nowSec());
    return this.showOrg(id);
  }

  async createKey(input: {
    org: string;
    email: string;
    firstName?: string;
    lastName?: string;
    relation?: string;
    scopes: Scope[];
    name?: string;
  }): Promise<{ key: KeyView; secret: string; member: { id: string; email: string; relation: Relation; created: boolean } }> {
    const email = input.email.trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) throw AppError.field('email', 'must be an e-mail address');
    if (input.relation !== undefined && !(RELATIONS as readonly string[]).includes(input.relation)) {
      throw AppError.field('relation', `must be one of ${RELATIONS.join(', ')}`);
    }
    if (input.scopes.length === 0) throw AppError.field('scopes', 'must name at least one scope');
    const org = await this.org(input.org);
    let member = await this.store.findMember(org.id, email);
    const created = !member;
    if (!member) {
      // The first member of an organisation is its OWNER unless told otherwise.
      const relation = (input.relation as Relation | undefined) ?? ((await this.store.countMembers(org.id)) === 0 ? 'OWNER' : 'MEMBER');
      member = {
        id: this.crypto.newId('mem'),
        orgId: org.id,
        email,
        firstName: input.firstName ?? '',
        lastName: input.lastName ?? '',
        relation,
      };
      await this.store.createMember(member);
    }
    const secret = this.crypto.newSecret();
    const key: ApiKeyRecord = {
      id: this.crypto.newId('key'),
      orgId: org.id,
      memberId: member.id,
      name: input.name ?? null,
      scopes: input.scopes,
      createdAt: this.nowSec(),
      revokedAt: null,
    };
    await this.store.createKey({ ...key, hash: this.crypto.hash(secret) });
    return { key: keyView(key), secret, member: { id: member.id, email: member.email, relation: member.relation, created } };
  }

  async revokeKey(keyId: string): Promise<KeyView> {
    const key = await this.store.findKey(keyId);
    if (!key) throw new AppError('NOT_FOUND', `No key with id '${keyId}'. Use the key id shown by 'key list', not the secret.`);
    if (key.revokedAt === null) await this.store.revokeKey(keyId, this.nowSec());
    return keyView((await this.store.findKey(keyId))!);
  }

  async listKeys(orgRef: string): Promise<KeyView[]> {
    const org = await this.org(orgRef);
    return (await this.store.listKeys(org.id)).map(keyView);
  }

  async setCredits(orgRef: string, balance: number): Promise<OrgView> {
    wholeNumber('credits', balance, 0);
    const org = await this.org(orgRef);
    await this.ledger.set(org.id, balance, this.nowSec());
    return this.showOrg(org.id);
  }

  async addCredits(orgRef: string, amount: number): Promise<OrgView> {
    wholeNumber('credits', amount, 1);
    const org = await this.org(orgRef);
    await this.ledger.add(org.id, amount, this.nowSec());
    return this.showOrg(org.id);
  }

  /** The team's concurrent-stream allowance; open streams above a lowered value run to their end. */
  async setMaxStreams(orgRef: string, maxStreams: number): Promise<OrgView> {
    checkMaxStreams(maxStreams);
    const org = await this.org(orgRef);
    await this.store.setMaxStreams(org.id, maxStreams);
    return this.showOrg(org.id);
  }

  async setLimit(orgRef: string, bucket: string, rule: BucketRule): Promise<OrgView> {
    const name = this.bucket(bucket);
    if (!Number.isFinite(rule.rate) || rule.rate <= 0 || rule.rate > 1e7)
      throw AppError.field('rate', 'must be a number of requests per second above 0');
    if (!Number.isSafeInteger(rule.burst) || rule.burst < 1 || rule.burst > 1e9)
      throw AppError.field('burst', 'must be a whole number of at least 1');
    const org = await this.org(orgRef);
    await this.limits.setLimit(org.id, name, rule);
    return this.showOrg(org.id);
  }

  async resetLimits(orgRef: string, bucket?: string): Promise<OrgView> {
    const names = bucket === undefined ? [...BUCKETS] : [this.bucket(bucket)];
    const org = await this.org(orgRef);
    for (const b of names) await this.limits.setLimit(org.id, b, null);
    return this.showOrg(org.id);
  }

  async showOrg(orgRef: string): Promise<OrgView> {
    const org = await this.org(orgRef);
    const now = this.nowSec();
    const credits = await this.ledger.get(org.id, now);
    const overrides = await this.limits.getLimits(org.id);
    const limits = Object.fromEntries(
      BUCKETS.map((b) => [b, { ...(overrides[b] ?? DEFAULT_BUCKETS[b]), overridden: overrides[b] !== undefined }]),
    ) as OrgView['limits'];
    return {
      id: org.id,
      name: org.name,
      credits: {
        balance: credits?.balance ?? 0,
        allotment: credits?.allotment ?? org.creditAllotment,
        reset_period_seconds: credits?.periodSeconds ?? org.resetPeriodSeconds,
        resets_at: credits?.resetsAt ?? now,
        resets_in: Math.max(0, (credits?.resetsAt ?? now) - now),
      },
      max_streams: org.maxStreams,
      created_at: org.createdAt,
      keys: (await this.store.listKeys(org.id)).map(keyView),
      limits,
    };
  }

  async listOrgs(): Promise<Org[]> {
    return this.store.listOrgs();
  }

  private bucket(name: string): BucketName {
    const b = BUCKETS.find((x) => x === name);
    if (!b) throw AppError.field('bucket', `must be one of ${BUCKETS.join(', ')}`);
    return b;
  }
}
