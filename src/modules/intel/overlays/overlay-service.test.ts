import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../errors.ts';
import { canonicalCidr, normaliseTag, OverlayService } from './overlay-service.ts';

describe('canonicalCidr', () => {
  it('should clear host bits, write IPv6 per RFC 5952 and make bare addresses host routes', () => {
    assert.equal(canonicalCidr('192.0.2.77/24'), '192.0.2.0/24');
    assert.equal(canonicalCidr('192.0.2.77'), '192.0.2.77/32');
    assert.equal(canonicalCidr('2001:DB8:0:0::1/32'), '2001:db8::/32');
    assert.equal(canonicalCidr('2001:db8::1'), '2001:db8::1/128');
    assert.equal(canonicalCidr('::ffff:192.0.2.1'), '192.0.2.1/32');
  });

  it('should refuse what is not an address or CIDR', () => {
    for (const bad of ['', 'nope', '192.0.2.0/33', '192.0.2/24', '2001:db8::/129', '../etc/passwd'])
      assert.equal(canonicalCidr(bad), undefined, bad);
  });
});

describe('normaliseTag', () => {
  it('should read categories the way import-list reads kinds', () => {
    assert.equal(normaliseTag('tor-node'), 'TOR_NODE');
    assert.equal(normaliseTag(' Search_Engine '), 'SEARCH_ENGINE');
  });
});

describe('OverlayService.add', () => {
  const service = async () => {
    const { openSqlite } = await import('../../../storage/embedded/sqlite-db.ts');
    const { SqliteAccountStore } = await import('../../../storage/embedded/sqlite-account-store.ts');
    const { SqliteOverlayStore } = await import('../../../storage/embedded/sqlite-overlay-store.ts');
    const db = openSqlite(':memory:');
    db.prepare('INSERT INTO orgs VALUES (?, ?, 0, 1, 1, 0)').run('org_a', 'team-a');
    return { db, overlays: new OverlayService(new SqliteOverlayStore(db), new SqliteAccountStore(db), { now: () => 1_764_000_000_000 }) };
  };
  const fieldsOf = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof AppError, String(e));
      return e.context.fields;
    }
    assert.fail('accepted');
  };

  it('should refuse a category the contract does not have, listing the valid ones, and store nothing', async () => {
    const { db, overlays } = await service();
    const fields = await fieldsOf(overlays.add({ org: 'team-a', cidr: '203.0.113.0/24', category: 'NOTACAT', action: 'deny' }));
    assert.match(fields!.category![0]!, /^'NOTACAT' is not a category; one of FREE_VPN, COMMERCIAL_VPN, .*, PAYMENT_PROCESSOR$/);
    assert.deepEqual(await overlays.list('team-a'), []);
    db.close();
  });

  it('should read categories and provider tags as import-list does, and refuse a provider tag of another form', async () => {
    const { db, overlays } = await service();
    const made = await overlays.add({ org: 'team-a', cidr: '203.0.113.9', category: 'tor-node', provider: 'tor-project', action: 'deny' });
    assert.deepEqual([made.category, made.provider, made.cidr], ['TOR_NODE', 'TOR_PROJECT', '203.0.113.9/32']);
    for (const provider of ['apple.relay', '', 'x'.repeat(65), 'a b']) {
      const fields = await fieldsOf(
        overlays.add({ org: 'team-a', cidr: '203.0.113.0/24', category: 'TOR_NODE', provider, action: 'deny' }),
      );
      assert.match(fields!.provider![0]!, /is not a provider tag: 1 to 64 letters, digits, - or _/, provider);
    }
    assert.equal((await overlays.list('team-a')).length, 1);
    db.close();
  });
});
