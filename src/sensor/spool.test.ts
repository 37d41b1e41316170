import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { openSpoolRoot, Spool, SpoolBudget, SpoolFull, SYNC_GAP_MS } from './spool.ts';

function root(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-spool-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const open = (dir: string, o: { max?: number; segmentBytes?: number; budget?: SpoolBudget } = {}) =>
  Spool.open({
    root: dir,
    feed: 'honeypot_http',
    spoolId: 'unit-spool',
    segmentBytes: o.segmentBytes ?? 1_048_576,
    budget: o.budget ?? new SpoolBudget(o.max ?? 64 * 1_048_576),
  });

const rec = (i: number) => Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(100) }));
const ids = (lines: Buffer[]) => lines.map((l) => (JSON.parse(l.toString()) as { i: number }).i);

describe('the sensor spool', () => {
  it('should hand out appended records in order, in batches, and keep what was not acknowledged across a reopen', async (t) => {
    const dir = root(t);
    const s = await open(dir);
    await Promise.all(Array.from({ length: 25 }, (_, i) => s.append(rec(i))));
    assert.equal(s.depth, 25);
    const b1 = (await s.nextBatch(10, 1_048_576))!;
    assert.deepEqual([b1.from, b1.to, b1.key], [1, 10, 'unit-spool.honeypot_http.1-10']);
    assert.deepEqual(ids(b1.lines), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await s.ack(b1);
    assert.equal(s.depth, 15);
    await s.close();
    const again = await open(dir);
    assert.equal(again.depth, 15);
    const b2 = (await again.nextBatch(100, 1_048_576))!;
    assert.deepEqual(
      ids(b2.lines),
      Array.from({ length: 15 }, (_, i) => 10 + i),
    );
  });

  it('should send the batch that was in flight at a crash again, whole and under the same key, even after more records came', async (t) => {
    const dir = root(t);
    const s = await open(dir);
    for (let i = 0; i < 5; i++) await s.append(rec(i));
    const inflight = (await s.nextBatch(3, 1_048_576))!;
    // No close, no ack: the process died here. The next start appends more before the uploader runs.
    const after = await open(dir);
    await after.append(rec(5));
    const resent = (await after.nextBatch(100, 1_048_576))!;
    assert.deepEqual([resent.key, resent.from, resent.to], [inflight.key, 1, 3]);
    assert.deepEqual(ids(resent.lines), [0, 1, 2]);
    await after.ack(resent);
    assert.deepEqual(ids((await after.nextBatch(100, 1_048_576))!.lines), [3, 4, 5]);
  });

  it('should cut a torn tail left by a crash mid-append and keep appending after the last whole record', async (t) => {
    const dir = root(t);
    const s = await open(dir);
    for (let i = 0; i < 3; i++) await s.append(rec(i));
    const seg = join(dir, 'honeypot_http', readdirSync(join(dir, 'honeypot_http')).find((n) => n.endsWith('.seg'))!);
    const whole = statSync(seg).size;
    // Half a frame: a length and part of a payload, as a kill -9 between write and fsync can leave.
    appendFileSync(seg, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 65, 66]));
    const reopened = await open(dir);
    assert.equal(reopened.repairedBytes, 10);
    assert.equal(statSync(seg).size, whole);
    assert.equal(reopened.depth, 3);
    await reopened.append(rec(3));
    assert.deepEqual(ids((await reopened.nextBatch(100, 1_048_576))!.lines), [0, 1, 2, 3]);
  });

  it('should refuse appends past its byte budget, and free the budget as uploaded segments are deleted', async (t) => {
    const dir = root(t);
    const budget = new SpoolBudget(20 * 1024);
    const s = await open(dir, { budget, segmentBytes: 4096 });
    let full = 0;
    for (let i = 0; i < 300; i++)
      await s.append(rec(i)).catch((e) => {
        assert.ok(e instanceof SpoolFull);
        full++;
      });
    assert.ok(full > 0, 'some appends were refused');
    assert.ok(budget.used <= budget.max);
    const kept = s.depth;
    assert.equal(kept + full, 300);
    const segments = () => readdirSync(join(dir, 'honeypot_http')).filter((n) => n.endsWith('.seg')).length;
    assert.ok(segments() > 3);
    for (;;) {
      const b = await s.nextBatch(50, 1_048_576);
      if (!b) break;
      await s.ack(b);
    }
    assert.equal(s.depth, 0);
    assert.equal(segments(), 1, 'only the segment appends go to is kept');
    assert.ok(budget.used <= 4096 + 200);
    await s.append(rec(1000));
  });

  it('should keep every record reported written through a SIGKILL, and count only fsynced ones as spooled', async (t) => {
    const dir = root(t);
    // A writer in a process of its own: once 3,000 records are reported written it says how many and
    // freezes (appends staged, fsyncs pending, nothing more runs) until it is killed.
    const script = `
      import { writeSync } from 'node:fs';
      import { Spool, SpoolBudget } from ${JSON.stringify(join(import.meta.dirname, 'spool.ts'))};
      const s = await Spool.open({ root: ${JSON.stringify(dir)}, feed: 'honeypot_http', spoolId: 'unit-spool', segmentBytes: 65536, budget: new SpoolBudget(1 << 30) });
      let next = 0;
      let written = 0;
      const more = () => {
        for (let k = 0; k < 50; k++) {
          s.stage(Buffer.from(JSON.stringify({ i: next++, pad: 'x'.repeat(100) })), () => {}).then((ok) => {
            if (!ok) throw new Error('a write failed');
            if (++written < 3000) return;
            writeSync(1, \`\${written} written, \${s.depth} fsynced\\n\`);
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          });
        }
        setImmediate(more);
      };
      more();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.after(() => child.kill('SIGKILL'));
    const reported = await new Promise<number>((resolve, reject) => {
      child.stdout.setEncoding('utf8').once('data', (c: string) => {
        child.kill('SIGKILL');
        resolve(Number(/^(\d+) written/.exec(c)?.[1]));
      });
      child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before it reported`)));
    });
    await new Promise((r) => child.once('exit', r));
    const s = await open(dir);
    t.after(() => s.close());
    assert.ok(s.depth >= reported, `${s.depth} records on disk after a SIGKILL that came after ${reported} were reported written`);
    const seen: number[] = [];
    for (;;) {
      const b = await s.nextBatch(1000, 1_048_576);
      if (!b) break;
      seen.push(...ids(b.lines));
      await s.ack(b);
    }
    assert.deepEqual(
      seen.slice(0, reported),
      Array.from({ length: reported }, (_, i) => i),
    );
  });

  it('should not count a written record as spooled before its fdatasync', async (t) => {
    const s = await open(root(t));
    t.after(() => s.close());
    let told: (e: unknown) => void = () => {};
    const durable = new Promise<unknown>((r) => (told = r));
    const written = await s.stage(rec(0), (e) => told(e));
    const atWrite = s.depth;
    const error = await durable;
    assert.deepEqual([written, atWrite, error, s.depth], [true, 0, undefined, 1]);
  });

  it('should space its fdatasyncs at least SYNC_GAP_MS apart under a steady stream of appends, each covering every write before it', async (t) => {
    const s = await open(root(t));
    t.after(() => s.close());
    const started = performance.now();
    const durable: Array<Promise<unknown>> = [];
    // One append per turn of the event loop, each its own write, for about 60 ms.
    for (let i = 0; performance.now() - started < 60; i++) {
      durable.push(new Promise((resolve) => void s.stage(rec(i), resolve)));
      await new Promise((r) => setImmediate(r));
    }
    const errors = await Promise.all(durable);
    const elapsed = performance.now() - started;
    assert.ok(errors.every((e) => e === undefined));
    assert.equal(s.depth, durable.length);
    // Without the gap every write of a turn would have its own fdatasync, about one per turn.
    assert.ok(durable.length > 100, `${durable.length} appends`);
    assert.ok(s.syncs >= 1 && s.syncs <= Math.floor(elapsed / SYNC_GAP_MS) + 1, `${s.syncs} fdatasyncs in ${elapsed.toFixed(1)} ms`);
  });

  it('should keep one sensor per spool dir, and take over the lock of a dead one', (t) => {
    const dir = root(t);
    const a = openSpoolRoot(dir);
    assert.match(a.spoolId, /^[A-Za-z0-9_-]{12}$/);
    // The same process again (a restart in a test): its own pid is not a live other holder.
    const b = openSpoolRoot(dir);
    assert.equal(b.spoolId, a.spoolId, 'the id is kept, so keys of batches in flight stay the same');
    b.release();
    // Another live process holds it: refused, naming the pid.
    const other = spawn('sleep', ['30']);
    t.after(() => other.kill('SIGKILL'));
    writeFileSync(join(dir, 'lock'), `${other.pid}\n`);
    assert.throws(() => openSpoolRoot(dir), new RegExp(`in use by another sensor \\(pid ${other.pid}\\)`));
  });
});
