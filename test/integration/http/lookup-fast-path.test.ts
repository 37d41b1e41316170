import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/lib/logger.ts';
import { loadDataset } from '../../../src/modules/dataset/dataset-reader.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { routedAddresses } from '../../helpers/routed-addresses.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

// GET /api/v4/lookup/ip/{ip} is served in front of fastify (src/http/fast-route.ts). inject() bypasses
// the server factory, so these tests go over real sockets: the same requests to an app with the fast
// path and to one without it must get byte-identical answers and move credits, buckets, metrics and
// logs alike. Both apps start from the same state and the same manual clock, and see the same sequence.

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

type Role = 'none' | 'good' | 'malformed' | 'unknown' | 'revoked' | 'noBasic' | 'broke' | 'tight';

interface Side {
  app: TestApp;
  port: number;
  agent: Agent;
  keys: Record<Exclude<Role, 'none' | 'malformed' | 'unknown'>, string>;
  orgId: string;
  /** Requests that reached fastify's request pipeline (an onRequest hook counts them). */
  seenByFastify: () => number;
  logLines: string[];
}

async function side(t: TestContext, fastPath: boolean): Promise<Side> {
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = await buildTestApp(t, { fastPath, logger: createLogger('info', sink) });
  let seen = 0;
  app.http.addHook('onRequest', (_req, _reply, done) => {
    seen++;
    done();
  });
  const main = await app.team({ name: 'main', credits: 1000 });
  const noBasic = await app.team({ name: 'feeds-only', scopes: ['PROXY_FEEDS'] });
  const broke = await app.team({ name: 'broke', credits: 0 });
  const tight = await app.team({ name: 'tight' });
  await app.services.admin.setLimit(tight.orgId, 'lookup', { rate: 0.1, burst: 1 });
  const revoked = await app.key(main.orgId);
  await app.services.admin.revokeKey(revoked.keyId);
  app.services.accounts.invalidate();
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  return {
    app,
    port: (app.http.server.address() as { port: number }).port,
    agent,
    keys: { good: main.key, revoked: revoked.key, noBasic: noBasic.key, broke: broke.key, tight: tight.key },
    orgId: main.orgId,
    seenByFastify: () => seen,
    logLines,
  };
}

