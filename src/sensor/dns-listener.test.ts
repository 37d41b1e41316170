import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import * as dnsPacket from 'dns-packet';
import { ManualClock } from '../lib/clock.ts';
import { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { type DnsListenerConfig, parseSensorConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured } from '../modules/sensor/sensor-records.ts';
import { CertificateCache } from './certificates.ts';
import { DnsHoneypot, SourceRateLimit } from './dns-listener.ts';

describe('the DNS per-source rate limit', () => {
  it('should allow the burst, then the rate, per source, on the injected clock', () => {
    const clock = new ManualClock();
    const limit = new SourceRateLimit(10, 20, () => clock.now());
    const taken = (src: string, n: number) => Array.from({ length: n }, () => limit.take(src)).filter(Boolean).length;
    assert.equal(taken('203.0.113.1', 50), 20, 'the burst');
    assert.equal(taken('203.0.113.2', 5), 5, 'another source has its own bucket');
    clock.advance(500);
    assert.equal(taken('203.0.113.1', 50), 5, 'half a second at 10/s');
    clock.advance(60_000);
    assert.equal(taken('203.0.113.1', 50), 20, 'never more than the burst');
  });
});

const DOMAIN = 'unit-dot.example';

async function dotListener(t: TestContext, overrides: Record<string, unknown> = {}, hold?: (c: Captured) => Promise<void> | undefined) {
  const cfg = parseSensorConfig({
    identity: { proxy_ip: '198.51.100.1' },
    domains: [DOMAIN],
    listeners: [
      {
        protocol: 'dns',
        tls: true,
        bind: '127.0.0.1',
        port: 0,
        public_port: 853,
        answer: 'decoy',
        decoy_ipv4: '198.51.100.85',
        ...overrides,
      },
    ],
  }).listeners[0] as DnsListenerConfig;
  const records: Captured[] = [];
  const hp = new DnsHoneypot(cfg, {
    identity: { tunnel_id: 1, pool_id: 'p', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.1', server: 'unit' },
    domains: new DecoyDomains([DOMAIN]),
    sink: {
      capture: () => assert.fail('the DNS listener appends encoded records'),
      append: async (feed, json, kept) => {
        const c = { feed, record: JSON.parse(json.toString()) } as Captured;
        records.push(c);
        // A spool that does not write yet (a slow disk): the listener waits before answering.
        await hold?.(c);
        queueMicrotask(() => kept(true));
        return true;
      },
    },
    certificates: new CertificateCache(4),
    now: Date.now,
  });
  const { port, tcp, udp } = await hp.listen();
  t.after(() => {
    hp.destroyAll();
    tcp.close();
  });
  return { hp, records, port, udp };
}

const framed = (name: string, type: string, id = 77) => {
  const q = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: type as 'A', name }] });
  const out = Buffer.alloc(2 + q.length);
  out.writeUInt16BE(q.length, 0);
  q.copy(out, 2);
  return out;
};

/** The framed answers on `s` until `n` arrived (or the connection closed). */
function answers(s: Socket | TLSSocket, n: number): Promise<dnsPacket.DecodedPacket[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const got: dnsPacket.DecodedPacket[] = [];
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        got.push(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (got.length >= n) resolve(got);
    });
    s.once('close', () => resolve(got));
    s.once('error', reject);
  });
}

/** dns-packet decodes the rcode but its types do not declare it. */
const rcode = (p: dnsPacket.DecodedPacket | undefined) => (p as { rcode?: string } | undefined)?.rcode;

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

