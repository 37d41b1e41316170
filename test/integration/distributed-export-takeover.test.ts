import { after, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { dayStartMs, HOUR_MS, hourOf, utcDate } from '../../src/lib/time.ts';
import {
  downloadSnapshot,
  hourId,
  type ListedSnapshot,
  listSnapshots,
  proxiesNdjson,
  recordIp,
  snapshotIps,
  startCluster,
  timed,
  until,
} from '../helpers/distributed-cluster.ts';
import { startS3Gate } from '../helpers/s3-gate.ts';

/**
 * The scheduled export jobs, not an operator's: node A's scheduler starts the due hour and is killed
 * with kill -9 while its upload is held at the S3 gate; node B's scheduler, which found the export lock
 * taken, takes the job over at its next pass by itself (UMBRA_EXPORT_RETRY_S, 2 s here, a minute by
 * default), and the snapshot it lists holds every acknowledged record of the hour.
 */

const FEEDS = 'BASIC,PROXY_FEEDS,PROXY_FIREHOSE';
const RETRY_S = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Distributed mode: the export scheduler of another node takes over a job whose node died', { timeout: 180_000 }, () => {
  // Nodes first, then the engines they use (a node still at work would hold PostgreSQL's shutdown).
  const cleanups: Array<() => unknown> = [];
  const scope = { after: (fn: () => unknown) => void cleanups.push(fn) } as unknown as TestContext;
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  it("node A's scheduler is killed mid-upload; node B's scheduler finishes the job within its retry interval", async (t) => {
    const c = await startCluster(scope);
    const { key } = await c.team('acme', 1_000_000, FEEDS, { lookup: 1_000, export: 1_000, download: 1_000 });
    const gate = await startS3Gate(c.s3.endpoint);
    cleanups.push(() => gate.close());

    // The first hour of the day of the last complete hour: due at once, and the first of the day's
    // jobs, which a pass runs in time order (a fresh cluster has every hour of that day to write).
    // Ingested through a node that runs no jobs, so no scheduler writes it before the test is ready.
    const hourStart = dayStartMs(utcDate(hourOf(Date.now() - 60_000) - HOUR_MS));
    const ingester = await c.startNode(scope, 'ingester', { UMBRA_EXPORT_JOBS: 'off' });
    const acked = new Set<string>();
    const sent = await timed(() => ingester.ingest('proxies', proxiesNdjson(0, 2_000, Math.floor(hourStart / 1000) + 60)));
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.accepted, 2_000);
    for (let i = 0; i < 2_000; i++) acked.add(recordIp(i));

    // The hour's own snapshot, or the day's when the hour is of a day whose rollup is due too (the
    // first two hours after midnight UTC): either way, the one that holds the hour's records.
    const holdsHour = (s: ListedSnapshot) => s.id === hourId(hourStart) || (s.kind === 'daily' && s.date === utcDate(hourStart));

    const held = gate.hold((method, url) => method === 'PUT' && url.includes('/.objects/proxies/'));
    const a = await c.startNode(scope, 'node-a', {
      S3_ENDPOINT: gate.endpoint,
      UMBRA_EXPORT_JOBS: 'on',
      UMBRA_EXPORT_RETRY_S: String(RETRY_S),
    });
    await Promise.race([
      held,
      sleep(60_000).then(() => assert.fail(`node A's scheduler never uploaded: ${JSON.stringify(a.logs().slice(-15))}`)),
    ]);
    const locks = await c.sql<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted");
    assert.equal(Number(locks[0]!.n), 1, "A's scheduler holds the export lock");
    const aIntents = (await c.sql<{ key: string }>('SELECT key FROM export_publish_intents')).map((r) => r.key);
    assert.equal(aIntents.length, 1, 'A recorded its publish intent before the upload');

    const b = await c.startNode(scope, 'node-b', { UMBRA_EXPORT_JOBS: 'on', UMBRA_EXPORT_RETRY_S: String(RETRY_S) });
    // B's passes find the lock taken: nothing is written while A is alive, however long it takes.
    await sleep(2 * RETRY_S * 1000 + 500);
    const before = await listSnapshots(b, key);
    assert.equal(before.status, 200);
    assert.ok(!before.items.some(holdsHour), 'nothing of the hour is listed while A holds the job');

    await a.kill9();
    const killedAt = performance.now();
    const listed = await until(
      "B's scheduler lists the hour",
      () => listSnapshots(b, key),
      (r) => r.items.some(holdsHour),
      { everyMs: 100, timeoutMs: 60_000 },
    );
    const tookMs = performance.now() - killedAt;
    const snapshot = listed.value.items.find(holdsHour)!;
    const got = await downloadSnapshot(b, key, snapshot);
    assert.ok(got.ok, got.why);
    const ips = await snapshotIps(got.bytes!);
    assert.equal(ips.length, acked.size, 'each record once');
    assert.deepEqual(new Set(ips), acked, 'every acknowledged record of the hour');
    // B may still be at later jobs of its pass (its own intents come and go); A's is settled.
    const left = (await c.sql<{ key: string }>('SELECT key FROM export_publish_intents')).map((r) => r.key);
    assert.ok(!left.includes(aIntents[0]!), `A's publish intent ${aIntents[0]} was settled`);
    t.diagnostic(`B's scheduler listed snapshot ${snapshot.id} ${(tookMs / 1000).toFixed(2)} s after A was killed (retry ${RETRY_S} s)`);
    // The next pass comes RETRY_S after the last busy one; the hour is among its first eight jobs
    // (one per feed, about a second each here).
    assert.ok(tookMs < RETRY_S * 1000 + 20_000, `taken over ${(tookMs / 1000).toFixed(2)} s after the kill`);
  });
});