function send(s: Side, method: string, path: string, role: Role, headers: Record<string, string> = {}): Promise<Answer> {
  const key =
    role === 'none'
      ? undefined
      : role === 'malformed'
        ? 'not-a-key'
        : role === 'unknown'
          ? '00000000-0000-4000-8000-000000000000'
          : s.keys[role];
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: s.port, method, path, agent: s.agent, headers: { ...headers, ...(key ? { 'x-api-key': key } : {}) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const UUID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const IP = '/api/v4/lookup/ip';

interface Row {
  name: string;
  method?: string;
  path: string;
  role: Role;
  headers?: Record<string, string>;
  status: number;
  /** true: answered before fastify's pipeline; false: handed to fastify. */
  fast: boolean;
}

// Run in this order on both sides: the tight bucket's second request is the 429.
const ROWS: Row[] = [
  { name: 'IPv4', path: `${IP}/8.8.8.8`, role: 'good', headers: { 'x-request-id': 'req-42' }, status: 200, fast: true },
  { name: 'IPv6 with raw colons', path: `${IP}/2001:4860:4860::8888`, role: 'good', status: 200, fast: true },
  { name: 'IPv6 percent-encoded', path: `${IP}/2001%3A4860%3A4860%3A%3A8888`, role: 'good', status: 200, fast: true },
  { name: 'IPv6 upper-case percent-encoding', path: `${IP}/2001%3a4860%3a4860%3a%3a8888`, role: 'good', status: 200, fast: true },
  { name: 'IPv4-mapped IPv6', path: `${IP}/::ffff:8.8.8.8`, role: 'good', status: 200, fast: true },
  { name: 'private address', path: `${IP}/10.1.2.3`, role: 'good', status: 200, fast: true },
  { name: 'invalid address', path: `${IP}/not-an-ip`, role: 'good', status: 400, fast: true },
  { name: 'plain segment that is no address', path: `${IP}/localhost`, role: 'good', status: 400, fast: true },
  { name: 'upper-case IPv6', path: `${IP}/2001:4860:4860::88AB`, role: 'good', status: 200, fast: true },
  { name: 'plain segment of 64 characters', path: `${IP}/${'1'.repeat(64)}`, role: 'good', status: 400, fast: true },
  { name: 'plain segment of 65 characters (through the router)', path: `${IP}/${'1'.repeat(65)}`, role: 'good', status: 400, fast: true },
  { name: 'CIDR via encoded slash', path: `${IP}/8.8.8.0%2F24`, role: 'good', status: 400, fast: true },
  { name: 'zone id', path: `${IP}/fe80::1%25eth0`, role: 'good', status: 400, fast: true },
  { name: 'query string', path: `${IP}/1.1.1.1?explain=false&x=1`, role: 'good', status: 200, fast: true },
  { name: 'HEAD', method: 'HEAD', path: `${IP}/8.8.8.8`, role: 'good', status: 200, fast: true },
  { name: 'missing key', path: `${IP}/8.8.8.8`, role: 'none', status: 401, fast: true },
  { name: 'malformed key', path: `${IP}/8.8.8.8`, role: 'malformed', status: 401, fast: true },
  { name: 'unknown key', path: `${IP}/8.8.8.8`, role: 'unknown', status: 401, fast: true },
  { name: 'revoked key', path: `${IP}/8.8.8.8`, role: 'revoked', status: 401, fast: true },
  { name: 'missing scope', path: `${IP}/8.8.8.8`, role: 'noBasic', status: 403, fast: true },
  { name: 'zero credits', path: `${IP}/8.8.8.8`, role: 'broke', status: 402, fast: true },
  { name: 'tiny bucket, first', path: `${IP}/8.8.8.8`, role: 'tight', status: 200, fast: true },
  { name: 'tiny bucket, second', path: `${IP}/8.8.8.8`, role: 'tight', status: 429, fast: true },
  {
    name: 'malformed request id',
    path: `${IP}/8.8.4.4`,
    role: 'good',
    headers: { 'x-request-id': 'has spaces in it' },
    status: 200,
    fast: true,
  },
  { name: 'trailing slash', path: `${IP}/8.8.8.8/`, role: 'good', status: 404, fast: false },
  { name: 'double slash inside', path: `${IP}//8.8.8.8`, role: 'good', status: 404, fast: false },
  { name: 'double slash in front', path: `/${IP}/8.8.8.8`, role: 'good', status: 404, fast: false },
  { name: 'empty address', path: `${IP}/`, role: 'good', status: 400, fast: true },
  { name: 'unknown route next to it', path: '/api/v4/lookup/ipx/8.8.8.8', role: 'good', status: 404, fast: false },
  { name: 'address longer than the schema allows', path: `${IP}/${'1'.repeat(300)}`, role: 'good', status: 400, fast: false },
  { name: 'overlong path', path: `${IP}/${'a'.repeat(1200)}`, role: 'good', status: 414, fast: false },
  { name: 'bad percent-encoding', path: `${IP}/%E0%A4%A`, role: 'good', status: 400, fast: false },
  { name: 'POST', method: 'POST', path: `${IP}/8.8.8.8`, role: 'good', status: 405, fast: false },
  { name: 'batch next to it', method: 'POST', path: '/api/v4/lookup/ips', role: 'none', status: 401, fast: false },
];

/** Every header but the date (and a generated request id, checked for shape): byte-for-byte the same. */
function comparable(a: Answer): Record<string, unknown> {
  const { date: _date, ...rest } = a.headers;
  return rest;
}

describe('GET /api/v4/lookup/ip fast path', () => {
  it('should answer every request exactly as fastify does: status, body and headers', async (t) => {
    const fast = await side(t, true);
    const slow = await side(t, false);
    for (const row of ROWS) {
      const method = row.method ?? 'GET';
      const [fastBefore, slowBefore] = [fast.seenByFastify(), slow.seenByFastify()];
      const a = await send(fast, method, row.path, row.role, row.headers);
      const b = await send(slow, method, row.path, row.role, row.headers);
      const label = `${row.name}: ${method} ${row.path.slice(0, 80)}`;
      assert.equal(a.status, row.status, label);
      assert.equal(b.status, row.status, label);
      // fastify's pipeline saw the request on the fast side only when it was handed over (a router-level
      // refusal such as the 414 runs no hook on either side).
      const seenFast = fast.seenByFastify() - fastBefore;
      const seenSlow = slow.seenByFastify() - slowBefore;
      if (row.fast) assert.deepEqual([seenFast, seenSlow], [0, 1], `${label}: served by the fast path`);
      else assert.equal(seenFast, seenSlow, `${label}: handed to fastify`);
      assert.equal(a.body, b.body, label);
      const given = row.headers?.['x-request-id'];
      if (given !== undefined && /^[\w.:-]+$/.test(given)) {
        assert.equal(a.headers['x-request-id'], given, label);
      } else if (b.headers['x-request-id'] === undefined) {
        assert.equal(a.headers['x-request-id'], undefined, `${label}: fastify's router answers this one itself, with no id`);
      } else {
        assert.match(String(a.headers['x-request-id']), UUID_LIKE, label);
        assert.match(String(b.headers['x-request-id']), UUID_LIKE, label);
        delete a.headers['x-request-id'];
        delete b.headers['x-request-id'];
      }
      assert.deepEqual(comparable(a), comparable(b), label);
      if (row.fast && row.status >= 400) assert.equal(a.headers['content-type'], 'application/problem+json', label);
    }
  });

  it('should send the headers users rely on from the fast path', async (t) => {
    const fast = await side(t, true);
    const ok = await send(fast, 'GET', `${IP}/8.8.8.8`, 'good');
    assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(ok.headers['content-length'], String(Buffer.byteLength(ok.body)));
    assert.equal(ok.headers['x-credits-remaining'], '999');
    assert.deepEqual(
      [ok.headers['ratelimit-limit'], ok.headers['ratelimit-remaining'], ok.headers['ratelimit-reset']],
      ['200', '199', '1'],
    );
    assert.equal(JSON.parse(ok.body).ip, '8.8.8.8');
    assert.equal(ok.headers.connection, 'keep-alive');

    const v6 = await send(fast, 'GET', `${IP}/2001%3A4860%3A4860%3A%3A8888`, 'good');
    assert.equal(JSON.parse(v6.body).ip, '2001:4860:4860::8888');
    const mapped = await send(fast, 'GET', `${IP}/::ffff:8.8.8.8`, 'good');
    assert.equal(JSON.parse(mapped.body).ip, '8.8.8.8');

    const head = await send(fast, 'HEAD', `${IP}/8.8.8.8`, 'good');
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], ok.headers['content-length']);
    assert.equal(head.headers['x-credits-remaining'], '996', 'HEAD is billed as GET is');

    await send(fast, 'GET', `${IP}/8.8.8.8`, 'tight');
    const limited = await send(fast, 'GET', `${IP}/8.8.8.8`, 'tight');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '10');
    assert.deepEqual([limited.headers['ratelimit-limit'], limited.headers['ratelimit-remaining']], ['1', '0']);
    assert.equal(limited.headers['x-credits-remaining'], undefined);
    const problem = JSON.parse(limited.body);
    assert.equal(problem.status, 429);
    assert.equal(problem.error, problem.detail);

    const broke = await send(fast, 'GET', `${IP}/8.8.8.8`, 'broke');
    assert.equal(broke.status, 402);
    assert.match(JSON.parse(broke.body).detail, /costs 1 credit and the team balance is 0/);
  });

  it('should move credits, metrics and the access log exactly as fastify does', async (t) => {
    const fast = await side(t, true);
    const slow = await side(t, false);
    const sequence: Array<[string, Role]> = [
      [`${IP}/8.8.8.8`, 'good'],
      [`${IP}/2001:db8::1`, 'good'],
      [`${IP}/nope`, 'good'],
      [`${IP}/8.8.8.8`, 'none'],
      [`${IP}/8.8.8.8`, 'broke'],
      [`${IP}/8.8.8.8`, 'tight'],
      [`${IP}/8.8.8.8`, 'tight'],
      [`${IP}/1.1.1.1`, 'good'],
    ];
    for (const s of [fast, slow]) for (const [path, role] of sequence) await send(s, 'GET', path, role);

    for (const s of [fast, slow]) {
      const balance = await s.app.stores.ledger.get(s.orgId, Math.floor(s.app.clock.now() / 1000));
      assert.equal(balance?.balance, 1000 - 3, 'three successful lookups charged one credit each; failures are free');
    }
    const scrape = async (s: Side) => (await send(s, 'GET', '/metrics', 'none')).body;
    const lookupLines = (text: string) =>
      text.split('\n').filter((l) => l.includes('operation="lookup.ip"') && !l.includes('_sum') && !l.includes('_bucket'));
    const fastLines = lookupLines(await scrape(fast));
    assert.deepEqual(fastLines, lookupLines(await scrape(slow)));
    const value = (name: string) =>
      Number(
        fastLines
          .find((l) => l.startsWith(name))
          ?.split(' ')
          .pop(),
      );
    assert.equal(value('umbra_http_requests_total{operation="lookup.ip",status="200"}'), 4);
    assert.equal(value('umbra_http_requests_total{operation="lookup.ip",status="400"}'), 1);
    assert.equal(value('umbra_http_requests_total{operation="lookup.ip",status="401"}'), 1);
    assert.equal(value('umbra_http_requests_total{operation="lookup.ip",status="402"}'), 1);
    assert.equal(value('umbra_http_requests_total{operation="lookup.ip",status="429"}'), 1);
    assert.equal(value('umbra_credits_charged_total{operation="lookup.ip"}'), 4);
    assert.equal(value('umbra_rate_limited_total{operation="lookup.ip",bucket="lookup"}'), 1);
    assert.equal(value('umbra_http_request_duration_seconds_count{operation="lookup.ip",status="200"}'), 4);

    // The access lines agree but for the generated id, the time and the duration; no key appears.
    const lines = (s: Side) =>
      s.logLines
        .map((l) => JSON.parse(l))
        .filter((e) => e.msg === 'request' && e.operation === 'lookup.ip')
        .map(({ reqId, time, ms, ...rest }) => {
          assert.equal(typeof ms, 'number');
          assert.match(reqId, UUID_LIKE);
          return rest;
        });
    assert.equal(lines(fast).length, sequence.length);
    assert.deepEqual(lines(fast), lines(slow));
    for (const key of Object.values(fast.keys)) assert.ok(!fast.logLines.join('\n').includes(key.slice(0, 18)), 'no key is logged');
  });

  it('should answer the C-client bench sample byte for byte as fastify does, on the real dataset', async (t) => {
    // A prefix of the very lists `npm run bench -- "C clients"` sends (same generator, same seed):
    // random routed IPv4 and IPv6 addresses and the mixed list, over the packaged dataset, so every
    // kind of record the bench touches (networks with and without location, IPv6, 6to4 and the like)
    // is answered alike by both paths, first touch included.
    const dataset = loadDataset(await ensureRealDataset());
    const sample = ['8.8.8.8', ...routedAddresses('v4', 400), ...routedAddresses('v6', 200), ...routedAddresses('mixed', 200)];
    const sides = await Promise.all(
      [true, false].map(async (fastPath) => {
        const app = await buildTestApp(t, { fastPath, dataset });
        let seen = 0;
        app.http.addHook('onRequest', (_req, _reply, done) => {
          seen++;
          done();
        });
        const team = await app.team({ name: 'bench', credits: 1_000_000 });
        await app.services.admin.setLimit(team.orgId, 'lookup', { rate: 1e6, burst: 1e6 });
        await app.http.listen({ port: 0, host: '127.0.0.1' });
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        t.after(() => agent.destroy());
        const port = (app.http.server.address() as { port: number }).port;
        const get = (ip: string, id: string) =>
          new Promise<Answer>((resolve, reject) => {
            const req = request(
              { host: '127.0.0.1', port, path: `${IP}/${ip}`, agent, headers: { 'x-api-key': team.key, 'x-request-id': id } },
              (res) => {
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () =>
                  resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('latin1') }),
                );
              },
            );
            req.on('error', reject);
            req.end();
          });
        return { get, seen: () => seen };
      }),
    );
    const [fast, slow] = sides as [(typeof sides)[0], (typeof sides)[0]];
    const kinds = new Set<string>();
    for (const [i, ip] of sample.entries()) {
      const a = await fast.get(ip, `bench-${i}`);
      const b = await slow.get(ip, `bench-${i}`);
      assert.equal(a.status, 200, `${ip}: ${a.body}`);
      assert.equal(a.body, b.body, ip);
      assert.deepEqual(comparable(a), comparable(b), ip);
      const answer = JSON.parse(a.body);
      kinds.add(`${answer.network?.asn ? 'asn' : 'no-asn'}/${answer.location?.country ? 'located' : 'unlocated'}`);
    }
    // Every request took its own path: none of the fast side's reached fastify, all of the other's did.
    assert.deepEqual([fast.seen(), slow.seen()], [0, sample.length]);
    // The sample is only worth comparing if it reaches real records: announced ranges carry an ASN and
    // nearly all a country.
    assert.ok(kinds.has('asn/located'), [...kinds].join(', '));
  });
});
