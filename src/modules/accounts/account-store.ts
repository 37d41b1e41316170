import type { Relation, Scope } from './scopes.ts';

export interface Org {
  id: string;
  name: string;
  /** Credits granted each billing period. */
  creditAllotment: number;
  resetPeriodSeconds: number;
  maxStreams: number;
  /** Unix seconds. */
  createdAt: number;
}

export interface Member {
  id: string;
  orgId: string;
  email: string;
  firstName: string;
  lastName: string;
  relation: Relation;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  memberId: string;
  name: string | null;
  scopes: Scope[];
  /** Unix seconds. */
  createdAt: number;
  revokedAt: number | null;
}

export interface KeyOwner {
  key: ApiKeyRecord;
  /** Lower-case hex SHA-256 of the secret, as stored. */
  hash: string;
  org: Org;
  member: Member;
}

export type NewOrg = Omit<Org, 'id'> & { id: string };
export type NewMember = Omit<Member, 'id'> & { id: string };
export type NewKey = ApiKeyRecord & { hash: string };

/** Accounts, members, keys and per-team limit overrides. Keys are only ever stored as hashes. */
export interface AccountStore {
  /** Returns false when the name is taken (names are unique, case-insensitive). */
  createOrg(org: NewOrg): Promise<boolean>;
  /** By id or by name (case-insensitive). */
  findOrg(idOrName: string): Promise<Org | undefined>;
  listOrgs(): Promise<Org[]>;
  setMaxStreams(orgId: string, maxStreams: number): Promise<void>;
  findMember(orgId: string, email: string): Promise<Member | undefined>;
  createMember(member: NewMember): Promise<void>;
  /** The first member of an org becomes its OWNER unless told otherwise; callers decide, stores just count. */
  countMembers(orgId: string): Promise<number>;
  createKey(key: NewKey): Promise<void>;
  findKeyByHash(hash: string): Promise<KeyOwner | undefined>;
  listKeys(orgId: string): Promise<ApiKeyRecord[]>;
  findKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Returns false when no such key exists or it was already revoked. */
  revokeKey(keyId: string, at: number): Promise<boolean>;
}
