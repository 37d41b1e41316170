import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlushLoop } from './flush-loop.ts';

/** Starts a loop whose flushes fail, waits for the first failure, and returns what /health would say. */
async function problemsWhileFailing(unsent: number): Promise<string[]> {
  let now = 1_000_000;
  let failed: () => void;
  const firstFailure = new Promise<void>((r) => (failed = r));
  const loop = new FlushLoop(
    async () => {
      throw new Error('The database is unavailable right now (ECONNREFUSED). Retry shortly.');
    },
    () => now,
    () => unsent,
  );
  // The loop's timers are unref'd (they never keep a process alive): this one keeps the test's.
  const alive = setInterval(() => {}, 1_000);
  loop.start(1, { onFailing: () => failed() });
  try {
    await firstFailure;
    now += 7_000;
    return loop.problems();
  } finally {
    loop.stop();
    clearInterval(alive);
  }
}

describe('FlushLoop.problems', () => {
  it('should count the charges waiting to be written while flushes fail', async () => {
    const [line] = await problemsWhileFailing(12);
    assert.match(line!, /^credits: 12 charged credits not yet written for 7 s \(The database is unavailable/);
  });

  it('should not speak of unwritten charges when none is waiting (a node only renewing its block leases)', async () => {
    const problems = await problemsWhileFailing(0);
    assert.equal(problems.length, 1, 'the fault is still reported');
    assert.match(problems[0]!, /^credits: the ledger has not answered for 7 s \(The database is unavailable.*\); no charge is waiting/);
    assert.doesNotMatch(problems[0]!, /not yet written/);
  });
});
