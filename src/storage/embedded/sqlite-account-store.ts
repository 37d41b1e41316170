import type { AccountStore, ApiKeyRecord, KeyOwner, Member, NewKey, NewMember, NewOrg, Org } from '../../modules/accounts/account-store.ts';
import type { Scope } from '../../modules/accounts/scopes.ts';
import { type KeyRow, type MemberRow, type OrgRow, toKey, toMember, toOrg } from '../account-rows.ts';
import { sqliteGate, type SqliteDb } from './sqlite-db.ts';
import type { SqliteGate } from './sqlite-gate.ts';

// Scopes are JSON text in SQLite.
const toSqliteKey = (r: KeyRow<string>): ApiKeyRecord => toKey({ ...r, scopes: JSON.parse(r.scopes) as Scope[] });

export class SqliteAccountStore implements AccountStore {
  private readonly q;
  private readonly gate: SqliteGate;
  /** One read transaction: the key, its org and its member as of one moment. */
  private readonly keyOwner;

  constructor(readonly db: SqliteDb) {
    this.gate = sqliteGate(db);
    this.q = {
      insertOrg: db.prepare(
        'INSERT INTO orgs (id, name, credit_allotment, reset_period_s, max_streams, created_at) VALUES (@id, @name, @creditAllotment, ' +
          '@resetPeriodSeconds, @maxStreams, @createdAt) ON CONFLICT DO NOTHING',
      ),
      orgById: db.prepare<[string], OrgRow>('SELECT * FROM orgs WHERE id = ?'),
      orgByName: db.prepare<[string], OrgRow>('SELECT * FROM orgs WHERE name = ?'),
      orgs: db.prepare<[], OrgRow>('SELECT * FROM orgs ORDER BY created_at, name'),
      setMaxStreams: db.prepare('UPDATE orgs SET max_streams = ? WHERE id = ?'),
      member: db.prepare<[string, string], MemberRow>('SELECT * FROM members WHERE org_id = ? AND email = ?'),
      memberById: db.prepare<[string], MemberRow>('SELECT * FROM members WHERE id = ?'),
      insertMember: db.prepare(
        'INSERT INTO members (id, org_id, email, first_name, last_name, relation) VALUES (@id, @orgId, @email, @firstName, @lastName, ' +
          '@relation)',
      ),
      countMembers: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM members WHERE org_id = ?'),
      insertKey: db.prepare(
        'INSERT INTO api_keys (id, org_id, member_id, name, hash, scopes, created_at, revoked_at) VALUES (@id, @orgId, @memberId, @name, ' +
          '@hash, @scopes, @createdAt, @revokedAt)',
      ),
      keyByHash: db.prepare<[string], KeyRow<string> & { hash: string }>('SELECT * FROM api_keys WHERE hash = ?'),
      keyById: db.prepare<[string], KeyRow<string>>('SELECT * FROM api_keys WHERE id = ?'),
      keys: db.prepare<[string], KeyRow<string>>('SELECT * FROM api_keys WHERE org_id = ? ORDER BY created_at, id'),
      revoke: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    };
    this.keyOwner = db.transaction((hash: string) => {
      const row = this.q.keyByHash.get(hash);
      return row && { row, org: this.q.orgById.get(row.org_id), member: this.q.memberById.get(row.member_id) };
    });
  }

  async createOrg(org: NewOrg): Promise<boolean> {
    return (await this.gate.run(() => this.q.insertOrg.run(org))).changes === 1;
  }

  async findOrg(idOrName: string): Promise<Org | undefined> {
    const row = await this.gate.run(() => this.q.orgById.get(idOrName) ?? this.q.orgByName.get(idOrName));
    return row && toOrg(row);
  }

  async listOrgs(): Promise<Org[]> {
    return (await this.gate.run(() => this.q.orgs.all())).map(toOrg);
  }

  async setMaxStreams(orgId: string, maxStreams: number): Promise<void> {
    await this.gate.run(() => this.q.setMaxStreams.run(maxStreams, orgId));
  }

  async findMember(orgId: string, email: string): Promise<Member | undefined> {
    const row = await this.gate.run(() => this.q.member.get(orgId, email));
    return row && toMember(row);
  }

  async createMember(member: NewMember): Promise<void> {
    await this.gate.run(() => this.q.insertMember.run(member));
  }

  async countMembers(orgId: string): Promise<number> {
    return (await this.gate.run(() => this.q.countMembers.get(orgId)))!.n;
  }

  async createKey(key: NewKey): Promise<void> {
    await this.gate.run(() => this.q.insertKey.run({ ...key, scopes: JSON.stringify(key.scopes) }));
  }

  async findKeyByHash(hash: string): Promise<KeyOwner | undefined> {
    const found = await this.gate.run(() => this.keyOwner(hash));
    if (!found?.org || !found.member) return undefined;
    return { key: toSqliteKey(found.row), hash: found.row.hash, org: toOrg(found.org), member: toMember(found.member) };
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    return (await this.gate.run(() => this.q.keys.all(orgId))).map(toSqliteKey);
  }

  async findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.gate.run(() => this.q.keyById.get(keyId));
    return row && toSqliteKey(row);
  }

  async revokeKey(keyId: string, at: number): Promise<boolean> {
    return (await this.gate.run(() => this.q.revoke.run(at, keyId))).changes === 1;
  }
}
