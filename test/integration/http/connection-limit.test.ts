import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/lib/logger.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { rawConnect, rawExchange } from '../../helpers/raw-http.ts';

// UMBRA_MAX_CONNECTIONS over real sockets: idle connections are reclaimed (longest idle first) so new
// clients are served; when every connection is busy, new ones get a 503 problem+json and are closed.

interface Limited {
  app: TestApp;
  port: number;
  logs: Array<Record<string, unknown>>;
  /** Opens a raw connection (closed when the test ends, before the app) and notes when the server closes it. */
  idle(): Promise<{ socket: Socket; closed: () => boolean }>;
}

async function limitedApp(t: TestContext, max: number): Promise<Limited> {
  const sockets: Socket[] = [];
  // Registered before the app's own cleanup, so the app never waits for the test's connections.
  t.after(() => {
    for (const s of sockets) s.destroy();
  });
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildTestApp(t, { logger: createLogger('warn', sink) }, { UMBRA_MAX_CONNECTIONS: String(max) });
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.http.server.address() as { port: number }).port;
  const idle = async () => {
    const socket = await rawConnect(port);
    sockets.push(socket);
    let closed = false;
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
    socket.resume();
    return { socket, closed: () => closed };
  };
  return { app, port, logs, idle };
}

function get(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** Waits until cond() holds (or 5 s pass: the assertion that follows then fails). */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond() && Date.now() < deadline) await tick(10);
}

async function metric(app: TestApp, name: string): Promise<number> {
  const text = (await app.http.inject({ url: '/metrics' })).body;
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  assert.ok(m, `${name} is exported`);
  return Number(m[1]);
}

describe('the HTTP connection limit', () => {
  it('should close idle connections, longest idle first, so that new clients are still served', async (t) => {
    const { app, port, logs, idle } = await limitedApp(t, 50);
    // One after another, so the server accepts them in this order.
    const first: Array<Awaited<ReturnType<typeof idle>>> = [];
    for (let i = 0; i < 50; i++) first.push(await idle());
    // The oldest connection makes a request: it is now the one idle for the shortest time.
    let answered = '';
    first[0]!.socket.on('data', (d: Buffer) => (answered += d.toString('latin1')));
    first[0]!.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => answered.includes('"status"'));
    const more: Array<Awaited<ReturnType<typeof idle>>> = [];
    for (let i = 0; i < 3; i++) more.push(await idle());
    await until(() => first[3]!.closed());
    assert.equal(first[0]!.closed(), false, 'the connection that was just used is kept');
    assert.deepEqual(
      [1, 2, 3].map((i) => first[i]!.closed()),
      [true, true, true],
      'the longest idle ones are closed first',
    );
    assert.equal(
      more.some((c) => c.closed()),
      false,
      'the newcomers are served',
    );

    // A flood of idle connections, four times the limit: every one is accepted (older idle ones make room).
    for (let i = 0; i < 200; i++) more.push(await idle());
    await tick(50);
    assert.equal(await metric(app, 'umbra_http_connections_limit'), 50);
    assert.ok((await metric(app, 'umbra_http_connections')) <= 50);
    assert.ok((await metric(app, 'umbra_http_connections_reclaimed_total')) >= 150);
    assert.equal(await metric(app, 'umbra_http_connections_refused_total'), 0);
    const answer = await get(port, '/health');
    assert.equal(answer.status, 200, 'a new client is served');
    const warn = logs.find((l) => l.msg === 'connection limit reached');
    assert.ok(warn, 'a warn line says the limit was reached');
    assert.equal(warn.level, 40);
    assert.equal(warn.transport, 'http');
    assert.equal(warn.limit, 50);
    assert.ok((warn.reclaimed as number) >= 1);
    assert.equal(logs.filter((l) => l.msg === 'connection limit reached').length, 1, 'at most one line per 10 s');
  });

  it('should reclaim a stalled upload, refuse with a 503 problem when every connection is busy, and serve again once one frees', async (t) => {
    const { app, port, logs, idle } = await limitedApp(t, 10);
    const { key } = await app.team({ maxStreams: 10 });
    const openStream = async () => {
      const c = await idle();
      let head = '';
      c.socket.on('data', (d: Buffer) => (head += d.toString('latin1')));
      c.socket.write(`GET /api/v4/feeds/proxies/stream HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n\r\n`);
      while (!head.includes('\r\n\r\n')) await tick(5);
      assert.match(head, /^HTTP\/1\.1 200 /);
      return c;
    };
    // A client that starts an upload (no key needed: the route waits for the body) and stalls, and
    // nine live streams: answers under way, the connections umbra owes something to.
    const stalled = await idle();
    stalled.socket.write('POST /api/v4/nothing HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a');
    const busy = [];
    for (let i = 0; i < 9; i++) busy.push(await openStream());
    await tick(50);
    assert.equal((await get(port, '/health')).status, 200, 'the stalled upload makes room');
    assert.equal(stalled.closed(), true);

    busy.push(await openStream());
    const refused = await get(port, '/health');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['content-type'], 'application/problem+json');
    assert.equal(refused.headers.connection, 'close');
    assert.equal(refused.headers['retry-after'], '1');
    const body = JSON.parse(refused.body);
    assert.deepEqual(Object.keys(body).sort(), ['detail', 'error', 'status', 'title', 'type']);
    assert.equal(body.status, 503);
    assert.equal(body.error, body.detail);
    assert.match(body.detail, /connection limit/);
    const raw = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 3000);
    assert.equal(raw.status, 503);
    assert.ok(raw.closed, 'a refused connection is closed');
    assert.equal(
      busy.some((b) => b.closed()),
      false,
      'busy connections are never reclaimed',
    );
    assert.ok((await metric(app, 'umbra_http_connections_refused_total')) >= 2);
    assert.equal(await metric(app, 'umbra_http_connections'), 10);
    // The reclaim wrote the window's line at once; the refusals are counted in the next one, 10 s on
    // (the limiter's unit test follows a whole window).
    const warns = logs.filter((l) => l.msg === 'connection limit reached');
    assert.equal(warns.length, 1);
    assert.equal(warns[0]!.reclaimed, 1);

    busy[0]!.socket.destroy();
    await tick(50);
    assert.equal((await get(port, '/health')).status, 200, 'served again once a connection is free');
  });
});
