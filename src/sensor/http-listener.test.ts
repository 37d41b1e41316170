import assert from 'node:assert/strict';
import { connect, type Server, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { type HttpListenerConfig, parseSensorConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured } from '../modules/sensor/sensor-records.ts';
import { HttpHoneypot } from './http-listener.ts';

const IDENTITY = { tunnel_id: 1, pool_id: 'p', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.1', server: 'unit' };

async function listener(t: TestContext, overrides: Record<string, unknown> = {}, keep = true) {
  const cfg = parseSensorConfig({
    identity: { proxy_ip: '198.51.100.1' },
    domains: ['unit.example'],
    listeners: [{ protocol: 'http', bind: '127.0.0.1', port: 0, public_port: 80, ...overrides }],
  }).listeners[0] as HttpListenerConfig;
  const records: Captured[] = [];
  const hp = new HttpHoneypot(cfg, {
    identity: IDENTITY,
    domains: new DecoyDomains(['unit.example']),
    sink: {
      capture: () => assert.fail('the HTTP listener appends encoded records'),
      // Read back as the server would; written before the answer, kept (or not) after.
      append: async (feed, json, kept) => {
        records.push({ feed, record: JSON.parse(json.toString()) as Record<string, unknown> });
        queueMicrotask(() => kept(keep));
        return true;
      },
    },
    now: Date.now,
    publicPort: () => 80,
  });
  const server: Server = hp.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    hp.destroyAll();
    server.close();
  });
  return { hp, records, port: (server.address() as { port: number }).port };
}

/** Sends bytes (ending the write side when `end`), and resolves with everything answered when the server closes. */
function exchange(port: number, bytes: Buffer | string, end = true): { done: Promise<string>; socket: Socket } {
  const socket = connect(port, '127.0.0.1');
  const done = new Promise<string>((resolve) => {
    let text = '';
    socket.setEncoding('latin1').on('data', (c: string) => (text += c));
    socket.on('close', () => resolve(text));
    socket.on('error', () => {});
  });
  socket.on('connect', () => (end ? socket.end(bytes) : socket.write(bytes)));
  return { done, socket };
}

const details = (c: Captured) => c.record.details as { method: string; uri: string; headers: Record<string, string> };

describe('the HTTP honeypot listener', () => {
  it('should answer pipelined keep-alive requests in order, one record each, and HEAD without a body', async (t) => {
    const { records, port } = await listener(t);
    const { done } = exchange(
      port,
      'GET /a HTTP/1.1\r\nHost: x.unit.example\r\n\r\nHEAD /b HTTP/1.1\r\nHost: unit.example\r\nConnection: close\r\n\r\n',
    );
    const answer = await done;
    assert.equal(answer.match(/HTTP\/1\.1 200 OK/g)?.length, 2);
    assert.equal(answer.match(/<!DOCTYPE html>/g)?.length, 1, 'HEAD is answered without the body');
    assert.deepEqual(
      records.map((r) => details(r).uri),
      ['/a', '/b'],
    );
    assert.equal(records[0]!.record.raw, 'GET /a HTTP/1.1\r\nHost: x.unit.example\r\n\r\n');
  });

  it('should record a 1 MB head up to max_head_bytes, answer 431 and close', async (t) => {
    const { records, port, hp } = await listener(t, { max_head_bytes: 4096 });
    const huge = `GET /${'A'.repeat(1_048_576)} HTTP/1.1\r\n\r\n`;
    const answer = await exchange(port, huge).done;
    assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.equal(records.length, 1);
    assert.equal((records[0]!.record.raw as string).length, 4096);
    assert.equal(hp.stats.malformed, 1, 'a head cut short counts as malformed');
  });

  it('should keep max_body_bytes of a longer body, then answer and close', async (t) => {
    const { records, port } = await listener(t, { max_body_bytes: 10 });
    const answer = await exchange(port, 'POST /u HTTP/1.1\r\nContent-Length: 100000\r\n\r\n0123456789abcdef', false).done;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /Connection: close/);
    assert.ok((records[0]!.record.raw as string).endsWith('\r\n\r\n0123456789'));
  });

  it('should record what an idle connection sent once it goes quiet, and answer 408', async (t) => {
    const { records, port, hp } = await listener(t, { idle_timeout_ms: 200 });
    const answer = await exchange(port, 'GET /slow HTTP/1.1\r\nHost: unit.exa', false).done;
    assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.equal(details(records[0]!).uri, '/slow');
    assert.equal(records[0]!.record.raw, 'GET /slow HTTP/1.1\r\nHost: unit.exa');
    assert.equal(hp.stats.malformed, 1);
  });

  it('should close connections past the per-source limit at once, without a record', async (t) => {
    const { records, port, hp } = await listener(t, { max_connections_per_source: 2, idle_timeout_ms: 5000 });
    const held = [exchange(port, 'GET / HTTP/1.1\r\n', false), exchange(port, 'GET / HTTP/1.1\r\n', false)];
    await new Promise((r) => setTimeout(r, 100));
    const third = await exchange(port, 'GET /third HTTP/1.1\r\n\r\n').done;
    assert.equal(third, '');
    assert.equal(hp.stats.refused, 1);
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.done));
    assert.ok(!records.some((r) => details(r).uri === '/third'));
  });

  it('should still answer when the spool cannot keep the record, counting it as dropped', async (t) => {
    const { port, hp } = await listener(t, {}, false);
    const answer = await exchange(port, 'GET / HTTP/1.0\r\n\r\n').done;
    assert.match(answer, /^HTTP\/1\.1 200 OK/);
    assert.deepEqual([hp.stats.records, hp.stats.dropped], [0, 1]);
  });
});
