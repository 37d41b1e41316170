import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteGate } from './sqlite-gate.ts';

/**
 * Two connections to one file in rollback-journal mode, where a writer's EXCLUSIVE lock also keeps
 * readers out: the hardest case the gate meets (in WAL mode only writers wait for writers).
 */
function lockedPair(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-gate-'));
  const file = join(dir, 'db');
  const holder = new Database(file, { timeout: 0 });
  holder.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
  const reader = new Database(file, { timeout: 0 });
  const read = reader.prepare('SELECT count(*) AS n FROM t');
  t.after(() => {
    if (holder.inTransaction) holder.exec('ROLLBACK');
    holder.close();
    reader.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const lock = () => {
    holder.exec('BEGIN EXCLUSIVE');
    holder.prepare('INSERT INTO t VALUES (2)').run();
  };
  const unlock = () => holder.exec('COMMIT');
  return { lock, unlock, read: () => (read.get() as { n: number }).n };
}

/** The longest gap between ticks of a 1 ms interval while `work` runs: what the event loop was held for. */
async function loopStall(work: Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  await work.catch(() => {});
  clearInterval(timer);
  return worst;
}

describe(SqliteGate.name, () => {
  it('should retry a statement that meets another connection lock on timers, then answer UNAVAILABLE at its deadline', async (t) => {
    const db = lockedPair(t);
    const events: string[] = [];
    const gate = new SqliteGate({ deadlineMs: 300, onUnavailable: (r) => events.push(`down ${r}`), onRecovered: () => events.push('up') });
    assert.equal(await gate.run(db.read), 1);
    db.lock();
    const started = performance.now();
    const attempt = gate.run(db.read);
    const stall = await loopStall(attempt);
    await assert.rejects(
      attempt,
      (e: { code?: string; context?: { retryAfter?: number } }) => e.code === 'UNAVAILABLE' && (e.context?.retryAfter ?? 0) >= 1,
    );
    const took = performance.now() - started;
    assert.ok(took >= 300 && took < 1_000, `gave up after ${took.toFixed(0)} ms`);
    assert.ok(stall < 60, `the event loop was never held (longest gap ${stall.toFixed(1)} ms)`);
    await assert.rejects(gate.run(db.read));
    assert.deepEqual(events, ['down SQLITE_BUSY: locked by another process'], 'told once per outage');
    assert.match(gate.problems()[0]!, /^embedded database: unavailable for \d+ s \(SQLITE_BUSY/);
    db.unlock();
    assert.equal(await gate.run(db.read), 2);
    assert.deepEqual(events.slice(1), ['up']);
    assert.deepEqual(gate.problems(), []);
  });

  it('should succeed as soon as the lock is released within the deadline', async (t) => {
    const db = lockedPair(t);
    const gate = new SqliteGate({ deadlineMs: 2_000 });
    db.lock();
    setTimeout(db.unlock, 150);
    const started = performance.now();
    assert.equal(await gate.run(db.read), 2);
    const took = performance.now() - started;
    assert.ok(took >= 140 && took < 600, `answered ${took.toFixed(0)} ms after the first attempt`);
  });

  it('should pass any other error through at once, untouched', async () => {
    const gate = new SqliteGate({ deadlineMs: 2_000 });
    await assert.rejects(
      gate.run(() => {
        throw Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' });
      }),
      /disk full/,
    );
  });
});
