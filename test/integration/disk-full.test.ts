import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { sampleRecords } from '../helpers/feed-fixtures.ts';
import { fillDisk, privateTmpfs } from '../helpers/tmpfs.ts';
import { hourOf } from '../../src/lib/time.ts';

const TOKEN = 'operator-token-for-tests-0123456789';

/** `n` distinct proxies records as one NDJSON body; record i has ip 10.x.y.z from `base + i`. */
function batch(app: TestApp, base: number, n: number): string {
  const good = sampleRecords(app.clock.now()).proxies;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = base + i;
    lines.push(JSON.stringify({ ...good, ip: `10.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`, provider: `P${'X'.repeat(40)}${v}` }));
  }
  return `${lines.join('\n')}\n`;
}

const post = (app: TestApp, body: string) =>
  app.http.inject({
    method: 'POST',
    url: '/internal/v1/ingest/proxies',
    payload: body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
  });

/** Every line of every proxies partition under the data dir, each checked to be whole JSON. */
function loggedLines(dataDir: string): string[] {
  const out: string[] = [];
  const feedDir = join(dataDir, 'feeds', 'proxies');
  for (const day of readdirSync(feedDir)) {
    for (const f of readdirSync(join(feedDir, day))) {
      const text = readFileSync(join(feedDir, day, f), 'utf8');
      assert.ok(text === '' || text.endsWith('\n'), `${day}/${f} ends on a whole line`);
      for (const line of text.split('\n').slice(0, -1)) {
        assert.doesNotThrow(() => JSON.parse(line), `a torn or glued line in ${day}/${f}: ${line.slice(0, 80)}`);
        out.push(line);
      }
    }
  }
  return out;
}

describe('Ingestion on a full disk', () => {
  it('should store exactly what it acknowledges when the disk fills mid-batch, leave no torn line, and work again once space is freed', async (t) => {
    const dir = privateTmpfs(t, 16);
    // No reserve: the writes themselves meet ENOSPC (short writes first), the worst case.
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_DATA_DIR: dir, UMBRA_DISK_RESERVE_MB: '0' });
    let acknowledged = 0;
    let next = 0;
    // Three episodes, each leaving another amount free, so the disk fills at different points of a write.
    for (const [episode, leave] of [1_200_000, 700_001, 311_111].entries()) {
      const filler = fillDisk(dir, leave);
      let refused = 0;
      let acked = 0;
      for (let round = 0; round < 40 && refused < 3; round++) {
        const res = await post(app, batch(app, next, 2000));
        next += 2000;
        if (res.statusCode === 200) acked += res.json().accepted;
        else {
          assert.equal(res.statusCode, 507, res.body.slice(0, 300));
          assert.equal(res.headers['content-type'], 'application/problem+json');
          assert.ok(Number(res.headers['retry-after']) >= 1);
          const body = res.json();
          assert.equal(body.accepted, 0, 'a batch of one append is all or nothing');
          assert.match(body.detail, /disk is full|below its reserve/);
          refused++;
        }
      }
      assert.ok(refused >= 3, 'the disk filled up');
      acknowledged += acked;
      const found = loggedLines(dir).length;
      t.diagnostic(`episode ${episode + 1}: ${acked} records acknowledged (${acknowledged} in all), ${found} found in the log`);
      assert.equal(found, acknowledged, 'records found on disk = records acknowledged');
      const health = await app.http.inject({ url: '/health' });
      assert.equal(health.statusCode, 503);
      assert.ok(
        health.json().problems.some((p: string) => p.startsWith('disk:')),
        health.body,
      );

      rmSync(filler);
      await app.stores.disk!.refresh();
      const res = await post(app, batch(app, next, 2000));
      next += 2000;
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      acknowledged += res.json().accepted;
      assert.equal(loggedLines(dir).length, acknowledged);
      assert.equal((await app.http.inject({ url: '/health' })).statusCode, 200);
    }
    // What readers see is what was acknowledged, in one piece.
    let read = 0;
    for await (const line of app.stores.feedLog.readHour('proxies', hourOf(app.clock.now()))) {
      JSON.parse(line);
      read++;
    }
    assert.equal(read, acknowledged);
  });

  it('should refuse ingestion with 507 while less than the reserve is free, before the disk is full', async (t) => {
    const dir = privateTmpfs(t, 16);
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_DATA_DIR: dir, UMBRA_DISK_RESERVE_MB: '4' });
    assert.equal((await post(app, batch(app, 0, 10))).statusCode, 200);
    const filler = fillDisk(dir, 5 * 1024 * 1024);
    await app.stores.disk!.refresh();
    let refusedAt = -1;
    for (let round = 0; round < 20; round++) {
      const res = await post(app, batch(app, 1000 + round * 2000, 2000));
      if (res.statusCode === 507) {
        refusedAt = round;
        assert.match(res.json().detail, /below its reserve of 4 MB/);
        break;
      }
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    }
    assert.ok(refusedAt >= 1, 'some batches fit above the reserve, then ingestion is refused');
    const health = await app.http.inject({ url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.ok(
      health.json().problems.some((p: string) => /(below|too close to) the reserve of 4 MB/.test(p)),
      health.body,
    );
    // The reserve is still free: nothing met ENOSPC.
    const fs = statfsSync(dir);
    assert.ok(fs.bavail * fs.bsize >= 4 * 1024 * 1024, 'the reserve is still free');
    rmSync(filler);
    await app.stores.disk!.refresh();
    assert.equal((await post(app, batch(app, 90_000, 10))).statusCode, 200);
  });

  it('should stop a large request at the first batch that does not fit, with every record before it stored and none after', async (t) => {
    const dir = privateTmpfs(t, 16);
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_DATA_DIR: dir, UMBRA_DISK_RESERVE_MB: '0' });
    fillDisk(dir, 2_500_000);
    // About 5.6 MB in one request: several appends, the disk fills during one of them.
    const res = await post(app, batch(app, 0, 40_000));
    assert.equal(res.statusCode, 507, res.body.slice(0, 300));
    assert.equal(res.headers.connection, 'close');
    const body = res.json();
    assert.ok(body.accepted > 0 && body.accepted < 40_000, `a prefix was stored: ${body.accepted}`);
    assert.equal(body.stored_through_record, body.accepted, 'every record is valid, so the prefix is its count');
    assert.match(body.detail, new RegExp(`${body.accepted} records were stored .* resend from record ${body.accepted + 1}`));
    const lines = loggedLines(dir);
    assert.equal(lines.length, body.accepted);
    // The stored ones are the first records of the request, in order.
    assert.equal(JSON.parse(lines[lines.length - 1]!).provider, `P${'X'.repeat(40)}${body.accepted - 1}`);
  });

  it('should answer 503 with Retry-After, not 500, when the data dir turns read-only, and report it in /health', async (t) => {
    const dir = privateTmpfs(t, 16);
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_DATA_DIR: dir, UMBRA_DISK_RESERVE_MB: '0' });
    // (A file system with files open for writing cannot be remounted read-only: do it before the first.)
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const res = await post(app, batch(app, 100, 10));
    assert.equal(res.statusCode, 503, res.body.slice(0, 300));
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    const body = res.json();
    assert.match(body.detail, /cannot use its storage right now \(EROFS\)/);
    assert.equal(body.accepted, 0);
    const health = await app.http.inject({ url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.ok(
      health.json().problems.some((p: string) => /disk: a write failed \(EROFS/.test(p)),
      health.body,
    );
  });
});
