import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { noDamage, salvage, validBlocks } from './log-lines.ts';

const a = JSON.stringify({ ip: '192.0.2.1', timestamp: 1, details: { path: '/x{"y', nested: { k: [1, { z: 2 }] } } });
const b = JSON.stringify({ ip: '192.0.2.2', timestamp: 2, note: 'a "quoted" {"brace"} in text' });
const c = JSON.stringify({ ip: '192.0.2.3', timestamp: 3 });
const found = (line: string) => {
  const s = salvage(line);
  return { lines: s.records.map((r) => r.line), skipped: s.skipped };
};

describe('salvage: whole records out of a damaged log line', () => {
  it('should keep the record an older writer glued to a torn one, wherever the tear fell', () => {
    for (let cut = 1; cut < a.length; cut++) {
      const torn = a.slice(0, cut);
      assert.deepEqual(found(torn + b), { lines: [b], skipped: 1 }, `torn after ${cut} bytes: ${torn}`);
    }
  });

  it('should keep every whole record of a line whose newlines were lost, and skip garbage around them', () => {
    assert.deepEqual(found(a + b + c), { lines: [a, b, c], skipped: 0 });
    assert.deepEqual(found(`\u0000\u0000${a}garbage${c}{"half`), { lines: [a, c], skipped: 3 });
    assert.deepEqual(found('garbage {"ip": 1, tail'), { lines: [], skipped: 1 });
    assert.deepEqual(found(''), { lines: [], skipped: 0 });
  });

  it('should not take JSON that is no record (no timestamp, not an object) for one', () => {
    assert.deepEqual(found('{"k":1}'), { lines: [], skipped: 1 });
    assert.deepEqual(found(`{"ip":"x","d":{"timestamp":"s"}${c}`), { lines: [c], skipped: 1 });
  });

  it('should bound its work on a long run of would-be record starts', () => {
    const started = process.hrtime.bigint();
    const s = salvage('{"'.repeat(200_000) + c);
    assert.ok(Number(process.hrtime.bigint() - started) / 1e9 < 2, 'linear in the line, not quadratic');
    assert.ok(s.skipped >= 1);
  });
});

describe('validBlocks', () => {
  it('should pass healthy blocks through and replace damaged lines by the records they hold, counting', async () => {
    const damage = noDamage();
    const blocks = [`${a}\n${b}`, `${c}\n${a.slice(0, 9)}${b}\nnull\n\n${c}`, 'garbage'];
    const out: string[] = [];
    for await (const block of validBlocks(
      (async function* () {
        yield* blocks;
      })(),
      damage,
    ))
      out.push(block);
    assert.deepEqual(out, [`${a}\n${b}`, `${c}\n${b}\n${c}`]);
    assert.deepEqual(damage, { skipped: 3, repaired: 1 });
  });
});
