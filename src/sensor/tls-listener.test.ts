import assert from 'node:assert/strict';
import { connect as netConnect, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { parseSensorConfig, type TlsListenerConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured } from '../modules/sensor/sensor-records.ts';
import { CertificateCache } from './certificates.ts';
import { TlsHoneypot } from './tls-listener.ts';

async function listener(t: TestContext, overrides: Record<string, unknown> = {}, hold?: (c: Captured) => Promise<void> | undefined) {
  const cfg = parseSensorConfig({
    identity: { proxy_ip: '198.51.100.1' },
    domains: ['unit.example'],
    listeners: [{ protocol: 'tls', bind: '127.0.0.1', port: 0, public_port: 443, ...overrides }],
  }).listeners[0] as TlsListenerConfig;
  const records: Captured[] = [];
  const hp = new TlsHoneypot(cfg, {
    identity: { tunnel_id: 1, pool_id: 'p', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.1', server: 'unit' },
    domains: new DecoyDomains(['unit.example']),
    sink: {
      capture: async (c) => {
        records.push(c);
        await hold?.(c);
        return true;
      },
      // The HTTP inside the connections: encoded records, read back as the server would.
      append: async (feed, json, kept) => {
        records.push({ feed, record: JSON.parse(json.toString()) as Record<string, unknown> });
        queueMicrotask(() => kept(true));
        return true;
      },
    },
    certificates: new CertificateCache(4),
    now: Date.now,
    publicPort: () => 443,
  });
  const server: Server = hp.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    hp.destroyAll();
    server.close();
  });
  return { hp, records, port: (server.address() as { port: number }).port };
}

/** Sends raw bytes, ends, and waits for the server to close. */
const sendRaw = (port: number, bytes: Buffer) =>
  new Promise<void>((resolve) => {
    const s = netConnect(port, '127.0.0.1', () => s.end(bytes));
    s.on('close', () => resolve());
    s.on('error', () => resolve());
    s.resume();
  });

/** A real ClientHello record, captured by a listener that closes after the hello. */
async function realHello(t: TestContext): Promise<Buffer> {
  const { records, port } = await listener(t, { after_hello: 'close' });
  await new Promise<void>((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername: 'a.unit.example', rejectUnauthorized: false });
    s.on('error', () => resolve());
    s.on('close', () => resolve());
  });
  assert.equal(records.length, 1);
  const r = records[0]!.record as { details: { sni: string; ja4: string }; raw: string };
  assert.equal(r.details.sni, 'a.unit.example');
  assert.match(r.details.ja4, /^t13d/);
  return Buffer.from(r.raw, 'base64');
}

describe('the TLS honeypot listener', () => {
  it('should record a ClientHello cut short with details null and the bytes that came', async (t) => {
    const hello = await realHello(t);
    const { records, port, hp } = await listener(t);
    await sendRaw(port, hello.subarray(0, 100));
    const r = records[0]!.record as { details: unknown; raw: string };
    assert.equal(r.details, null);
    assert.deepEqual(Buffer.from(r.raw, 'base64'), hello.subarray(0, 100));
    assert.equal(hp.stats.malformed, 1);
  });

  it('should cut a hello record longer than max_hello_bytes at the limit and close', async (t) => {
    const { records, port } = await listener(t, { max_hello_bytes: 1024 });
    const header = Buffer.from([0x16, 0x03, 0x01, 0xea, 0x60]);
    await sendRaw(port, Buffer.concat([header, Buffer.alloc(4000, 7)]));
    const r = records[0]!.record as { details: unknown; raw: string };
    assert.equal(r.details, null);
    assert.equal(Buffer.from(r.raw, 'base64').length, 1024);
  });

  it('should record a damaged hello of the right length as details null, never throwing', async (t) => {
    const hello = await realHello(t);
    const { records, port } = await listener(t);
    const damaged = Buffer.from(hello);
    damaged.fill(0xff, 9, 60);
    await sendRaw(port, damaged);
    assert.equal((records[0]!.record as { details: unknown }).details, null);
  });

  it('should complete the handshake while the hello is being recorded, and answer the request inside only once it is', async (t) => {
    let release!: () => void;
    const helloWritten = new Promise<void>((r) => (release = r));
    const { records, port } = await listener(t, {}, (c) => (c.feed === 'honeypot_https' ? helloWritten : undefined));
    const s = tlsConnect({ host: '127.0.0.1', port, servername: 'b.unit.example', rejectUnauthorized: false });
    t.after(() => s.destroy());
    let answer = '';
    s.setEncoding('latin1').on('data', (c: string) => (answer += c));
    const closed = new Promise<void>((r) => s.on('close', () => r()));
    await new Promise<void>((resolve, reject) => {
      s.once('secureConnect', () => resolve());
      s.once('error', reject);
    });
    s.write('GET /held HTTP/1.1\r\nHost: b.unit.example\r\nConnection: close\r\n\r\n');
    // The request is recorded (its own write is not held); its answer waits for the hello's.
    while (records.length < 2) await new Promise((r) => setImmediate(r));
    assert.equal(records[1]!.feed, 'honeypot_http');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(answer, '', 'no answer before the hello is written');
    release();
    await closed;
    assert.match(answer, /^HTTP\/1\.1 200 OK/);
  });
});
