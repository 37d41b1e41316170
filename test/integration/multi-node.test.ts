import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rawExchange } from '../helpers/raw-http.ts';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOUR_MS, hourOf, utcDate, utcHour } from '../../src/lib/time.ts';
import { EXPORT_LOCK } from '../../src/modules/exports/job-lock.ts';
import { PgJobLock } from '../../src/storage/distributed/pg-job-lock.ts';
import { PgPool } from '../../src/storage/distributed/pg-pool.ts';
import { createRedisClient, redisReady } from '../../src/storage/distributed/redis-client.ts';
import { testEngines } from '../helpers/engines.ts';
import { dropNulls, grpcClient, grpcToJson } from '../helpers/grpc-client.ts';
import { readParquet } from '../helpers/parquet-test-reader.ts';
import { admin } from '../helpers/pg-schema.ts';
import { openStream } from '../helpers/stream-client.ts';
import {
  addresses,
  counter,
  get,
  ingest,
  KEEPALIVE_MS,
  type Node,
  pool,
  sightings,
  startCluster,
  team,
  until,
} from '../helpers/umbra-cluster.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('three umbra nodes in distributed mode behind HAProxy (deploy/haproxy.cfg)', () => {
  it('should behave as one service: credits, rate limits, feeds, exports, keys and gRPC across the nodes', async (t) => {
    const c = await startCluster(t);
    const [a, b, nodeC] = c.nodes as [Node, Node, Node];
    const acme = await team(c, 'acme', 100_000, { rate: 100_000, burst: 100_000 });

    await t.test('one team charged through every node: the balance falls by exactly the sum of the costs', async (st) => {
      const singles = addresses(600, 1_000);
      assert.equal(new Set(singles).size, 600);
      // Batches of varied sizes, each with duplicates (one in IPv4-mapped form) and two invalid entries.
      const batches = [1, 3, 10, 37, 100, 250, 990].map((n, i) => {
        const ips = addresses(n, 100_001 + i * 1_000);
        const mapped = ips.find((ip) => !ip.includes(':'))!;
        return { unique: n, ips: [...ips, ips[0]!, `::ffff:${mapped}`, 'not-an-ip', '300.1.1.1', ips[n - 1]!] };
      });
      const before = await Promise.all(c.nodes.map((n) => counter(n.origin, 'umbra_credits_charged_total')));
      const tasks: Array<() => Promise<number>> = singles.map((ip) => async () => {
        const res = await get(c.lbOrigin, `/lookup/ip/${ip}`, acme.key);
        const text = await res.text();
        assert.equal(res.status, 200, text);
        assert.ok(Number(res.headers.get('x-credits-remaining')) < 100_000);
        return 1;
      });
      for (const [i, batch] of batches.entries()) {
        tasks.splice(i * 90, 0, async () => {
          const res = await fetch(`${c.lbOrigin}/api/v4/lookup/ips`, {
            method: 'POST',
            headers: { 'x-api-key': acme.key, 'content-type': 'application/json' },
            body: JSON.stringify({ ips: batch.ips }),
          });
          const body = (await res.json()) as { results: unknown[]; invalid: unknown[] };
          assert.equal(res.status, 200, JSON.stringify(body));
          assert.equal(body.results.length, batch.unique, 'one result per unique valid address');
          assert.equal(body.invalid.length, 2);
          return Math.ceil(body.results.length * 0.9);
        });
      }
      const charged = (await pool(tasks, 12)).reduce((x, y) => x + y, 0);
      assert.equal(charged, 600 + [1, 3, 9, 34, 90, 225, 891].reduce((x, y) => x + y, 0));

      // Every node served part of it, and the nodes together charged exactly that.
      const served = await Promise.all(
        c.nodes.map(
          async (n) =>
            (await counter(n.origin, 'umbra_http_requests_total', { operation: 'lookup.ip', status: '200' })) +
            (await counter(n.origin, 'umbra_http_requests_total', { operation: 'lookup.ips', status: '200' })),
        ),
      );
      for (const [i, n] of served.entries()) assert.ok(n > 0, `${c.nodes[i]!.name} served none of the lookups: ${served}`);
      const after = await Promise.all(c.nodes.map((n) => counter(n.origin, 'umbra_credits_charged_total')));
      assert.equal(after.reduce((x, y) => x + y, 0) - before.reduce((x, y) => x + y, 0), charged);

      // The balance every node reports settles on the start minus the charges, once their blocks are flushed.
      const seen: number[] = [];
      await until(
        'the balance to settle at the start minus the charges',
        async () => {
          const me = (await (await get(c.lbOrigin, '/account/me', acme.key)).json()) as { lookup_quota: { credits: number } };
          seen.push(me.lookup_quota.credits);
          return me.lookup_quota.credits === 100_000 - charged;
        },
        10_000,
        300,
      );
      // The ledger of record agrees: the idle teams' blocks went back, their unspent credits with them.
      await until('every credit block to be given back', async () => {
        const blocks = await admin().query(`SELECT count(*)::int AS n FROM "${c.run.schema}".credit_blocks WHERE org_id = $1`, [
          acme.orgId,
        ]);
        return blocks.rows[0].n === 0;
      });
      const { rows: balance } = await admin().query(`SELECT balance FROM "${c.run.schema}".credit_accounts WHERE org_id = $1`, [
        acme.orgId,
      ]);
      assert.equal(Number(balance[0].balance), 100_000 - charged);
      st.diagnostic(`credits: ${served.join('/')} lookups per node; charged ${charged}; /account/me seen ${seen.join(' → ')}`);
    });

    await t.test('a team rate limit holds across the nodes as one bucket, within 10 %', async (st) => {
      const rated = await team(c, 'rated', 100_000, { rate: 20, burst: 40 });
      const ips = addresses(5_000, 200_000);
      const before = await Promise.all(c.nodes.map((n) => counter(n.origin, 'umbra_http_requests_total', { operation: 'lookup.ip' })));
      let admitted = 0;
      let refused = 0;
      let i = 0;
      const start = performance.now();
      let last = start;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (performance.now() - start < 3_000) {
            const res = await get(c.lbOrigin, `/lookup/ip/${ips[i++ % ips.length]}`, rated.key);
            await res.arrayBuffer();
            if (res.status === 200) admitted++;
            else if (res.status === 429) refused++;
            else assert.fail(`status ${res.status}`);
            if (res.status === 200) assert.equal(res.headers.get('ratelimit-limit'), '40');
            last = performance.now();
          }
        }),
      );
      const elapsed = (last - start) / 1000;
      const expected = 40 + 20 * elapsed;
      const after = await Promise.all(c.nodes.map((n) => counter(n.origin, 'umbra_http_requests_total', { operation: 'lookup.ip' })));
      const perNode = after.map((x, k) => x - before[k]!);
      for (const [k, n] of perNode.entries()) assert.ok(n > 0, `${c.nodes[k]!.name} answered none of the burst: ${perNode}`);
      st.diagnostic(
        `rate limit 20/s burst 40: ${admitted} admitted, ${refused} refused in ${elapsed.toFixed(2)} s (one bucket admits ${expected.toFixed(1)}); per node ${perNode}`,
      );
      assert.ok(admitted + refused >= 1.5 * expected, `the burst went well past the limit: ${admitted + refused} requests`);
      assert.ok(Math.abs(admitted - expected) <= 0.1 * expected, `admitted ${admitted}, one bucket admits ${expected.toFixed(1)}`);
    });

    await t.test('a record ingested on one node reaches streams held on the others, NDJSON and gRPC, and through HAProxy', async (st) => {
      const ndjsonOnB = await openStream(b.port, '/api/v4/feeds/proxies/stream', acme.key);
      const ndjsonViaLb = await openStream(Number(new URL(c.lbOrigin).port), '/api/v4/feeds/proxies/stream', acme.key);
      assert.equal(ndjsonOnB.status, 200);
      assert.equal(ndjsonViaLb.status, 200);
      const grpcC = grpcClient(nodeC.grpcPort);
      const grpcLb = grpcClient(c.lbGrpcPort);
      const onC = grpcC.stream('StreamProxies', acme.key);
      const viaLb = grpcLb.stream('StreamProxies', acme.key);
      // Each stream holds one of the team's slots in Redis once it is subscribed.
      const redis = createRedisClient(testEngines.redisUrl, { connectionName: 'umbra-test' });
      await redisReady(redis);
      const slots = () => redis.zcard(`${c.run.redisPrefix}streams:${acme.orgId}`);
      try {
        await until('four streams to hold their slots', async () => (await slots()) === 4);
        const [record] = sightings([Math.floor(Date.now() / 1000)], 7);
        await ingest(c, a.origin, [record!]);
        const got = await Promise.all([ndjsonOnB.records(1), ndjsonViaLb.records(1), onC.records(1), viaLb.records(1)]);
        assert.deepEqual(got[0], [record]);
        assert.deepEqual(got[1], [record]);
        for (const g of [got[2], got[3]]) assert.deepEqual(dropNulls(g!.map((m) => grpcToJson(m))), [record]);
        ndjsonOnB.close();
        ndjsonViaLb.close();
        onC.cancel();
        viaLb.cancel();
        // HAProxy learns that an HTTP/1.1 client went away only when it forwards the next bytes to it (a
        // closed input may be a half-close), so the node ends that stream with one of its next keepalive lines.
        const t0 = performance.now();
        await until('every slot to be freed on its node', async () => (await slots()) === 0, 2 * KEEPALIVE_MS + 3_000);
        st.diagnostic(`the four streams' slots were free ${Math.round(performance.now() - t0)} ms after their clients closed`);
      } finally {
        redis.disconnect();
        grpcC.close();
        grpcLb.close();
      }
    });

    await t.test('an export written by one node downloads through the others: from S3, and from umbra itself', async () => {
      // Two hours back: a complete hour, whatever the minute.
      const hourMs = hourOf(Date.now()) - 2 * HOUR_MS;
      const records = sightings(
        Array.from({ length: 5 }, (_, i) => hourMs / 1000 + 60 * i),
        100,
      );
      await ingest(c, c.lbOrigin, records);
      const [date, hour] = [utcDate(hourMs), utcHour(hourMs)];
      // On node A's data dir the verb asks node A to run it.
      const job = await c.cli(['exports', 'run-hourly', '--feed', 'proxies', '--date', date, '--hour', String(hour)], a.dataDir);
      assert.equal(job.code, 0, job.stderr);
      assert.match(job.stderr, new RegExp(`asking the server at ${a.origin}`));
      const [snapshot] = job.json as Array<{ rows: number; checksum: string }>;
      assert.equal(snapshot!.rows, 5);

      const meta = (await (await get(b.origin, '/feeds/proxies/export/latest/meta', acme.key)).json()) as { checksum: string };
      assert.equal(meta.checksum, snapshot!.checksum);
      const viaStore = await fetch(`${b.origin}/api/v4/feeds/proxies/export/${date}/${hour}`, {
        headers: { 'x-api-key': acme.key },
        redirect: 'manual',
      });
      assert.equal(viaStore.status, 307);
      const presigned = viaStore.headers.get('location')!;
      assert.ok(presigned.startsWith(c.bucketEndpoint), presigned);
      const fromS3 = Buffer.from(await (await fetch(presigned)).arrayBuffer());
      assert.equal(sha256(fromS3), meta.checksum);
      assert.equal((await readParquet(new Uint8Array(fromS3))).numRows, 5);

      // Node C serves downloads itself (UMBRA_DOWNLOADS=umbra); its URL is good on any node.
      const viaUmbra = await fetch(`${nodeC.origin}/api/v4/feeds/proxies/export/${date}/${hour}`, {
        headers: { 'x-api-key': acme.key },
        redirect: 'manual',
      });
      assert.equal(viaUmbra.status, 307);
      // Absolute, on the Host the request named (no UMBRA_PUBLIC_URL here); its path is good on any node.
      const own = new URL(viaUmbra.headers.get('location')!);
      assert.equal(own.origin, nodeC.origin);
      assert.equal(own.pathname, '/downloads');
      assert.ok(own.searchParams.get('object'));
      const fromUmbra = await fetch(`${c.lbOrigin}${own.pathname}${own.search}`);
      assert.equal(fromUmbra.status, 200);
      assert.equal(sha256(Buffer.from(await fromUmbra.arrayBuffer())), meta.checksum);

      // From an operator's machine (no server on its data dir) the job runs there, in its turn: while a
      // node's pass holds the export lock it waits, and it runs once the lock is free.
      const db = new PgPool(testEngines.databaseUrl, { schema: c.run.schema });
      try {
        const nodePass = await new PgJobLock(db, c.run.schema).tryAcquire(EXPORT_LOCK);
        assert.ok(nodePass);
        const earlier = hourMs - HOUR_MS;
        const operatorJob = c.cli([
          'exports',
          'run-hourly',
          '--feed',
          'proxies',
          '--date',
          utcDate(earlier),
          '--hour',
          String(utcHour(earlier)),
        ]);
        await sleep(4_000);
        const releasedAt = Date.now();
        await nodePass.release();
        const done = await operatorJob;
        assert.equal(done.code, 0, done.stderr);
        const [quiet] = done.json as Array<{ rows: number; createdAt: number }>;
        assert.equal(quiet!.rows, 0, 'an hour without records gets a file of zero rows');
        assert.ok(quiet!.createdAt >= Math.floor(releasedAt / 1000), "written after the node's pass let the lock go");
      } finally {
        await db.close();
      }
    });

    await t.test('gRPC through the HAProxy h2c frontend answers unary calls, billed like HTTP', async () => {
      const client = grpcClient(c.lbGrpcPort);
      try {
        for (const ip of ['8.8.8.8', '2001:4860:4860::8888', '1.1.1.1']) {
          const answer = await client.unary('LookupIP', { ip_address: ip }, acme.key);
          assert.equal(answer.error, undefined, answer.error?.message);
          assert.equal(answer.value.ip, ip);
          assert.ok(Number(answer.trailers['x-credits-remaining']) > 0);
        }
        const refused = await client.unary('LookupIP', { ip_address: '8.8.8.8' }, 'not-a-key');
        assert.equal(refused.error?.code, 16, 'UNAUTHENTICATED');
      } finally {
        client.close();
      }
    });

    await t.test('a revoked key is refused by every node within 5 s, and the team keeps its other keys', async (st) => {
      const other = await c.cli(['admin', 'key', 'create', '--org', 'acme', '--email', 'ci@acme.test', '--scopes', 'BASIC']);
      assert.equal(other.code, 0, other.stderr);
      const doomed = other.json as { id: string; key: string };
      // Every node has just verified it (its verdict cached).
      for (const n of c.nodes) assert.equal((await get(n.origin, '/lookup/ip/8.8.8.8', doomed.key)).status, 200);
      const asked = performance.now();
      const revoked = await c.cli(['admin', 'key', 'revoke', doomed.id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      // The revocation is committed by the time the verb exits; every node must refuse the key soon after.
      const t0 = performance.now();
      const took = await Promise.all(
        c.nodes.map((n) =>
          until(
            `${n.name} to refuse the revoked key`,
            async () => (await get(n.origin, '/lookup/ip/8.8.8.8', doomed.key)).status === 401 && performance.now() - t0,
            5_000,
          ),
        ),
      );
      for (const n of c.nodes) assert.equal((await get(n.origin, '/lookup/ip/8.8.8.8', acme.key)).status, 200);
      st.diagnostic(
        `revoke verb took ${Math.round(t0 - asked)} ms; the nodes refused the key ${took.map((ms) => `${Math.round(ms as number)} ms`).join(', ')} after it`,
      );
    });

    await t.test('a node that dies leaves rotation: requests keep being answered and its checks take it out', async (st) => {
      nodeC.proc.kill('SIGKILL');
      await nodeC.exited;
      const killedAt = performance.now();
      const statuses = await pool(
        addresses(60, 300_000).map((ip) => async () => (await get(c.lbOrigin, `/lookup/ip/${ip}`, acme.key)).status),
        4,
      );
      assert.deepEqual(new Set(statuses), new Set([200]), 'redispatched to the live nodes');
      await until('HAProxy to take the dead node out of every backend', async () => {
        const state = await c.lb.servers();
        return [...state.values()].every((servers) => servers.get('n3') === false && servers.get('n1') && servers.get('n2'));
      });
      st.diagnostic(`the killed node left rotation ${Math.round(performance.now() - killedAt)} ms after it died`);
      const client = grpcClient(c.lbGrpcPort);
      try {
        assert.equal((await client.unary('LookupIP', { ip_address: '8.8.8.8' }, acme.key)).error, undefined);
      } finally {
        client.close();
      }
    });

    await t.test('with no node left, HAProxy answers 503 as umbra would: problem+json with Retry-After', async () => {
      for (const n of [a, b]) n.proc.kill('SIGKILL');
      await Promise.all([a.exited, b.exited]);
      // On a new connection: the client's pooled keep-alive connection to HAProxy may be closed at the
      // moment it is reused right after the kills ("fetch failed" once in a fresh-clone run).
      const res = await rawExchange(
        Number(new URL(c.lbOrigin).port),
        `GET /api/v4/lookup/ip/8.8.8.8 HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${acme.key}\r\nConnection: close\r\n\r\n`,
        10_000,
      );
      assert.equal(res.status, 503, res.raw);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.headers['retry-after'], '5');
      const body = JSON.parse(res.body) as { status: number; type: string; detail: string; error: string };
      assert.equal(body.status, 503);
      assert.equal(body.type, 'urn:umbra:problem:unavailable');
      assert.equal(body.error, body.detail);
    });
  });
});
