import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { parseHead, RawHttp1, type RawServe } from './raw-http1.ts';

const PREFIX = '/api/thing/';

/**
 * A node:http server answering `node <url>`, with the raw reader in front answering `raw <url>` for
 * the route (or, when `serve` says so, later or not at all). Returns the port and the server.
 */
async function start(t: TestContext, serve?: RawServe, keepAliveTimeoutMs = 5000): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    const body = `node ${req.method} ${req.url}`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': `${Buffer.byteLength(body)}` });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  RawHttp1.install(server, {
    prefix: PREFIX,
    serve:
      serve ??
      ((head, reply) => {
        reply(200, ['content-type', 'text/plain', 'content-length', `${4 + head.url.length}`], `raw ${head.url}`);
        return true;
      }),
    maxHeaderBytes: 16384,
    keepAliveTimeoutMs: () => server.keepAliveTimeout,
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as { port: number }).port, server };
}

/** Writes `chunks` (each after the previous was sent) and reads until `answers` responses have fully arrived. */
async function exchange(port: number, chunks: string[], answers: number, pauseMs = 0): Promise<string[]> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', r));
  try {
    let text = '';
    const done = new Promise<string[]>((resolve, reject) => {
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        const got = splitResponses(text);
        if (got.length >= answers) resolve(got);
      });
      socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
    });
    for (const c of chunks) {
      socket.write(c, 'latin1');
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
    return await done;
  } finally {
    socket.destroy();
  }
}

/** Complete responses (head and content-length body) in `text`. */
function splitResponses(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) return out;
    const head = text.slice(at, end);
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    const isHead = /x-head: 1/.test(head);
    const total = end + 4 + (isHead ? 0 : length);
    if (text.length < total) return out;
    out.push(text.slice(at, total));
    at = total;
  }
}

const body = (response: string) => response.slice(response.indexOf('\r\n\r\n') + 4);
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

describe('parseHead', () => {
  it('should read a plain GET of the route: the path, the key and the request id, trimmed', () => {
    assert.deepEqual(
      parseHead('GET /api/thing/1.2.3.4 HTTP/1.1\r\nHost: a\r\nX-Api-Key:  k1 \r\nx-request-id: r\t\r\nConnection: Keep-Alive\r\n', PREFIX),
      {
        url: '/api/thing/1.2.3.4',
        apiKey: 'k1',
        requestId: 'r',
      },
    );
    assert.deepEqual(parseHead('GET /api/thing/a HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n', PREFIX), {
      url: '/api/thing/a',
      apiKey: undefined,
      requestId: undefined,
    });
  });

  it('should leave to node every head it is not sure of', () => {
    const declined = [
      'POST /api/thing/a HTTP/1.1\r\nHost: a\r\n',
      'HEAD /api/thing/a HTTP/1.1\r\nHost: a\r\n',
      'GET /api/thing/a HTTP/1.0\r\nHost: a\r\n',
      'GET /api/other/a HTTP/1.1\r\nHost: a\r\n',
      'GET /api/thing/a?explain=true HTTP/1.1\r\nHost: a\r\n',
      'GET /api/thing/%31 HTTP/1.1\r\nHost: a\r\n',
      'GET /api/thing/a HTTP/1.1\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nHost: b\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nx-api-key: 1\r\nX-API-KEY: 2\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nx-request-id: 1\r\nx-request-id: 2\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\nx-api-key: k\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nx-note: a\0b\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nx-note: caf\xe9\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\n folded\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nno colon\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\nbad name: 1\r\n',
      'GET /api/thing/a HTTP/1.1\r\nHost: a\r\n: empty name\r\n',
    ];
    for (const head of declined) assert.equal(parseHead(head, PREFIX), null, JSON.stringify(head));
  });
});

