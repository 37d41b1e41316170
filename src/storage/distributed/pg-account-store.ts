import type { AccountStore, ApiKeyRecord, KeyOwner, Member, NewKey, NewMember, NewOrg, Org } from '../../modules/accounts/account-store.ts';
import { type KeyRow, type MemberRow, type OrgRow, toKey, toMember, toOrg } from '../account-rows.ts';
import type { PgPool } from './pg-pool.ts';

const ORG = 'id, name, credit_allotment, reset_period_s, max_streams, created_at';
const MEMBER = 'id, org_id, email, first_name, last_name, relation';
const KEY = 'id, org_id, member_id, name, scopes, created_at, revoked_at';

/** Teams, members and keys in PostgreSQL (tables orgs, members, api_keys). Keys are stored only as hashes. */
export class PgAccountStore implements AccountStore {
  constructor(private readonly db: PgPool) {}

  async createOrg(org: NewOrg): Promise<boolean> {
    // A taken id or a name taken in any case (the unique index on lower(name)) inserts nothing.
    const r = await this.db.query(`INSERT INTO orgs (${ORG}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [
      org.id,
      org.name,
      org.creditAllotment,
      org.resetPeriodSeconds,
      org.maxStreams,
      org.createdAt,
    ]);
    return r.rowCount === 1;
  }

  async findOrg(idOrName: string): Promise<Org | undefined> {
    // By id first, as the embedded store looks: a team may be named like another team's id.
    const { rows } = await this.db.query<OrgRow>(
      `SELECT ${ORG} FROM orgs WHERE id = $1 OR lower(name) = lower($1) ORDER BY (id = $1) DESC LIMIT 1`,
      [idOrName],
    );
    return rows[0] && toOrg(rows[0]);
  }

  async listOrgs(): Promise<Org[]> {
    const { rows } = await this.db.query<OrgRow>(`SELECT ${ORG} FROM orgs ORDER BY created_at, lower(name), id`);
    return rows.map(toOrg);
  }

  async setMaxStreams(orgId: string, maxStreams: number): Promise<void> {
    const r = await this.db.query('UPDATE orgs SET max_streams = $2 WHERE id = $1', [orgId, maxStreams]);
    if (r.rowCount !== 1) throw new Error(`no team ${orgId}`);
  }

  async findMember(orgId: string, email: string): Promise<Member | undefined> {
    const { rows } = await this.db.query<MemberRow>(`SELECT ${MEMBER} FROM members WHERE org_id = $1 AND lower(email) = lower($2)`, [
      orgId,
      email,
    ]);
    return rows[0] && toMember(rows[0]);
  }

  async createMember(m: NewMember): Promise<void> {
    await this.db.query(`INSERT INTO members (${MEMBER}) VALUES ($1, $2, $3, $4, $5, $6)`, [
      m.id,
      m.orgId,
      m.email,
      m.firstName,
      m.lastName,
      m.relation,
    ]);
  }

  async countMembers(orgId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>('SELECT count(*) AS n FROM members WHERE org_id = $1', [orgId]);
    return rows[0]!.n;
  }

  async createKey(k: NewKey): Promise<void> {
    await this.db.query(`INSERT INTO api_keys (${KEY}, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      k.id,
      k.orgId,
      k.memberId,
      k.name,
      JSON.stringify(k.scopes),
      k.createdAt,
      k.revokedAt,
      k.hash,
    ]);
  }

  async findKeyByHash(hash: string): Promise<KeyOwner | undefined> {
    // One statement: the key, its team and its member as of one moment.
    const { rows } = await this.db.query<{ k: KeyRow; o: OrgRow; m: MemberRow; hash: string }>(
      `SELECT row_to_json(k) AS k, row_to_json(o) AS o, row_to_json(m) AS m, k.hash
         FROM api_keys k JOIN orgs o ON o.id = k.org_id JOIN members m ON m.id = k.member_id
        WHERE k.hash = $1`,
      [hash],
    );
    const r = rows[0];
    if (!r) return undefined;
    return { key: toKey(r.k), hash: r.hash, org: toOrg(r.o), member: toMember(r.m) };
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>(`SELECT ${KEY} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id`, [orgId]);
    return rows.map(toKey);
  }

  async findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.db.query<KeyRow>(`SELECT ${KEY} FROM api_keys WHERE id = $1`, [keyId]);
    return rows[0] && toKey(rows[0]);
  }

  async revokeKey(keyId: string, at: number): Promise<boolean> {
    const r = await this.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [keyId, at]);
    return r.rowCount === 1;
  }
}
