import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { FEEDS } from './feed-catalog.ts';
import { HOUR_MS } from '../../lib/time.ts';
import type { LineDamage } from './log-lines.ts';
import { replayLog } from './log-replay.ts';

const H = Date.UTC(2026, 10, 21, 5);
const rec = (i: number) => ({
  ip: `198.51.100.${i}`,
  provider: 'p',
  type: 'vpn',
  timestamp: H / 1000 + i,
  country_code: 'NL',
  asn: 64_500 + i,
});

describe('start-up replay of a log with damaged lines', () => {
  it('should hand observers every whole record, the one glued to a torn line included, pass over the rest and report it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-replay-'));
    const log = new FileFeedLog(dir);
    try {
      const rs = Array.from({ length: 8 }, (_, i) => rec(i));
      await log.append('proxies', [{ timeMs: H, line: JSON.stringify(rs[0]) }]);
      const lines = rs.map((r) => JSON.stringify(r));
      // Record 2 torn by a crash, record 3 glued to it; garbage, and lines that are JSON but no record.
      const text =
        [lines[0], lines[1], lines[2]!.slice(0, 30) + lines[3], '\u0000\u0000garbage', 'null', '42', '{}', ...lines.slice(4)].join('\n') +
        '\n';
      writeFileSync((await log.hourFile('proxies', H))!.path, text);
      await log.append('proxies', [{ timeMs: H + HOUR_MS, line: JSON.stringify({ ...rec(9), timestamp: (H + HOUR_MS) / 1000 }) }]);
      const seen: unknown[] = [];
      const damage: Array<{ hour: number } & LineDamage> = [];
      const n = await replayLog(
        log,
        [FEEDS.proxies],
        H,
        (_feed, batch) => {
          for (const m of batch) seen.push(m.record);
        },
        (_feed, hour, d) => damage.push({ hour: (hour - H) / HOUR_MS, ...d }),
      );
      const intact = [...rs.filter((_, i) => i !== 2), { ...rec(9), timestamp: (H + HOUR_MS) / 1000 }];
      assert.deepEqual(seen, intact);
      assert.equal(n, intact.length);
      assert.deepEqual(
        damage,
        [{ hour: 0, skipped: 5, repaired: 1 }],
        'the torn piece, the garbage and the three lines that are no record',
      );
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
