import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { rawExchange, type RawAnswer } from '../../helpers/raw-http.ts';

// What node's HTTP parser refuses never reaches fastify: these go over raw sockets to a listening app.
const PROBLEM = 'application/problem+json';

function assertProblem(a: RawAnswer, status: number, detail: RegExp): Record<string, unknown> {
  assert.equal(a.status, status, a.raw.slice(0, 200));
  assert.equal(a.headers['content-type'], PROBLEM);
  assert.equal(a.headers.connection, 'close');
  assert.ok(a.headers['x-request-id']);
  assert.equal(Number(a.headers['content-length']), Buffer.byteLength(a.body, 'latin1'));
  const body = JSON.parse(a.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['detail', 'error', 'status', 'title', 'type']);
  assert.equal(body.status, status);
  assert.equal(body.error, body.detail);
  assert.match(body.type as string, /^urn:umbra:problem:/);
  assert.match(body.detail as string, detail);
  assert.ok(a.closed, 'the server closes the connection after answering');
  return body;
}

describe('answers at the connection edge', () => {
  let app: TestApp;
  let port = 0;
  // A short headers timeout so the slow-client case is quick; everything else is the default.
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const fn of cleanups) await fn();
  });
  before(async () => {
    app = await buildTestApp(
      { after: (fn: () => Promise<void>) => cleanups.push(fn) } as never,
      {},
      { UMBRA_HTTP_HEADERS_TIMEOUT_MS: '400', UMBRA_HTTP_REQUEST_TIMEOUT_MS: '2000' },
    );
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    port = (app.http.server.address() as { port: number }).port;
  });

  it('should answer a malformed request line with a 400 problem', async () => {
    assertProblem(
      await rawExchange(port, 'G@T /health HTTP/1.1\r\nHost: x\r\n\r\n'),
      400,
      /not valid HTTP\/1\.1: unknown or malformed method/,
    );
    assertProblem(await rawExchange(port, 'GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n'), 400, /not valid HTTP\/1\.1/);
    assertProblem(await rawExchange(port, 'GET /health HTTP/7.3\r\nHost: x\r\n\r\n'), 400, /not valid HTTP\/1\.1/);
  });

  it('should answer a header with characters HTTP does not allow with a 400 problem', async () => {
    const a = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n');
    const body = assertProblem(a, 400, /header name or value/);
    assert.equal(body.title, 'Bad request');
  });

  it('should answer an oversized header block with a 431 problem that has a detail', async () => {
    const a = await rawExchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const body = assertProblem(a, 431, /exceed 16384 bytes/);
    assert.equal(body.title, 'Request header fields too large');
  });

  it('should answer CONNECT with a 405 problem naming the allowed methods, then close', async () => {
    const a = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: mine-1\r\n\r\n');
    assertProblem(a, 405, /GET, HEAD and POST/);
    assert.equal(a.headers.allow, 'GET, HEAD, POST');
    assert.equal(a.headers['x-request-id'], 'mine-1');
  });

  it('should answer a malformed chunked body with a 400 problem', async () => {
    const { key } = await app.team();
    const head =
      `POST /api/v4/lookup/ips HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Type: ` +
      `application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    assertProblem(await rawExchange(port, [head, 'ZZ\r\n{"ips":[]}\r\n0\r\n\r\n']), 400, /malformed chunked body/);
  });

  it('should answer a client that sends its headers too slowly with a 408 problem', async () => {
    const started = Date.now();
    const a = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 8000);
    assertProblem(a, 408, /within 400 ms/);
    assert.ok(Date.now() - started < 5000, `answered within the headers timeout and one check (${Date.now() - started} ms)`);
  });

  it('should answer an upgrade request like any other request instead of leaving it hanging', async () => {
    const a = await rawExchange(port, 'GET /api/v4/chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', 2000);
    assert.equal(a.status, 404);
    assert.equal(a.headers['content-type'], PROBLEM);
    const ok = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n', 2000);
    assert.equal(ok.status, 200);
  });

  it('should count the edge answers in umbra_http_requests_total', async () => {
    const text = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(text, /umbra_http_requests_total\{operation="edge",status="400"\} [1-9]/);
    assert.match(text, /umbra_http_requests_total\{operation="edge",status="431"\} 1/);
    assert.match(text, /umbra_http_requests_total\{operation="edge",status="405"\} 1/);
  });
});
