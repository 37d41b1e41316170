import type { ApiKeyRecord, Member, Org } from '../modules/accounts/account-store.ts';
import type { Relation, Scope } from '../modules/accounts/scopes.ts';

/**
 * The rows of the account tables, named as both backends' schemas name their columns (SQLite and
 * PostgreSQL), and their mapping to the port's records. Only the scopes differ in storage: JSON text
 * in SQLite, jsonb in PostgreSQL, so each store passes them in parsed.
 */
export interface OrgRow {
  id: string;
  name: string;
  credit_allotment: number;
  reset_period_s: number;
  max_streams: number;
  created_at: number;
}

export interface MemberRow {
  id: string;
  org_id: string;
  email: string;
  first_name: string;
  last_name: string;
  relation: string;
}

export interface KeyRow<S = Scope[]> {
  id: string;
  org_id: string;
  member_id: string;
  name: string | null;
  scopes: S;
  created_at: number;
  revoked_at: number | null;
}

export const toOrg = (r: OrgRow): Org => ({
  id: r.id,
  name: r.name,
  creditAllotment: r.credit_allotment,
  resetPeriodSeconds: r.reset_period_s,
  maxStreams: r.max_streams,
  createdAt: r.created_at,
});

export const toMember = (r: MemberRow): Member => ({
  id: r.id,
  orgId: r.org_id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  relation: r.relation as Relation,
});

export const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  orgId: r.org_id,
  memberId: r.member_id,
  name: r.name,
  scopes: r.scopes,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
