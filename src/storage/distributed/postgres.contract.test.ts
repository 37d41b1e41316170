import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { requireEngine, testEngines, uniqueTestName } from '../../../test/helpers/engines.ts';
import { asAppError, STATUS } from '../../errors.ts';
import { accountStoreContract } from '../contract/account-store.contract.ts';
import { creditLedgerContract } from '../contract/credit-ledger.contract.ts';
import { intelListStoreContract } from '../contract/intel-list-store.contract.ts';
import { ingestKeyStoreContract } from '../contract/ingest-key-store.contract.ts';
import { limitStoreContract } from '../contract/limit-store.contract.ts';
import { PgIngestKeyStore } from './pg-ingest-key-store.ts';
import { overlayStoreContract } from '../contract/overlay-store.contract.ts';
import { snapshotCatalogContract } from '../contract/snapshot-catalog.contract.ts';
import { BufferedCreditLedger } from '../../modules/credits/buffered-credit-ledger.ts';
import { PgAccountStore } from './pg-account-store.ts';
import { PgCreditLedger } from './pg-credit-ledger.ts';
import { PgIntelListStore } from './pg-intel-list-store.ts';
import { PgLimitStore } from './pg-limit-store.ts';
import { migrate, MIGRATIONS_DIR } from './pg-migrate.ts';
import { PgOverlayStore } from './pg-overlay-store.ts';
import { PgPool } from './pg-pool.ts';
import { addOrgs, admin, dropSchema, freshSchema } from '../../../test/helpers/pg-schema.ts';
import { PgSnapshotCatalog } from './pg-snapshot-catalog.ts';

const url = testEngines.databaseUrl;

before(() => requireEngine('PostgreSQL', url));

accountStoreContract('postgres', async () => {
  const s = await freshSchema();
  return { store: new PgAccountStore(s.pool()), close: s.close };
});

limitStoreContract('postgres', async () => {
  const s = await freshSchema();
  const db = s.pool();
  await addOrgs(db, ['org_a', 'org_b']);
  return { store: new PgLimitStore(db), close: s.close };
});

creditLedgerContract('postgres', async () => {
  const s = await freshSchema();
  const db = s.pool();
  // The ledger's rows reference orgs, as they do in a real deployment.
  await addOrgs(db, ['org_a', 'org_b']);
  return { ledger: new PgCreditLedger(db), close: s.close };
});

creditLedgerContract('postgres behind the write-behind buffer', async () => {
  const s = await freshSchema();
  const db = s.pool();
  await addOrgs(db, ['org_a', 'org_b']);
  return { ledger: new BufferedCreditLedger(new PgCreditLedger(db), () => 0), close: s.close };
});

ingestKeyStoreContract('postgres', async () => {
  const s = await freshSchema();
  return { store: new PgIngestKeyStore(s.pool()), close: s.close };
});

overlayStoreContract('postgres', async () => {
  const s = await freshSchema();
  return { store: new PgOverlayStore(s.pool()), close: s.close };
});

intelListStoreContract('postgres', async () => {
  const s = await freshSchema();
  return { store: new PgIntelListStore(s.pool()), other: () => new PgIntelListStore(s.pool()), close: s.close };
});

snapshotCatalogContract('postgres', async () => {
  const s = await freshSchema();
  return {
    catalog: new PgSnapshotCatalog(s.pool()),
    // Another pool, the first left open: what a node started after a crash of the first sees.
    reopen: async () => new PgSnapshotCatalog(s.pool()),
    close: s.close,
  };
});

describe('PostgreSQL schema migrations', () => {
  it('should migrate a fresh schema once when three nodes start at the same moment, and apply nothing the next time', async () => {
    const schema = uniqueTestName('umbra_pg_mig');
    try {
      const runs = await Promise.all([1, 2, 3].map(() => migrate(url, { schema })));
      assert.deepEqual(
        runs.map((r) => r.applied).sort((a, b) => b.length - a.length),
        // Every file of migrations/, once, by one of the three.
        [
          readdirSync(MIGRATIONS_DIR)
            .map((f) => f.replace(/\.sql$/, ''))
            .sort(),
          [],
          [],
        ],
      );
      assert.deepEqual(await migrate(url, { schema }), { applied: [] });
      const tables = await admin().query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name",
        [schema],
      );
      assert.deepEqual(
        tables.rows.map((r) => r.table_name),
        [
          'api_keys',
          'credit_accounts',
          'credit_blocks',
          'export_publish_intents',
          'export_rollups',
          'export_snapshots',
          'ingest_keys',
          'intel_lists',
          'intel_overlays',
          'members',
          'orgs',
          'pgmigrations',
          'rate_limits',
          'revisions',
        ],
      );
      // Amounts, sizes and times that pass 2^31 have room.
      const types = await admin().query<{ c: string; data_type: string }>(
        `SELECT table_name || '.' || column_name AS c, data_type FROM information_schema.columns
          WHERE table_schema = $1 AND column_name IN ('balance', 'allotment', 'period_seconds', 'period_end', 'size', 'period_start_ms', 'started_at_ms')
          ORDER BY 1`,
        [schema],
      );
      assert.equal(types.rows.length, 9, 'credit_accounts (4), credit_blocks.period_end, snapshots, intents');
      for (const r of types.rows) assert.equal(r.data_type, 'bigint', r.c);
      const applied = await admin().query(`SELECT name FROM "${schema}".pgmigrations`);
      assert.equal(applied.rowCount, readdirSync(MIGRATIONS_DIR).length, 'each migration recorded once');
    } finally {
      await dropSchema(schema);
    }
  });
});

