import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { answerDnsQuery, type DnsAnswerOptions } from '../modules/sensor/dns-answer.ts';
import type { DnsListenerConfig } from '../modules/sensor/sensor-config.ts';
import { dnsRecord, type SensorIdentity } from '../modules/sensor/sensor-records.ts';
import { newListenerStats, type RecordSink } from './http-listener.ts';
import { ConnectionGate } from './connection-gate.ts';
import { type ListenerMemory, unlimitedMemory } from './memory-budget.ts';

/** A DNS message over TCP is at most 65,535 bytes after its 2-byte length. */
const MAX_TCP_MESSAGE = 65_535;
/** Sources whose buckets are remembered at most; the oldest are forgotten first (a spoofed flood has many). */
const MAX_TRACKED_SOURCES = 65_536;

/** Token buckets per source address, bounded in number, on an injected clock. */
export class SourceRateLimit {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(source: string): boolean {
    const t = this.now();
    let b = this.buckets.get(source);
    if (b) {
      b.tokens = Math.min(this.burst, b.tokens + ((t - b.atMs) / 1000) * this.ratePerSecond);
      b.atMs = t;
      // Most recently seen last, so eviction takes the longest quiet.
      this.buckets.delete(source);
    } else {
      b = { tokens: this.burst, atMs: t };
      if (this.buckets.size >= MAX_TRACKED_SOURCES) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(source, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}

export interface DnsListenerDeps {
  identity: SensorIdentity;
  domains: DecoyDomains;
  sink: RecordSink;
  now: () => number;
  /** The listener's share of the sensor's memory budget (TCP buffers, UDP queries being answered); unlimited when unset. */
  memory?: ListenerMemory;
}

/**
 * A DNS port over UDP and TCP: every query is answered (NXDOMAIN, or the decoy addresses for names
 * under a decoy domain) and recorded as honeypot_dns; ANY is refused; a UDP answer is never more than
 * `max_amplification` times its query; a source past its rate gets no answer and no record (a
 * spoofed flood must not fill the spool). Bytes that are not a DNS query are counted, not recorded
 * (the feed's records need a question).
 */
export class DnsHoneypot {
  readonly stats = { ...newListenerStats(), rateLimited: 0, truncated: 0, refused_any: 0 };
  private readonly limit: SourceRateLimit;
  private readonly gate: ConnectionGate;
  private readonly answer: DnsAnswerOptions;
  private readonly memory: ListenerMemory;

  constructor(
    private readonly cfg: DnsListenerConfig,
    private readonly deps: DnsListenerDeps,
  ) {
    this.limit = new SourceRateLimit(cfg.rate_per_source, cfg.burst_per_source, deps.now);
    this.memory = deps.memory ?? unlimitedMemory();
    this.gate = new ConnectionGate(cfg, this.stats, this.memory);
    this.answer = {
      mode: cfg.answer,
      ...(cfg.decoy_ipv4 ? { ipv4: cfg.decoy_ipv4 } : {}),
      ...(cfg.decoy_ipv6 ? { ipv6: cfg.decoy_ipv6 } : {}),
      ttl: cfg.ttl,
      maxFactor: cfg.max_amplification,
      isDecoy: (name) => deps.domains.zoneOf(name) !== undefined,
    };
  }

  private get port(): 53 | 853 | 5353 {
    return (this.cfg.public_port ?? this.cfg.port) as 53 | 853 | 5353;
  }

  /** Handles one query; resolves with the bytes to answer, or undefined for none. */
  private async query(bytes: Buffer, source: string, udp: boolean): Promise<Buffer | undefined> {
    const st = this.stats;
    st.bytesIn += bytes.length;
    if (!this.limit.take(source)) {
      st.rateLimited++;
      return undefined;
    }
    const out = answerDnsQuery(bytes, this.answer, udp);
    if (!out) {
      st.malformed++;
      return undefined;
    }
    if (out.truncated) st.truncated++;
    if (out.rcode === 'REFUSED') st.refused_any++;
    const d = this.deps;
    let kept = false;
    try {
      kept = await d.sink.capture(
        dnsRecord(d.identity, {
          timestampMs: d.now(),
          domain: d.domains.zoneOf(out.qname) ?? d.domains.domainOf(undefined),
          port: this.port,
          protocol: udp ? 'udp' : 'tcp',
          sourceIp: source,
          qname: out.qname,
          qtype: out.qtype,
        }),
      );
    } catch {
      kept = false;
    }
    if (kept) st.records++;
    else st.dropped++;
    return out.response;
  }

  /** Binds UDP and TCP on the same address and port (the TCP port decides when port is 0). */
  async listen(): Promise<{ port: number; tcp: Server; udp: UdpSocket }> {
    const tcp = createServer({ allowHalfOpen: true }, (s) => this.tcpConnection(s));
    const port = await new Promise<number>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ host: this.cfg.bind, port: this.cfg.port }, () => resolve((tcp.address() as { port: number }).port));
    });
    const udp = createSocket({ type: this.cfg.bind.includes(':') ? 'udp6' : 'udp4' });
    udp.on('message', (msg, rinfo) => {
      const source = rinfo.address.startsWith('::ffff:') && rinfo.address.includes('.') ? rinfo.address.slice(7) : rinfo.address;
      // A query waiting for its record holds its bytes: past the share, queries are dropped (shed).
      if (!this.memory.take(msg.length)) return;
      void (async () => {
        try {
          const answer = await this.query(msg, source, true);
          if (answer) udp.send(answer, rinfo.port, rinfo.address);
        } catch {
          // An answer that could not be built (or a socket closed under it) ends that query, not the listener.
          this.stats.malformed++;
        } finally {
          this.memory.give(msg.length);
        }
      })();
    });
    udp.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind({ address: this.cfg.bind, port }, () => resolve());
    });
    return { port, tcp, udp };
  }

  destroyAll(): void {
    this.gate.destroyAll();
  }

  private tcpConnection(socket: Socket): void {
    const source = this.gate.admit(socket);
    if (source === undefined) return;
    const st = this.stats;
    socket.setTimeout(this.cfg.idle_timeout_ms, () => socket.destroy());
    let buf: Buffer = Buffer.alloc(0);
    let busy = false;
    const drain = async () => {
      if (busy) return;
      busy = true;
      // Messages are answered one at a time, in order (RFC 7766 allows it; the simplest to bound).
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        const answer = await this.query(Buffer.from(msg), source, false);
        if (socket.destroyed) break;
        if (answer) {
          const framed = Buffer.allocUnsafe(2 + answer.length);
          framed.writeUInt16BE(answer.length, 0);
          answer.copy(framed, 2);
          socket.write(framed);
        }
      }
      busy = false;
      // The answered messages are no longer held; a copy lets their bytes go (a subarray keeps them).
      if (buf.length === 0) buf = Buffer.alloc(0);
      this.gate.hold(socket, buf.length);
      if (ended && !socket.destroyed) socket.end();
    };
    let ended = false;
    socket.on('data', (c: Buffer) => {
      // At most one whole message and a length are held: a client cannot make the buffer grow further.
      if (buf.length + c.length > MAX_TCP_MESSAGE + 2 + 65_536) {
        st.malformed++;
        socket.destroy();
        return;
      }
      buf = buf.length ? Buffer.concat([buf, c]) : c;
      if (!this.gate.hold(socket, buf.length)) return;
      // A message that breaks the handling (a bug an attacker found) ends its connection, never the sensor.
      drain().catch(() => socket.destroy());
    });
    socket.on('end', () => {
      ended = true;
      if (!busy) socket.end();
    });
  }
}
