import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { HOUR_MS, hourOf } from '../../src/lib/time.ts';
import {
  type Cluster,
  type ClusterNode,
  exportedIps,
  hourId,
  proxiesNdjson,
  recordIp,
  startCluster,
  type Timed,
  timed,
  until,
} from '../helpers/distributed-cluster.ts';
import { openStream, type StreamClient } from '../helpers/stream-client.ts';

/**
 * Two `umbra serve` nodes in distributed mode on engines of the test's own (private-engines.ts),
 * each engine made unavailable in turn while the nodes serve: what needs it answers 503 problem+json
 * within about two seconds, what does not keeps working, and everything answers again once the engine
 * is back, without restarting a node. docs/operations.md ("Distributed mode: engine faults") states
 * these promises and the figures measured here (printed as test diagnostics).
 */

const FEEDS = 'BASIC,PROXY_FEEDS,PROXY_FIREHOSE';
const PROBLEM = 'application/problem+json';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** A 503 as every transport gives a dependency fault: problem+json, Retry-After, within `withinMs`. */
function assert503(r: Timed, withinMs: number, what: string, detail?: RegExp): void {
  assert.equal(r.status, 503, `${what}: ${JSON.stringify(r.body).slice(0, 300)}`);
  assert.equal(r.headers?.get('content-type'), PROBLEM, what);
  assert.ok(Number(r.headers?.get('retry-after')) >= 1, `${what}: Retry-After`);
  assert.ok(r.ms < withinMs, `${what} answered in ${r.ms.toFixed(0)} ms (at most ${withinMs})`);
  if (detail) assert.match(r.body.detail, detail, what);
}

/** The lines a stream received so far that are records (keepalives are empty lines), as addresses. */
const streamedIps = (s: StreamClient): string[] => s.lines.filter((l) => l !== '').map((l) => (JSON.parse(l) as { ip: string }).ip);

