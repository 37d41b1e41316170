import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FileFeedLog } from './file-feed-log.ts';

const HOUR = Date.UTC(2026, 10, 22, 12);
const collect = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
};

describe(FileFeedLog.name, () => {
  it('should keep every acknowledged record when the process is killed mid-write, and append cleanly after', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-crash-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '../../../test/helpers/feed-log-writer.ts'), dir, String(HOUR)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let acked = 0;
    await new Promise<void>((resolve) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        acked = Number(line);
        // Kill without warning while it keeps writing: SIGKILL gives it no chance to flush anything.
        if (acked >= 20_000) child.kill('SIGKILL');
      });
      child.once('exit', () => resolve());
    });
    assert.ok(acked >= 20_000);
    const log = new FileFeedLog(dir);
    const lines = await collect(log.readHour('proxies', HOUR));
    const ns = lines.map((l) => (JSON.parse(l) as { n: number }).n);
    assert.ok(ns.length >= acked, `${ns.length} stored, ${acked} acknowledged`);
    assert.deepEqual(ns, [...Array(ns.length).keys()], 'whole records, in order, none lost');
    await log.append('proxies', [{ timeMs: HOUR, line: '{"n":-1}' }]);
    const after = await collect(log.readHour('proxies', HOUR));
    assert.equal(after.at(-1), '{"n":-1}');
    assert.equal(after.length, ns.length + 1);
    await log.close();
  });

  it('should cut a torn last line before appending, so the next record is whole', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-torn-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const first = new FileFeedLog(dir);
    await first.append('ja4t', [{ timeMs: HOUR, line: '{"a":1}' }]);
    await first.close();
    const file = join(dir, 'ja4t', '2026-11-22', '12.ndjson');
    appendFileSync(file, '{"torn":'); // what a crash mid-write leaves
    const second = new FileFeedLog(dir);
    assert.deepEqual(await collect(second.readHour('ja4t', HOUR)), ['{"a":1}'], 'readers skip the torn line');
    // Bulk readers are told the file is not whole; the version counts only the whole line.
    const torn = await second.hourFile('ja4t', HOUR);
    assert.deepEqual({ whole: torn?.whole, bytes: torn?.version.split(':')[1] }, { whole: false, bytes: '8' });
    await second.append('ja4t', [{ timeMs: HOUR, line: '{"b":2}' }]);
    await second.close();
    assert.equal(readFileSync(file, 'utf8'), '{"a":1}\n{"b":2}\n');
    const repaired = await new FileFeedLog(dir).hourFile('ja4t', HOUR);
    assert.equal(repaired?.whole, true);
    assert.notEqual(repaired?.version, torn?.version);
    // A partition holding only a torn line has no records.
    const lone = join(dir, 'ja4t', '2026-11-22', '13.ndjson');
    appendFileSync(lone, '{"x":');
    assert.equal(await new FileFeedLog(dir).hourFile('ja4t', HOUR + 3_600_000), undefined);
  });
});
