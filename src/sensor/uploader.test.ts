import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { Spool, SpoolBudget } from './spool.ts';
import { FeedUploader, type PostOutcome } from './uploader.ts';

async function setup(
  t: TestContext,
  answers: PostOutcome[],
  otherwise: PostOutcome = { kind: 'stored', accepted: 0, rejected: 0, replayed: false },
) {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-uploader-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const spool = await Spool.open({
    root: dir,
    feed: 'honeypot_http',
    spoolId: 'u',
    segmentBytes: 1_048_576,
    budget: new SpoolBudget(1 << 26),
  });
  const posts: Array<{ key: string; lines: number }> = [];
  const sleeps: number[] = [];
  const up = new FeedUploader(
    'honeypot_http',
    spool,
    async (_feed, key, body) => {
      posts.push({ key, lines: body.toString().trim().split('\n').length });
      return answers.shift() ?? otherwise;
    },
    { batchRecords: 2, batchBytes: 1 << 20, lingerMs: 0 },
    // No real waits: a sleep is recorded and returns at once.
    {
      now: () => 1_800_000_000_000,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
        await new Promise((r) => setImmediate(r));
      },
    },
  );
  t.after(() => up.stop());
  return { spool, up, posts, sleeps };
}

/** Waits for the spool's file I/O (fsyncs), polling; the uploader's own waits are not real. */
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), 'condition not reached');
};

describe('the sensor uploader', () => {
  it('should resend a failed batch under the same key after the recipe delays, and move on once stored', async (t) => {
    const retry: PostOutcome = { kind: 'retry', status: 503, detail: 'down' };
    const { spool, up, posts, sleeps } = await setup(t, [
      retry,
      retry,
      retry,
      { kind: 'stored', accepted: 2, rejected: 0, replayed: true },
    ]);
    for (let i = 0; i < 3; i++) await spool.append(Buffer.from(`{"i":${i}}`));
    up.start();
    await until(() => spool.depth === 0);
    assert.deepEqual(
      posts.map((p) => p.key),
      ['u.honeypot_http.1-2', 'u.honeypot_http.1-2', 'u.honeypot_http.1-2', 'u.honeypot_http.1-2', 'u.honeypot_http.3-3'],
    );
    assert.deepEqual(sleeps, [1000, 2000, 4000]);
    assert.deepEqual([up.stats.uploaded, up.stats.replayed, up.stats.failures, up.stats.consecutiveFailures], [2, 1, 3, 0]);
  });

  it("should wait the server's Retry-After when it gives one, and drop a batch the server refuses for good (counted)", async (t) => {
    const { spool, up, sleeps } = await setup(t, [
      { kind: 'retry', status: 409, detail: 'busy', retryAfterMs: 7000 },
      { kind: 'refused', status: 422, detail: 'every record invalid' },
    ]);
    await spool.append(Buffer.from('{"i":0}'));
    up.start();
    await until(() => spool.depth === 0);
    assert.deepEqual(sleeps, [7000]);
    assert.equal(up.stats.rejected, 1);
    assert.match(up.stats.lastError!, /refused \(422\): every record invalid/);
  });

  it('should report failing past the give-up count of the recipe, and keep every record', async (t) => {
    const { spool, up } = await setup(t, [], { kind: 'retry', status: 0, detail: 'ECONNREFUSED' });
    await spool.append(Buffer.from('{"i":0}'));
    up.start();
    await until(() => up.stats.consecutiveFailures >= 8);
    assert.equal(up.failing, true);
    assert.equal(spool.depth, 1);
  });
});