describe('Distributed mode: an engine that is down answers 503 within 2 s, and the nodes recover by themselves', {
  timeout: 240_000,
}, () => {
  const cleanups: Array<() => unknown> = [];
  const scope = { after: (fn: () => unknown) => void cleanups.push(fn) } as unknown as TestContext;
  let c: Cluster;
  let a: ClusterNode;
  let b: ClusterNode;
  let key: string;
  // Records of the last complete hour: the hourly export of that hour can run as soon as they are in.
  const hourStart = hourOf(Date.now()) - HOUR_MS;
  const ts = Math.floor(hourStart / 1000) + 60;

  before(async () => {
    c = await startCluster(scope);
    // Buckets raised so that the probes below never meet a 429 of their own making.
    ({ key } = await c.team('acme', 1_000_000, FEEDS, { lookup: 10_000, account: 1_000, stream: 1_000, export: 1_000, download: 1_000 }));
    const env = { UMBRA_LOG_LEVEL: 'info' };
    [a, b] = await Promise.all([c.startNode(scope, 'node-a', env), c.startNode(scope, 'node-b', env)]);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  it('NATS hung, then down for 20 s: ingestion and stream opens answer 503, lookups keep their intelligence, and everything acknowledged reaches streams and the export', async (t) => {
    const live = await openStream(b.port, '/api/v4/feeds/proxies/stream', key);
    t.after(() => live.close());
    assert.equal(live.status, 200);
    let liveEnded = false;
    void live.ended.then(() => (liveEnded = true));
    const acked = new Set<string>();
    const ingest = async (from: number, count: number) => {
      const r = await timed(() => a.ingest('proxies', proxiesNdjson(from, count, ts)));
      if (r.status === 200) {
        assert.equal(r.body.accepted, count);
        for (let i = from; i < from + count; i++) acked.add(recordIp(i));
      }
      return r;
    };
    assert.equal((await ingest(0, 300)).status, 200);
    await live.records(300);
    // Node B learnt the records from the bus: its lookups show them.
    const intel = async (ip: string) => (await timed(() => b.api(`/lookup/ip/${ip}`, key))).body?.intelligence?.providers ?? [];
    await until(
      'B learns record 0',
      () => intel(recordIp(0)),
      (p) => p.length > 0,
    );

    // 1. NATS stops answering (SIGSTOP): connections stay open, nothing is acknowledged.
    await c.nats.pause();
    const hungIngest = await ingest(1_000, 20);
    assert503(hungIngest, 2_500, 'ingestion while NATS hangs', /NATS_TIMEOUT/);
    assert.equal(hungIngest.body.accepted, 0);
    assert.equal(hungIngest.body.stored_through_record, 0);
    const hungStream = await timed(() => b.api('/feeds/proxies/stream', key));
    assert503(hungStream, 2_500, 'a stream opened while NATS hangs');
    const hungLookup = await timed(() => b.api(`/lookup/ip/${recordIp(0)}`, key));
    assert.equal(hungLookup.status, 200, 'lookups need no NATS');
    assert.ok(hungLookup.ms < 1_000, `a lookup took ${hungLookup.ms.toFixed(0)} ms while NATS hung`);
    assert.equal(hungLookup.body.intelligence.providers[0].provider, 'BRIGHTDATA', 'intelligence is served from memory');
    // /health pings NATS: a hung one is reported at once, not when the client's ping check gives up (30 s).
    const hungHealth = await timed(() => fetch(`${b.origin}/health`));
    assert.equal(hungHealth.status, 503);
    assert.match(String(hungHealth.body.problems), /feed bus: NATS does not answer/);
    assert.ok(hungHealth.ms < 2_000, `/health answered in ${hungHealth.ms.toFixed(0)} ms`);
    // The account verbs need PostgreSQL alone: an operator can still look a team up (and revoke a key).
    const verbStart = performance.now();
    const verb = await c.cli(['admin', 'org', 'show', 'acme']);
    const verbMs = performance.now() - verbStart;
    assert.equal(verb.code, 0, verb.stderr);
    assert.equal(verb.json.name, 'acme');
    assert.ok(verbMs < 10_000, `the verb ended ${secs(verbMs)} after it started`);
    // A verb that needs the feed log fails with one line and ends, rather than wait on NATS forever.
    const feedVerb = await c.cli(['exports', 'list', 'proxies']);
    assert.notEqual(feedVerb.code, 0);
    assert.match(feedVerb.stderr, /^umbra: the feed log \(NATS\) is unavailable \(NATS_UNREACHABLE\); nothing was changed/);
    c.nats.resume();
    t.diagnostic(
      `NATS hung: ingestion 503 after ${hungIngest.ms.toFixed(0)} ms, stream open 503 after ${hungStream.ms.toFixed(0)} ms, ` +
        `an admin verb answered in ${secs(verbMs)}`,
    );
    await until(
      'ingestion after NATS resumed',
      () => ingest(1_100, 1),
      (r) => r.status === 200,
    );

    // 2. NATS killed and started again 20 s later on the same port and store.
    await c.nats.kill();
    const downAt = performance.now();
    let firstIngest503: number | undefined;
    let firstStream503: number | undefined;
    const refusedWhileDown: string[] = [];
    let n = 2_000;
    let round = 0;
    while (performance.now() - downAt < 20_000) {
      const from = n;
      n += 5;
      const r = await ingest(from, 5);
      assert503(r, 2_500, 'ingestion while NATS is down', /feed log \(NATS\)/);
      assert.equal(r.body.accepted, 0);
      assert.equal(r.body.stored_through_record, 0);
      assert.match(r.body.detail, /Nothing of this request was stored/);
      firstIngest503 ??= performance.now() - downAt;
      for (let i = from; i < from + 5; i++) refusedWhileDown.push(recordIp(i));
      if (round % 4 === 0) {
        const s = await timed(() => b.api('/feeds/proxies/stream', key));
        assert503(s, 2_500, 'a stream opened while NATS is down');
        firstStream503 ??= performance.now() - downAt;
        for (const node of [a, b]) {
          const h = await timed(() => fetch(`${node.origin}/health`));
          assert.equal(h.status, 503);
          assert.ok(h.ms < 2_000, `/health took ${h.ms.toFixed(0)} ms`);
          assert.ok(
            h.body.problems.some((p: string) => /^feed bus: NATS unreachable/.test(p)),
            `${node.name} /health: ${h.body.problems}`,
          );
        }
        const me = await timed(() => a.api('/account/me', key));
        assert.equal(me.status, 200, '/account/me needs no NATS');
      }
      const l = await timed(() => b.api(`/lookup/ip/${recordIp(1)}`, key));
      assert.equal(l.status, 200, 'lookups need no NATS');
      assert.equal(l.body.intelligence.providers[0].provider, 'BRIGHTDATA');
      round++;
      await sleep(400);
    }
    assert.equal(liveEnded, false, 'a stream opened before the outage stays open through it');
    await c.nats.start();
    const upAt = performance.now();
    const back = await until(
      'ingestion after NATS restarted',
      () => ingest(5_000 + round++, 1),
      (r) => r.status === 200,
      { timeoutMs: 15_000 },
    );
    const streamBack = await until(
      'a stream opens after NATS restarted',
      async () => {
        const s = await openStream(b.port, '/api/v4/feeds/proxies/stream', key);
        if (s.status !== 200) s.close();
        return s;
      },
      (s) => s.status === 200,
      { timeoutMs: 15_000 },
    );
    const fresh = streamBack.value;
    t.after(() => fresh.close());
    t.diagnostic(
      `NATS down: first ingestion 503 ${secs(firstIngest503!)} after the kill, first stream-open 503 ${secs(firstStream503!)}; ` +
        `after the restart: ingestion 200 within ${secs(back.ms)}, a stream opens within ${secs(performance.now() - upAt)}`,
    );
    assert.ok(back.ms < 5_000, `ingestion works again ${secs(back.ms)} after NATS is back`);

    // Records ingested after recovery reach the stream opened before the outage and the one opened after.
    const before = streamedIps(live).length;
    assert.equal((await ingest(10_000, 300)).status, 200);
    await live.records(before + 300, 10_000);
    await fresh.records(300, 10_000);
    for (const s of [live, fresh]) {
      const got = new Set(streamedIps(s));
      for (let i = 10_000; i < 10_300; i++) assert.ok(got.has(recordIp(i)), `record ${i} streamed`);
    }
    // B's intelligence learns again from the bus.
    await until(
      'B learns a record ingested after the restart',
      () => intel(recordIp(10_299)),
      (p) => p.length > 0,
      { timeoutMs: 10_000 },
    );

    // Every acknowledged record, those before the outage included, is in the hour's export, once.
    const job = await timed(() =>
      a.exportJob({ job: 'hourly', feed: 'proxies', date: hourId(hourStart).slice(0, 10), hour: new Date(hourStart).getUTCHours() }),
    );
    assert.equal(job.status, 200, JSON.stringify(job.body));
    const { ips } = await exportedIps(b, key, hourId(hourStart));
    const exported = new Set(ips);
    assert.equal(exported.size, ips.length, 'no record is in the export twice');
    for (const ip of acked) assert.ok(exported.has(ip), `acknowledged record ${ip} is in the export`);
    // Refused while NATS was down (the connection known lost): never sent, so never stored.
    for (const ip of refusedWhileDown) assert.ok(!exported.has(ip), `record ${ip} was refused while NATS was down and is not stored`);
    // Refused while NATS hung: sent, and stored once NATS resumed (the 503 could not know): at most once each.
    const hungStored = Array.from({ length: 20 }, (_, i) => recordIp(1_000 + i)).filter((ip) => exported.has(ip)).length;
    t.diagnostic(
      `${acked.size} acknowledged records all exported; of 20 refused while NATS hung, ${hungStored} were stored after it resumed`,
    );

    const warned = (node: ClusterNode, msg: string) => node.logs().some((l) => l.msg === msg);
    for (const node of [a, b]) {
      assert.ok(warned(node, 'NATS unreachable: ingestion and stream opens answer 503; reconnecting'), `${node.name} logs the outage`);
      assert.ok(warned(node, 'NATS available again'), `${node.name} logs the recovery`);
    }
  });

  it('Redis restarted: every rate-limited operation answers 503 (fail closed) while it is down, and 200 again once it is back', async (t) => {
    assert.equal((await timed(() => a.api('/lookup/ip/8.8.8.8', key))).status, 200);
    const open = await openStream(b.port, '/api/v4/feeds/proxies/stream', key);
    t.after(() => open.close());
    assert.equal(open.status, 200);
    await c.redis.kill();
    const downAt = performance.now();
    let first503: number | undefined;
    // A node spends the tokens it took from Redis before the kill (prefetch: at most 1.25 chunks, held
    // at most 1 s); after that, every rate-limited request fails closed.
    let fromHeld = 0;
    const closed = (r: Timed, what: string, detail?: RegExp) => {
      if (r.status === 200 && performance.now() - downAt < 1_500) fromHeld++;
      else assert503(r, 2_000, what, detail);
    };
    while (performance.now() - downAt < 5_000) {
      for (const node of [a, b]) {
        const l = await timed(() => node.api('/lookup/ip/8.8.8.8', key));
        closed(l, `${node.name} lookup while Redis is down`, /shared state store is unavailable.*REDIS_UNAVAILABLE/);
        if (l.status === 503) first503 ??= performance.now() - downAt;
      }
      closed(await timed(() => a.api('/account/me', key)), '/account/me while Redis is down');
      assert503(await timed(() => b.api('/feeds/proxies/stream', key)), 2_000, 'a stream opened while Redis is down');
      // Operator ingestion takes no rate bucket: it goes on.
      assert.equal((await timed(() => a.ingest('proxies', proxiesNdjson(20_000, 1, ts)))).status, 200);
      const h = await timed(() => fetch(`${a.origin}/health`));
      assert.equal(h.status, 503);
      assert.ok(
        h.body.problems.some((p: string) => /^Redis: /.test(p)),
        String(h.body.problems),
      );
      await sleep(300);
    }
    await c.redis.start();
    const back = await until(
      'a lookup after Redis restarted',
      () => timed(() => a.api('/lookup/ip/8.8.8.8', key)),
      (r) => r.status === 200,
      { everyMs: 50, timeoutMs: 10_000 },
    );
    // Each node's Redis client reconnects on its own backoff: B may need a moment more than A.
    const backB = await until(
      'a lookup on node B after Redis restarted',
      () => timed(() => b.api('/lookup/ip/8.8.8.8', key)),
      (r) => r.status === 200,
      { everyMs: 50, timeoutMs: 10_000 },
    );
    assert.ok(backB.ms < 3_000, `node B answers again ${secs(backB.ms)} after node A`);
    assert.equal((await timed(() => a.api('/lookup/ip/8.8.8.8', key))).status, 200);
    assert.equal((await timed(() => a.api('/account/me', key))).status, 200);
    const s = await openStream(b.port, '/api/v4/feeds/proxies/stream', key);
    s.close();
    assert.equal(s.status, 200, 'streams open again');
    await until(
      'health after Redis restarted',
      () => timed(() => fetch(`${a.origin}/health`)),
      (r) => r.status === 200,
      { timeoutMs: 10_000 },
    );
    assert.ok(
      a.logs().some((l) => l.msg === 'Redis unavailable: rate limits and stream opens answer 503'),
      'node A logs that Redis is unavailable',
    );
    // The restarted Redis kept nothing (no persistence): the stream's slot lease is gone, so the stream
    // ends, cleanly, at its next renewal (every 10 s) rather than run uncounted; it reopens at once.
    const ended = await Promise.race([open.ended, sleep(15_000).then(() => 'still open')]);
    assert.equal(ended, 'end', 'a stream whose lease Redis lost ends cleanly');
    // Its line in the log comes once the answer has ended.
    await until(
      'node B logs why the stream ended',
      async () =>
        b
          .logs()
          .filter((l) => l.msg === 'stream closed')
          .map((l) => l.end),
      (ends) => ends.includes('lease_lost'),
      { timeoutMs: 5_000 },
    );
    const reopened = await openStream(b.port, '/api/v4/feeds/proxies/stream', key);
    reopened.close();
    assert.equal(reopened.status, 200);
    t.diagnostic(
      `Redis down: first 503 ${secs(first503!)} after the kill (${fromHeld} answered from held tokens); first 200 ${secs(back.ms)} after the restart`,
    );
    assert.ok(first503! < 1_500, 'fail closed once the held tokens are spent or dropped');
    assert.ok(back.ms < 3_000, `lookups answer again ${secs(back.ms)} after Redis is back`);
  });

  it("PostgreSQL stopped for 20 s: known keys spend their node's credit block, then 503; new keys, /account/me and /health answer 503; no charge is lost", async (t) => {
    const start = 100_000;
    const team = await c.team('bravo', start, 'BASIC', { lookup: 10_000, account: 1_000 });
    const cold = await c.cli(['admin', 'key', 'create', '--org', 'bravo', '--email', 'cold@bravo.test', '--scopes', 'BASIC']);
    assert.equal(cold.code, 0, cold.stderr);
    const coldKey = cold.json.key as string;
    // Node A has verified the stream key below, and knows the team's key and holds a block of its
    // credits (UMBRA_CREDIT_BLOCK, 200).
    assert.equal((await timed(() => a.api('/account/me', key))).status, 200);
    const served: Array<{ at: number; status: number; ms: number; remaining: number; detail?: string }> = [];
    let stop = false;
    let i = 0;
    const load = (async () => {
      while (!stop) {
        const r = await timed(() => a.api(`/lookup/ip/9.9.${(i >> 8) & 255}.${i++ & 255}`, team.key));
        served.push({
          at: performance.now(),
          status: r.status,
          ms: r.ms,
          remaining: Number(r.headers?.get('x-credits-remaining') ?? -1),
          ...(r.status === 200 ? {} : { detail: r.body?.detail }),
        });
        await sleep(40);
      }
    })();
    await until(
      'lookups before the outage',
      async () => served.length,
      (x) => x >= 20,
    );
    await c.pg.stop();
    const downAt = performance.now();
    let firstCold503: number | undefined;
    let firstMe503: number | undefined;
    while (performance.now() - downAt < 20_000) {
      const k = await timed(() => a.api('/lookup/ip/8.8.4.4', coldKey));
      assert503(k, 2_000, 'a key never seen by the node while PostgreSQL is down', /database is unavailable/);
      firstCold503 ??= performance.now() - downAt;
      const me = await timed(() => a.api('/account/me', team.key));
      assert503(me, 2_000, '/account/me while PostgreSQL is down', /database is unavailable/);
      firstMe503 ??= performance.now() - downAt;
      const h = await timed(() => fetch(`${a.origin}/health`));
      assert.equal(h.status, 503);
      assert.ok(h.ms < 2_000, `/health answered in ${h.ms.toFixed(0)} ms`);
      assert.match(h.headers?.get('content-type') ?? '', /^application\/json/, '/health gives its report, not a failed request');
      assert.ok(
        h.body.problems.some((p: string) => /^database: unavailable for \d+ s \(ECONNREFUSED\)/.test(p)),
        String(h.body.problems),
      );
      const metrics = await (await fetch(`${a.origin}/metrics`)).text();
      assert.match(metrics, /^umbra_database_unavailable 1$/m);
      // Operator ingestion needs no database; a stream opens with a key the node knows.
      assert.equal((await timed(() => a.ingest('proxies', proxiesNdjson(30_000 + i, 1, ts)))).status, 200);
      const s = await openStream(a.port, '/api/v4/feeds/proxies/stream', key);
      s.close();
      assert.equal(s.status, 200, 'a stream opens with a key the node verified before');
      // Node B never verified this key: it cannot, so it refuses rather than serve an unknown key.
      assert503(await timed(() => b.api('/lookup/ip/8.8.4.4', team.key)), 2_000, 'node B, which never saw the key');
      await sleep(500);
    }
    // Lookups answered before start() returns may already have reached the database again.
    const restartAt = performance.now();
    await c.pg.start();
    const upAt = performance.now();
    const meBack = await until(
      '/account/me after PostgreSQL restarted',
      () => timed(() => a.api('/account/me', team.key)),
      (r) => r.status === 200,
      { everyMs: 50, timeoutMs: 15_000 },
    );
    const coldBack = await timed(() => a.api('/lookup/ip/8.8.4.4', coldKey));
    assert.equal(coldBack.status, 200, 'a new key is verified again');
    await until(
      'lookups of the known key after PostgreSQL restarted',
      async () => served.at(-1)!,
      (r) => r.status === 200 && r.at > upAt,
      { timeoutMs: 15_000 },
    );
    await sleep(500);
    stop = true;
    await load;

    const outage = served.filter((r) => r.at > downAt && r.at < restartAt);
    for (const r of served) {
      assert.ok(r.status === 200 || r.status === 503, `a lookup answered ${r.status}`);
      assert.ok(r.ms < 2_000, `a lookup took ${r.ms.toFixed(0)} ms`);
      if (r.status === 200) assert.ok(r.remaining >= 0, `X-Credits-Remaining ${r.remaining}`);
    }
    const fromBlock = outage.filter((r) => r.status === 200).length;
    const firstRefused = outage.findIndex((r) => r.status === 503);
    assert.ok(fromBlock >= 1, 'a known key goes on spending the block its node holds');
    assert.ok(fromBlock <= 200, `no more than one block (200 credits) is spent without the database: ${fromBlock}`);
    assert.ok(firstRefused > 0, 'once the block is spent, lookups that need a new block answer 503');
    assert.ok(
      outage.slice(firstRefused).every((r) => r.status === 503),
      `fail closed: no lookup is served once the block is spent, until the database is back: ${JSON.stringify(
        outage.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.detail}`)),
      )}`,
    );

    // Every charge, those made from the block during the outage included, is recorded once it is back.
    const charged = served.filter((r) => r.status === 200).length + 1;
    const balance = await until(
      'the balance on node B (no block of this team) after PostgreSQL is back',
      async () => (await timed(() => b.api('/account/me', team.key))).body?.lookup_quota?.credits,
      (credits) => credits === start - charged,
      { timeoutMs: 10_000 },
    );
    assert.equal(balance.value, start - charged);
    await until(
      'health after PostgreSQL restarted',
      () => timed(() => fetch(`${a.origin}/health`)),
      (r) => r.status === 200,
      { timeoutMs: 10_000 },
    );
    const logged = a.logs().map((l) => l.msg);
    for (const msg of [
      'PostgreSQL unavailable: requests that need it answer 503',
      'PostgreSQL available again',
      'credit charges cannot be recorded yet; they are kept and retried',
      'credit charges recorded again',
    ])
      assert.ok(logged.includes(msg), `node A logs "${msg}"`);
    const lastBlockLookup = outage.filter((r) => r.status === 200).at(-1)!;
    t.diagnostic(
      `PostgreSQL down: new key 503 ${secs(firstCold503!)} and /account/me 503 ${secs(firstMe503!)} after the stop; ` +
        `${fromBlock} lookups served from the block for ${secs(lastBlockLookup.at - downAt)}, then 503; ` +
        `/account/me 200 ${secs(meBack.ms)} after the restart; balance ${balance.value} = ${start} - ${charged} charged`,
    );
    assert.ok(meBack.ms < 5_000, `/account/me answered again ${secs(meBack.ms)} after the restart`);
  });
});
