import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect, type Server, type Socket } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { describe, it, type TestContext } from 'node:test';
import { A_CNXN, A_OPEN, A_VERSION, encodeAdb } from '../modules/sensor/adb-protocol.ts';
import { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { type ListenerConfig, parseSensorConfig } from '../modules/sensor/sensor-config.ts';
import { AdbHoneypot } from './adb-listener.ts';
import { CertificateCache } from './certificates.ts';
import { DnsHoneypot } from './dns-listener.ts';
import { HttpHoneypot, type RecordSink } from './http-listener.ts';
import { ListenerMemory } from './memory-budget.ts';
import { TlsHoneypot } from './tls-listener.ts';

const IDENTITY = { tunnel_id: 1, pool_id: 'p', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.1', server: 'unit' };
const KiB = 1024;

describe('the memory budget', () => {
  it('should reserve up to its size, count what it refuses as shed, and release a connection whole once', () => {
    const m = new ListenerMemory(1000);
    const a = m.hold();
    const b = m.hold();
    assert.equal(a.set(600), true);
    assert.equal(b.set(500), false, 'past the share');
    assert.equal(m.shed, 1);
    assert.equal(b.size, 0, 'a refused set changes nothing');
    assert.equal(b.set(400), true);
    assert.equal(m.used, 1000);
    assert.equal(m.full, true);
    assert.equal(a.set(100), true, 'shrinking always succeeds');
    assert.equal(m.used, 500);
    a.release();
    a.release();
    assert.equal(m.used, 400, 'a second release gives nothing twice');
    assert.equal(a.set(50), false, 'a late set of a closed connection reserves nothing');
    assert.equal(m.used, 400);
    b.release();
    assert.equal(m.used, 0);
    assert.throws(() => m.give(1), /more than it reserved/);
  });
});

function config(protocol: string, extra: Record<string, unknown> = {}): ListenerConfig {
  return parseSensorConfig({
    identity: { proxy_ip: '198.51.100.1' },
    domains: ['unit.example'],
    listeners: [{ protocol, bind: '127.0.0.1', port: 0, public_port: protocol === 'dns' ? 53 : 80, ...extra }],
  }).listeners[0]!;
}

/** A sink that holds each record until `release()` (a spool write in progress). */
function slowSink() {
  const waiting: Array<() => void> = [];
  let records = 0;
  const sink: RecordSink = {
    capture: () =>
      new Promise<boolean>((resolve) => {
        records++;
        waiting.push(() => resolve(true));
      }),
    append: (_feed, _json, kept) =>
      new Promise<boolean>((resolve) => {
        records++;
        waiting.push(() => {
          resolve(true);
          kept(true);
        });
      }),
  };
  return {
    sink,
    release: () => {
      for (const r of waiting.splice(0)) r();
    },
    count: () => records,
  };
}

const quickSink: RecordSink = {
  capture: async () => true,
  append: async (_feed, _json, kept) => {
    queueMicrotask(() => kept(true));
    return true;
  },
};

async function serve(t: TestContext, hp: { createServer(): Server; destroyAll(): void }): Promise<number> {
  const server = hp.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    hp.destroyAll();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

/** A connection that wrote `bytes` and stays open; `closed` resolves when the listener closes it. */
async function open(port: number, bytes: Buffer): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.resume();
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  await new Promise<void>((r) => socket.write(bytes, () => r()));
  return { socket, closed };
}

const until = async (what: string, check: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the listeners under a memory share', () => {
  it('HTTP: holds each partial head, sheds a connection past the share and refuses new ones while full, releases on close, reset and idle timeout', async (t) => {
    const memory = new ListenerMemory(100 * KiB);
    const hp = new HttpHoneypot(config('http', { idle_timeout_ms: 300 }) as never, {
      identity: IDENTITY,
      domains: new DecoyDomains(['unit.example']),
      sink: quickSink,
      now: Date.now,
      publicPort: () => 80,
      memory,
    });
    const port = await serve(t, hp);
    const partial = (n: number) => Buffer.concat([Buffer.from('GET / HTTP/1.1\r\nX: '), Buffer.alloc(n - 19, 0x61)]);
    const a = await open(port, partial(40 * KiB));
    const b = await open(port, partial(40 * KiB));
    await until('80 KiB held', () => memory.used === 80 * KiB);
    // A third connection's 40 KiB would pass the 100 KiB share: it is shed, the others stay.
    const c = await open(port, partial(40 * KiB));
    await c.closed;
    assert.equal(memory.shed, 1);
    assert.equal(memory.used, 80 * KiB);
    const d = await open(port, partial(20 * KiB));
    await until('100 KiB held', () => memory.used === 100 * KiB);
    // Full: a new connection is closed before it is read.
    const e = await open(port, Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    await e.closed;
    assert.equal(memory.shed, 2);
    a.socket.destroy(); // the client closes
    await until('a released', () => memory.used === 60 * KiB);
    b.socket.resetAndDestroy(); // the client resets
    await until('b released', () => memory.used === 20 * KiB);
    await d.closed; // the listener's idle timeout
    await until('d released', () => memory.used === 0);
    // A whole request holds nothing once answered, on a connection kept alive.
    const f = await open(port, Buffer.from('GET / HTTP/1.1\r\nHost: unit.example\r\n\r\n'));
    await until('f answered', () => hp.stats.records === 3);
    assert.equal(memory.used, 0);
    f.socket.destroy();
  });

  it('TLS: holds a ClientHello being read and releases it on close', async (t) => {
    const memory = new ListenerMemory(64 * KiB);
    const hp = new TlsHoneypot(config('tls') as never, {
      identity: IDENTITY,
      domains: new DecoyDomains(['unit.example']),
      sink: quickSink,
      certificates: new CertificateCache(2),
      now: Date.now,
      publicPort: () => 443,
      memory,
    });
    const port = await serve(t, hp);
    const a = await open(port, Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x3f, 0xff]), Buffer.alloc(5000, 1)]));
    await until('5005 bytes held', () => memory.used === 5005);
    a.socket.destroy();
    await until('released', () => memory.used === 0);
  });

  it('DNS: holds a TCP message being read and a UDP query waiting for its record; sheds UDP queries past the share', async (t) => {
    const memory = new ListenerMemory(100);
    const slow = slowSink();
    const hp = new DnsHoneypot(config('dns', { rate_per_source: 1000, burst_per_source: 1000 }) as never, {
      identity: IDENTITY,
      domains: new DecoyDomains(['unit.example']),
      sink: slow.sink,
      now: Date.now,
      memory,
    });
    const { port, tcp, udp } = await hp.listen();
    t.after(() => {
      hp.destroyAll();
      tcp.close();
      udp?.close();
    });
    const a = await open(port, Buffer.from([0x00, 0x40, 1, 2, 3]));
    await until('5 bytes held', () => memory.used === 5);
    a.socket.destroy();
    await until('released', () => memory.used === 0);
    // A query is 32 bytes: three wait for their records (96 bytes), the fourth is shed.
    const query = dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'A', name: 'a.unit.example' }] });
    assert.equal(query.length, 32);
    const client = createSocket('udp4');
    t.after(() => client.close());
    for (let i = 0; i < 4; i++) await new Promise<void>((r) => client.send(query, port, '127.0.0.1', () => r()));
    await until('three queries waiting', () => slow.count() === 3 && memory.shed === 1);
    assert.equal(memory.used, 3 * query.length);
    slow.release();
    await until('released', () => memory.used === 0);
  });

  it('ADB: holds a message being read and each open stream, and releases them on close', async (t) => {
    const memory = new ListenerMemory(1024 * KiB);
    const hp = new AdbHoneypot(config('adb') as never, { sink: quickSink, now: Date.now, memory });
    const port = await serve(t, hp);
    const cnxn = encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0'));
    const streams = Array.from({ length: 10 }, (_, i) => encodeAdb(A_OPEN, i + 1, 0, Buffer.from('shell:\0')));
    const partial = encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.alloc(1000)).subarray(0, 524);
    const a = await open(port, Buffer.concat([cnxn, ...streams, partial]));
    // 10 streams of 256 bytes each, and the 524 bytes of the message not yet whole.
    await until('streams and the partial message held', () => memory.used === 10 * 256 + 524);
    a.socket.destroy();
    await until('released', () => memory.used === 0);
  });
});