describe('DNS over TLS', () => {
  it('should answer framed queries inside TLS with a certificate for the SNI, and record them with port 853 over tcp', async (t) => {
    const { port, records, udp, hp } = await dotListener(t);
    assert.equal(udp, undefined, 'no UDP socket for DNS over TLS');
    const s = tlsConnect({ host: '127.0.0.1', port, servername: `ns1.${DOMAIN}`, rejectUnauthorized: false });
    t.after(() => s.destroy());
    await new Promise<void>((r) => s.once('secureConnect', () => r()));
    assert.equal(String(s.getPeerCertificate().subject.CN), `ns1.${DOMAIN}`, 'a certificate for the SNI under the decoy domain');
    // Two messages in one write, and a third split across writes: framing as over plain TCP.
    const third = framed('elsewhere.example.org', 'A', 3);
    s.write(Buffer.concat([framed(`www.${DOMAIN}`, 'A', 1), framed(DOMAIN, 'ANY', 2), third.subarray(0, 5)]));
    const got = answers(s, 3);
    setTimeout(() => s.write(third.subarray(5)), 20);
    const [a, any, nx] = await got;
    assert.deepEqual([a!.id, rcode(a), (a!.answers![0] as { data: string }).data], [1, 'NOERROR', '198.51.100.85']);
    assert.deepEqual([any!.id, rcode(any)], [2, 'REFUSED']);
    assert.deepEqual([nx!.id, rcode(nx)], [3, 'NXDOMAIN']);
    assert.deepEqual(
      records.map((r) => [r.record.qname, r.record.qtype, r.record.port, r.record.protocol]),
      [
        [`www.${DOMAIN}`, 'A', 853, 'tcp'],
        [DOMAIN, 'ANY', 853, 'tcp'],
        ['elsewhere.example.org', 'A', 853, 'tcp'],
      ],
    );
    assert.equal(hp.stats.tls_failed, 0);
  });

  it('should write pipelined answers in the order of their queries when their records are kept out of order', async (t) => {
    // The first query's record takes longest to be kept; the answers must still come 1, 2, 3.
    const delays: Record<string, number> = { [`slow.${DOMAIN}`]: 80, [`mid.${DOMAIN}`]: 30 };
    const { port, records } = await dotListener(t, {}, (c) => new Promise((r) => setTimeout(r, delays[String(c.record.qname)] ?? 0)));
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    t.after(() => s.destroy());
    s.write(Buffer.concat([framed(`slow.${DOMAIN}`, 'A', 1), framed(`mid.${DOMAIN}`, 'A', 2), framed(`fast.${DOMAIN}`, 'A', 3)]));
    const got = await answers(s, 3);
    assert.deepEqual(
      got.map((a) => a.id),
      [1, 2, 3],
    );
    assert.equal(records.length, 3);
  });

  it('should close a connection whose bytes are not TLS (plain DNS, HTTP, garbage), count it, record nothing, and keep serving', async (t) => {
    const { port, records, hp } = await dotListener(t);
    for (const bytes of [framed(`www.${DOMAIN}`, 'A'), Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), Buffer.alloc(70_000, 0xff)]) {
      const s = netConnect(port, '127.0.0.1');
      s.on('error', () => {});
      s.write(bytes);
      await closed(s);
    }
    assert.equal(hp.stats.tls_failed, 3);
    assert.equal(records.length, 0);
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    t.after(() => s.destroy());
    s.write(framed(`api.${DOMAIN}`, 'A', 9));
    const [a] = await answers(s, 1);
    assert.equal(a!.id, 9);
    // No SNI: the first decoy domain's certificate.
    assert.equal(String(s.getPeerCertificate().subject.CN), DOMAIN);
    assert.equal(records.length, 1);
  });

  it('should keep the TCP limits: connections per source, the idle timeout, one message held at most', async (t) => {
    const { port, hp } = await dotListener(t, { max_connections_per_source: 2, idle_timeout_ms: 300 });
    const open = [0, 1].map(() => tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }));
    for (const s of open) t.after(() => s.destroy());
    await Promise.all(open.map((s) => new Promise<void>((r) => s.once('secureConnect', () => r()))));
    const third = netConnect(port, '127.0.0.1');
    third.on('error', () => {});
    await closed(third);
    assert.equal(hp.stats.refused, 1, 'the third connection from one source is refused');
    // A connection that keeps asking stays open past the idle timeout: it is idle time, not age.
    const busy = tlsConnect({ host: '127.0.0.1', port: (await dotListener(t, { idle_timeout_ms: 300 })).port, rejectUnauthorized: false });
    t.after(() => busy.destroy());
    const busyAnswers = answers(busy, 6);
    for (let i = 0; i < 6; i++) {
      busy.write(framed(`busy.${DOMAIN}`, 'A', i));
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await busyAnswers).length, 6);
    assert.equal(busy.destroyed, false, 'closed while busy');
    // The two open ones sent nothing since the handshake: both are closed by the idle timeout.
    await Promise.all(open.map((s) => closed(s)));
    for (let i = 0; hp.stats.open > 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(hp.stats.open, 0);
  });

  it('should answer at most 64 pipelined messages at once and hold one message and a length unread: a client pipelining past it while answers wait is closed', async (t) => {
    let release = () => {};
    const { port, hp, records } = await dotListener(
      t,
      { rate_per_source: 1_000_000, burst_per_source: 1_000_000 },
      (() => {
        const held = new Promise<void>((r) => (release = r));
        return () => held;
      })(),
    );
    t.after(() => release());
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    s.on('error', () => {});
    await new Promise<void>((r) => s.once('secureConnect', () => r()));
    // About 4,000 queries at once; the first 64 wait on the spool, the rest pile up unread.
    const many = Buffer.concat(Array.from({ length: 4000 }, (_, i) => framed(`q${i}.${DOMAIN}`, 'A', i)));
    assert.ok(many.length > 2 * 65_537);
    s.write(many);
    await closed(s);
    assert.equal(hp.stats.malformed, 1);
    assert.equal(records.length, 64, 'the first 64 queries were taken before the connection was closed');
  });
});