describe('PostgreSQL backends beyond the contracts', () => {
  it('should give lists stored before publication times were kept their import time, read as from the import', async () => {
    const s = await freshSchema();
    try {
      const file = readFileSync(join(MIGRATIONS_DIR, '1764300000000_list-published-at.sql'), 'utf8');
      const [up, down] = file.split('-- Down Migration') as [string, string];
      const q = async (sql: string) => admin().query(`SET search_path TO "${s.name}"; ${sql}`);
      // Back to the table as it was, with a list in it, then forward again.
      await q(down);
      await q(`INSERT INTO intel_lists (kind, provider, version, imported_at, format, cidrs)
        VALUES ('TOR_NODE', 'TOR', '0123456789abcdef', 1795000000, 'tor-bulk-exit-list', ARRAY['185.220.101.18/32'])`);
      await q(up);
      const [list] = await new PgIntelListStore(s.pool()).all();
      assert.deepEqual([list?.published_at, list?.published_from, list?.imported_at], [1_795_000_000, 'import', 1_795_000_000]);
      await assert.rejects(q("UPDATE intel_lists SET published_from = 'guess'"), /check constraint/);
    } finally {
      await s.close();
    }
  });

  it('should let exactly as many of 50 concurrent debits over 4 connections succeed as the balance of 20 covers', async () => {
    const s = await freshSchema();
    try {
      const db = s.pool({ max: 4 });
      await addOrgs(db, ['org_a']);
      const ledger = new PgCreditLedger(db);
      await ledger.open('org_a', { allotment: 20, periodSeconds: 86_400 }, 0);
      const results = await Promise.all(Array.from({ length: 50 }, () => ledger.debit('org_a', 1, 10)));
      assert.equal(db.pool.totalCount, 4, 'the debits ran on four connections at once');
      assert.equal(results.filter((r) => r.ok).length, 20);
      assert.deepEqual(
        results
          .filter((r) => r.ok)
          .map((r) => r.balance)
          .sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i),
        'each success saw its own balance',
      );
      for (const r of results.filter((x) => !x.ok)) assert.equal(r.balance, 0, 'a refused debit reports the balance as it stands');
      assert.equal((await ledger.get('org_a', 10))?.balance, 0);
    } finally {
      await s.close();
    }
  });

  it('should never consume below zero, nor lose a charge, when two nodes consume at once', async () => {
    const s = await freshSchema();
    try {
      const [one, two] = [new PgCreditLedger(s.pool({ max: 2 })), new PgCreditLedger(s.pool({ max: 2 }))];
      await addOrgs(s.pool({ max: 1 }), ['org_a']);
      await one.open('org_a', { allotment: 100, periodSeconds: 86_400 }, 0);
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).consume('org_a', 3, 10)));
      assert.equal((await two.get('org_a', 10))?.balance, 10);
      await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).consume('org_a', 3, 10)));
      assert.equal((await one.get('org_a', 10))?.balance, 0);
    } finally {
      await s.close();
    }
  });

  it('should keep amounts, sizes and millisecond times beyond 2^31 exact, as numbers', async () => {
    const s = await freshSchema();
    try {
      const db = s.pool();
      await addOrgs(db, ['org_a']);
      const ledger = new PgCreditLedger(db);
      await ledger.open('org_a', { allotment: 5_000_000_000, periodSeconds: 86_400 }, 1_795_000_000);
      assert.deepEqual(await ledger.debit('org_a', 1, 1_795_000_001), { ok: true, balance: 4_999_999_999, resetsAt: 1_795_086_400 });
      const catalog = new PgSnapshotCatalog(db);
      const snap = {
        feed: 'torrents' as const,
        kind: 'daily' as const,
        date: '2026-11-21',
        hour: null,
        key: 'torrents/2026/11/21/torrents.parquet',
        size: 6_000_000_000,
        rows: 3_000_000_000,
        checksum: 'e'.repeat(64),
        schema: { fields: [{ name: 'timestamp', type: 'BIGINT' as const }] },
        createdAt: 1_795_100_000,
      };
      await catalog.upsert(snap);
      await catalog.beginPublish({ ...snap, checksum: 'f'.repeat(64) }, 1_795_100_000_123);
      assert.deepEqual(await catalog.get('torrents', '2026-11-21'), snap);
      assert.equal((await catalog.publishIntents())[0]?.startedAtMs, 1_795_100_000_123);
      assert.equal(typeof (await catalog.count()), 'number');
    } finally {
      await s.close();
    }
  });

  it('should show an overlay change made on another node in this node’s revision', async () => {
    const s = await freshSchema();
    try {
      const here = new PgOverlayStore(s.pool());
      const there = new PgOverlayStore(s.pool());
      const r0 = await here.revision();
      await there.add({ org_id: 'org_a', cidr: '192.0.2.0/24', category: 'TOR_NODE', provider: null, action: 'deny', created_at: 1 });
      const r1 = await here.revision();
      assert.notEqual(r1, r0);
      assert.equal((await here.list('org_a')).length, 1);
      await there.clear('org_a');
      assert.notEqual(await here.revision(), r1);
      assert.equal(await there.revision(), await here.revision());
    } finally {
      await s.close();
    }
  });

  it('should undo a publish completion that fails halfway: the old row stays listed and the intent stays recorded', async () => {
    const s = await freshSchema();
    try {
      const db = s.pool();
      const catalog = new PgSnapshotCatalog(db);
      const old = {
        feed: 'proxies' as const,
        kind: 'hourly' as const,
        date: '2026-11-21',
        hour: 5,
        key: 'proxies/latest/05_proxies.parquet',
        size: 1,
        rows: 1,
        checksum: 'a'.repeat(64),
        schema: { fields: [] },
        createdAt: 1,
      };
      const next = { ...old, date: '2026-11-22', checksum: 'c'.repeat(64) };
      await catalog.upsert(old);
      await catalog.beginPublish(next, 1_000);
      // A row the completion cannot write (no period start for this date), refused after the old row of
      // the key was deleted in the same transaction.
      await assert.rejects(catalog.completePublish({ ...next, date: 'not-a-date' }, { onlyIfPending: true }));
      assert.deepEqual(await catalog.get('proxies', '2026-11-21', 5), old);
      assert.equal((await catalog.publishIntents()).length, 1);
      assert.equal(await catalog.completePublish(next, { onlyIfPending: true }), true);
      assert.equal(await catalog.get('proxies', '2026-11-21', 5), undefined);
    } finally {
      await s.close();
    }
  });
});