describe(RawHttp1.name, () => {
  it('should answer the route itself, keep the connection alive, and write what node would around the answer', async (t) => {
    const { port } = await start(t);
    const answers = await exchange(port, [get('/api/thing/1'), get('/api/thing/2')], 2, 20);
    assert.deepEqual(answers.map(body), ['raw /api/thing/1', 'raw /api/thing/2']);
    const lines = answers[0]!.split('\r\n');
    assert.equal(lines[0], 'HTTP/1.1 200 OK');
    assert.deepEqual(lines.slice(1, 3), ['content-type: text/plain', 'content-length: 16']);
    assert.match(lines[3]!, /^Date: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/);
    assert.deepEqual(lines.slice(4, 7), ['Connection: keep-alive', 'Keep-Alive: timeout=5', '']);
  });

  it('should hand the connection to node at the first request it does not take, with every byte not answered, in order', async (t) => {
    const { port } = await start(t);
    // One write: two for the raw reader, one for node (a query), then one node must take as the connection is its own now.
    const answers = await exchange(
      port,
      [get('/api/thing/1') + get('/api/thing/2') + get('/api/thing/3?q=1') + get('/api/thing/4') + get('/other')],
      5,
    );
    assert.deepEqual(answers.map(body), [
      'raw /api/thing/1',
      'raw /api/thing/2',
      'node GET /api/thing/3?q=1',
      'node GET /api/thing/4',
      'node GET /other',
    ]);
  });

  it('should give node a head that arrives in pieces, and a body, untouched', async (t) => {
    const { port } = await start(t);
    const split = get('/api/thing/1');
    assert.deepEqual((await exchange(port, [split.slice(0, 10), split.slice(10)], 1, 50)).map(body), ['node GET /api/thing/1']);
    const post = 'POST /api/thing/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd';
    assert.deepEqual((await exchange(port, [get('/api/thing/0') + post + get('/api/thing/2')], 3)).map(body), [
      'raw /api/thing/0',
      'node POST /api/thing/1',
      'node GET /api/thing/2',
    ]);
  });

  it('should answer requests in the order they came when an answer is late, and serve the ones behind it', async (t) => {
    const { port } = await start(t, (head, reply) => {
      const text = `raw ${head.url}`;
      const send = () => reply(200, ['content-length', `${text.length}`], text);
      if (head.url.endsWith('/slow')) setTimeout(send, 100);
      else send();
      return true;
    });
    const answers = await exchange(port, [get('/api/thing/slow') + get('/api/thing/fast'), get('/api/thing/after')], 3, 20);
    assert.deepEqual(answers.map(body), ['raw /api/thing/slow', 'raw /api/thing/fast', 'raw /api/thing/after']);
  });

  it('should write the body as UTF-8, the bytes its content-length counts', async (t) => {
    const text = '{"city":"Łódź","isp":"Zürich Telekom"}';
    const { port } = await start(t, (_head, reply) => {
      reply(200, ['content-length', `${Buffer.byteLength(text)}`], text);
      return true;
    });
    const [answer] = await exchange(port, [get('/api/thing/1') + get('/api/thing/2')], 2);
    assert.equal(Buffer.from(body(answer!), 'latin1').toString('utf8'), text);
  });

  it('should let node answer a request the route declines', async (t) => {
    const { port } = await start(t, () => false);
    assert.deepEqual((await exchange(port, [get('/api/thing/1'), get('/api/thing/2')], 2, 20)).map(body), [
      'node GET /api/thing/1',
      'node GET /api/thing/2',
    ]);
  });

  it("should close an idle connection after node's keep-alive timeout", async (t) => {
    const { port } = await start(t, undefined, 150);
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', r));
    socket.write(get('/api/thing/1'));
    const began = Date.now();
    await new Promise<void>((r) => socket.once('close', () => r()).resume());
    const took = Date.now() - began;
    assert.ok(took >= 100 && took < 3000, `closed after ${took} ms`);
  });

  it('should close its idle connections when the server closes, and let close() finish', async (t) => {
    const { port, server } = await start(t);
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', r));
    const answered = new Promise<void>((r) => socket.once('data', () => r()));
    socket.write(get('/api/thing/1'));
    await answered;
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    const serverClosed = new Promise<void>((r) => server.close(() => r()));
    await Promise.race([
      Promise.all([closed, serverClosed]),
      new Promise((_, reject) => setTimeout(() => reject(new Error('server.close() waited on a raw connection')), 3000)),
    ]);
  });

  it('should end a connection after the answer it was making when the server began to close', async (t) => {
    const { port, server } = await start(t, (head, reply) => {
      const text = `raw ${head.url}`;
      setTimeout(() => reply(200, ['content-length', `${text.length}`], text), 200);
      return true;
    });
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', r));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(get('/api/thing/slow'));
    await new Promise((r) => setTimeout(r, 50));
    const serverClosed = new Promise<void>((r) => server.close(() => r()));
    // The keep-alive timeout is 5 s: closing within 3 s means the connection ended after its answer.
    await Promise.race([
      Promise.all([closed, serverClosed]),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the connection stayed open after its answer')), 3000)),
    ]);
    assert.equal(body(text), 'raw /api/thing/slow');
  });
});
