import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { requireEngine, testEngines } from '../../../test/helpers/engines.ts';
import { admin, freshSchema } from '../../../test/helpers/pg-schema.ts';
import { jobLockContract } from '../contract/job-lock.contract.ts';
import { PgJobLock } from './pg-job-lock.ts';

before(() => requireEngine('PostgreSQL', testEngines.databaseUrl));

jobLockContract('postgres (two nodes)', async () => {
  const s = await freshSchema();
  return { a: new PgJobLock(s.pool(), s.name), b: new PgJobLock(s.pool(), s.name), close: s.close };
});

describe('PostgreSQL job lock', () => {
  it("should free a dead node's lock at once and tell a holder whose connection was cut", async () => {
    const s = await freshSchema();
    try {
      const a = new PgJobLock(s.pool({ applicationName: 'umbra lock-test-a' }), s.name);
      const b = new PgJobLock(s.pool(), s.name);
      const held = await a.tryAcquire('exports');
      assert.ok(held);
      assert.equal(await b.tryAcquire('exports'), undefined);
      // What kill -9 of node a does to its connection: the server ends the session.
      await admin().query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'umbra lock-test-a'");
      for (let i = 0; i < 50 && !held.lost.aborted; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(held.lost.aborted, true, 'the holder learns it lost the lock');
      const taken = await b.tryAcquire('exports');
      assert.ok(taken, 'another node takes it over');
      await taken.release();
      await held.release(); // on a dead connection: harmless
    } finally {
      await s.close();
    }
  });

  it('should keep deployments that share a database apart (the key includes the schema)', async () => {
    const s1 = await freshSchema();
    const s2 = await freshSchema();
    try {
      const one = await new PgJobLock(s1.pool(), s1.name).tryAcquire('exports');
      const two = await new PgJobLock(s2.pool(), s2.name).tryAcquire('exports');
      assert.ok(one && two);
      await one.release();
      await two.release();
    } finally {
      await s1.close();
      await s2.close();
    }
  });
});