describe('PostgreSQL unavailable', () => {
  const isUnavailable = (e: unknown) => {
    const app = asAppError(e);
    assert.equal(app.code, 'UNAVAILABLE', String((e as Error)?.message));
    assert.equal(STATUS[app.code].http, 503);
    assert.ok((app.context.retryAfter ?? 0) > 0, 'with Retry-After');
    assert.doesNotMatch(app.message, /127\.0\.0\.1|postgres:\/\//, 'the detail names the cause, not the address');
    return true;
  };

  it('should fail a store call within 2.5 s with the 503 error when nothing listens at the address', async () => {
    const reported: string[] = [];
    const db = new PgPool('postgres://postgres@127.0.0.1:1/test', { onUnavailable: (r) => reported.push(r) });
    try {
      const started = Date.now();
      await assert.rejects(new PgAccountStore(db).findOrg('org_a'), isUnavailable);
      await assert.rejects(new PgCreditLedger(db).debit('org_a', 1, 10), isUnavailable);
      assert.ok(Date.now() - started < 2_500, `took ${Date.now() - started} ms`);
      assert.deepEqual(reported, ['ECONNREFUSED'], 'told once');
      assert.equal(db.problems().length, 1);
    } finally {
      await db.close();
    }
  });

  it('should fail a store call within 2.5 s with the 503 error when the server accepts connections and never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const db = new PgPool(`postgres://postgres@127.0.0.1:${port}/test`);
    try {
      const store = new PgOverlayStore(db);
      for (const call of [() => store.revision(), () => store.clear('org_a')]) {
        const started = Date.now();
        await assert.rejects(call(), isUnavailable);
        assert.ok(Date.now() - started < 2_500, `took ${Date.now() - started} ms`);
      }
    } finally {
      await db.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('should answer 503 within 2 s when the server stops answering, then at once during the hold, and recover by itself', async () => {
    const s = await freshSchema();
    // A proxy to the test database that can go silent: connections stay open and nothing passes.
    const target = new URL(url);
    let frozen = false;
    const links: Array<[Socket, Socket]> = [];
    const setFlow = (on: boolean) => {
      for (const [client, server] of links)
        if (on) {
          client.pipe(server);
          server.pipe(client);
          client.resume();
          server.resume();
        } else {
          client.unpipe(server);
          server.unpipe(client);
          client.pause();
          server.pause();
        }
    };
    const proxy: Server = createServer((client) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      for (const [a, b] of [
        [client, server],
        [server, client],
      ] as const) {
        a.on('error', () => b.destroy());
        a.on('close', () => b.destroy());
      }
      links.push([client, server]);
      if (frozen) {
        client.pause();
        server.pause();
      } else {
        client.pipe(server);
        server.pipe(client);
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const db = new PgPool(viaProxy.href, { schema: s.name, max: 2, silentHoldMs: 1_000 });
    try {
      const store = new PgAccountStore(db);
      await store.listOrgs();
      frozen = true;
      setFlow(false);
      let started = Date.now();
      await assert.rejects(store.listOrgs(), isUnavailable);
      const first = Date.now() - started;
      assert.ok(first < 2_000, `the first call took ${first} ms`);
      started = Date.now();
      await assert.rejects(store.findOrg('org_a'), isUnavailable);
      assert.ok(Date.now() - started < 100, `a call during the hold took ${Date.now() - started} ms`);
      assert.match(db.problems()[0] ?? '', /statement timeout|connect timeout/);
      await new Promise((r) => setTimeout(r, 1_050));
      // After the hold one call finds out (and waits); the others still fail at once meanwhile.
      const probe = store.listOrgs();
      started = Date.now();
      await assert.rejects(store.findOrg('org_a'), isUnavailable);
      assert.ok(Date.now() - started < 100, `a call during the probe took ${Date.now() - started} ms`);
      await assert.rejects(probe, isUnavailable);
      frozen = false;
      setFlow(true);
      await new Promise((r) => setTimeout(r, 1_050));
      assert.deepEqual(await store.listOrgs(), [], 'answers again without a restart');
      assert.equal(await store.findOrg('org_a'), undefined);
      assert.deepEqual(db.problems(), [], 'recovered');
    } finally {
      await db.close().catch(() => {});
      for (const [a, b] of links) {
        a.destroy();
        b.destroy();
      }
      await new Promise((resolve) => proxy.close(resolve));
      await s.close();
    }
  });

  it('should fail a migration within 2.5 s when nothing listens at the address', async () => {
    const started = Date.now();
    await assert.rejects(migrate('postgres://postgres@127.0.0.1:1/test', { schema: 'never_created' }), isUnavailable);
    assert.ok(Date.now() - started < 2_500, `took ${Date.now() - started} ms`);
  });

  it('should end a statement that waits past its deadline with the 503 error, the waiting connection usable again', async () => {
    const s = await freshSchema();
    const holder = await admin().connect();
    try {
      const db = s.pool({ statementTimeoutMs: 300, max: 1 });
      await addOrgs(db, ['org_a']);
      const ledger = new PgCreditLedger(db);
      await ledger.open('org_a', { allotment: 10, periodSeconds: 86_400 }, 0);
      // Another session holds the team's row: the debit waits for it until its deadline.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${s.name}".credit_accounts WHERE org_id = 'org_a' FOR UPDATE`);
      const started = Date.now();
      await assert.rejects(ledger.debit('org_a', 1, 10), isUnavailable);
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 1_500, `took ${took} ms`);
      await holder.query('ROLLBACK');
      assert.equal((await ledger.debit('org_a', 1, 10)).balance, 9, 'the next call works, nothing was charged by the first');
      assert.deepEqual(db.problems(), [], 'recovered');
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      await s.close();
    }
  });

  it('should survive its idle connections being closed by the server, and reconnect on the next call', async () => {
    const s = await freshSchema();
    try {
      const idleErrors: Error[] = [];
      const db = s.pool({ max: 2, onIdleError: (e) => idleErrors.push(e), applicationName: `umbra-idle-${s.name}` });
      const store = new PgAccountStore(db);
      await Promise.all([store.listOrgs(), store.listOrgs()]);
      assert.ok(db.pool.idleCount >= 1);
      const killed = await admin().query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `umbra-idle-${s.name}`,
      ]);
      assert.ok((killed.rowCount ?? 0) >= 1);
      for (let i = 0; i < 100 && idleErrors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(idleErrors.length >= 1, 'the pool reported the lost connection instead of crashing the process');
      assert.deepEqual(await store.listOrgs(), []);
    } finally {
      await s.close();
    }
  });
});
