import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { answerDnsQuery, type DnsAnswerOptions } from '../modules/sensor/dns-answer.ts';
import type { DnsListenerConfig } from '../modules/sensor/sensor-config.ts';
import { DnsRecordEncoder, type SensorIdentity } from '../modules/sensor/sensor-records.ts';
import { CertificateCache } from './certificates.ts';
import { newListenerStats, type RecordSink } from './http-listener.ts';
import { ConnectionGate } from './connection-gate.ts';
import { type ListenerMemory, unlimitedMemory } from './memory-budget.ts';

/** A DNS message over TCP is at most 65,535 bytes after its 2-byte length. */
const MAX_TCP_MESSAGE = 65_535;
/** Messages of one TCP connection being answered at once, at most. */
const MAX_PIPELINED = 64;
/** Answer bytes a TCP connection may leave unread before its next messages wait. */
const MAX_UNSENT = 65_536;
/** Sources whose buckets are remembered at most; the oldest are forgotten first (a spoofed flood has many). */
const MAX_TRACKED_SOURCES = 65_536;

/** Token buckets per source address, bounded in number, on an injected clock. */
export class SourceRateLimit {
  private readonly buckets = new Map<string, { tokens: number; atMs: number; movedMs: number }>();

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
      // Most recently seen last, so eviction takes the longest quiet; moved at most once a second (a
      // delete and set per query of a busy source was a few percent of the listener's time).
      if (t - b.movedMs >= 1000) {
        this.buckets.delete(source);
        this.buckets.set(source, b);
        b.movedMs = t;
      }
      b.atMs = t;
    } else {
      b = { tokens: this.burst, atMs: t, movedMs: t };
      if (this.buckets.size >= MAX_TRACKED_SOURCES) this.buckets.delete(this.buckets.keys().next().value!);
      this.buckets.set(source, b);
    }
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
  /** The self-signed certificates of DNS over TLS (`tls: true`); made on first use when absent. */
  certificates?: CertificateCache;
  /** The listener's share of the sensor's memory budget (TCP buffers, UDP queries being answered); unlimited when unset. */
  memory?: ListenerMemory;
}

/**
 * A DNS port over UDP and TCP, or over TLS (RFC 7858, `tls: true`: TCP only, the handshake done with
 * the sensor's self-signed certificates, then the same length-prefixed messages): every query is answered (NXDOMAIN, or the decoy addresses for names
 * under a decoy domain) and recorded as honeypot_dns; ANY is refused; a UDP answer is never more than
 * `max_amplification` times its query; a source past its rate gets no answer and no record (a
 * spoofed flood must not fill the spool). Bytes that are not a DNS query are counted, not recorded
 * (the feed's records need a question).
 */
export class DnsHoneypot {
  readonly stats = { ...newListenerStats(), rateLimited: 0, truncated: 0, refused_any: 0, tls_failed: 0 };
  private readonly limit: SourceRateLimit;
  private readonly gate: ConnectionGate;
  private readonly answer: DnsAnswerOptions;
  private readonly certificates: CertificateCache;
  /** The certificate of connections that name no decoy (or nothing) in their SNI, made before binding. */
  private defaultContext: SecureContext | undefined;
  private readonly memory: ListenerMemory;
  private readonly encoder: DnsRecordEncoder;
  /** Counts a record once the spool kept (fsynced) or dropped it. */
  private readonly kept = (ok: boolean): void => {
    if (ok) this.stats.records++;
    else this.stats.dropped++;
  };

  constructor(
    private readonly cfg: DnsListenerConfig,
    private readonly deps: DnsListenerDeps,
  ) {
    this.limit = new SourceRateLimit(cfg.rate_per_source, cfg.burst_per_source, deps.now);
    this.memory = deps.memory ?? unlimitedMemory();
    this.encoder = new DnsRecordEncoder(deps.identity);
    this.gate = new ConnectionGate(cfg, this.stats, this.memory);
    this.answer = {
      mode: cfg.answer,
      ...(cfg.decoy_ipv4 ? { ipv4: cfg.decoy_ipv4 } : {}),
      ...(cfg.decoy_ipv6 ? { ipv6: cfg.decoy_ipv6 } : {}),
      ttl: cfg.ttl,
      maxFactor: cfg.max_amplification,
      isDecoy: (name) => deps.domains.zoneOf(name) !== undefined,
    };
    this.certificates = deps.certificates ?? new CertificateCache(1024, deps.now);
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
    // The answer waits for the record's write into the spool file, not for its fsync (as HTTP's: a
    // kill -9 of the sensor then loses no answered query); it counts once fsynced (kept).
    await d.sink.append(
      'honeypot_dns',
      this.encoder.encode({
        timestampMs: d.now(),
        domain: d.domains.zoneOf(out.qname) ?? d.domains.domainOf(undefined),
        port: this.port,
        protocol: udp ? 'udp' : 'tcp',
        sourceIp: source,
        qname: out.qname,
        qtype: out.qtype,
      }),
      this.kept,
    );
    return out.response;
  }

  /**
   * Binds UDP and TCP on the same address and port (the TCP port decides when port is 0); with `tls`,
   * TCP alone (DNS over TLS has no UDP form here: DTLS is not served).
   */
  async listen(): Promise<{ port: number; tcp: Server; udp: UdpSocket | undefined }> {
    if (this.cfg.tls) this.defaultContext = await this.certificates.contextFor(this.deps.domains.certificateName(undefined));
    const tcp = createServer({ allowHalfOpen: true, noDelay: true }, (s) => this.tcpConnection(s));
    const port = await new Promise<number>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ host: this.cfg.bind, port: this.cfg.port }, () => resolve((tcp.address() as { port: number }).port));
    });
    if (this.cfg.tls) return { port, tcp, udp: undefined };
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
    // The idle timeout is on the TCP socket, so it also ends a client stalling in the TLS handshake.
    socket.setTimeout(this.cfg.idle_timeout_ms, () => socket.destroy());
    if (!this.cfg.tls) {
      this.messages(socket, socket, source);
      return;
    }
    const tls = new TLSSocket(socket, {
      isServer: true,
      secureContext: this.defaultContext!,
      // A name under a decoy domain gets a certificate of its own; any other the first decoy's.
      SNICallback: (servername, cb) => {
        this.certificates.contextFor(this.deps.domains.certificateName(servername)).then(
          (ctx) => cb(null, ctx),
          (e: Error) => cb(e),
        );
      },
    });
    let secure = false;
    tls.once('secure', () => {
      secure = true;
    });
    // Bytes that are not TLS (or a failed handshake) end that connection only, counted, not recorded:
    // the feed's records need a question, and there is none before the handshake.
    tls.on('error', () => {
      if (!secure) this.stats.tls_failed++;
      socket.destroy();
    });
    tls.once('close', () => socket.destroy());
    this.messages(tls, socket, source);
  }

  /**
   * DNS over TCP framing (a 2-byte length before each message) on `stream`, over the TCP `socket`.
   * Pipelined messages are answered concurrently (their records share the spool's fsyncs; one at a
   * time, a connection waited a whole fsync per query) and written in the order they came (RFC 7766
   * allows either). Bounded per connection: at most MAX_PIPELINED messages and one message's bytes in
   * flight, one message and a length unread, and no new message taken while MAX_UNSENT bytes of
   * answers wait for a client that does not read them.
   */
  private messages(stream: Socket, socket: Socket, source: string): void {
    const st = this.stats;
    let buf: Buffer = Buffer.alloc(0);
    let inFlight = 0;
    let inFlightBytes = 0;
    let ended = false;
    // Each answer is written after the one before it.
    let previous: Promise<unknown> = Promise.resolve();
    const complete = () => buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0);
    const endIfDone = () => {
      if (ended && inFlight === 0 && !complete() && !stream.destroyed) stream.end();
    };
    const take = () => {
      while (complete()) {
        const len = buf.readUInt16BE(0);
        if (inFlight > 0 && (inFlight >= MAX_PIPELINED || inFlightBytes + len > MAX_TCP_MESSAGE)) return;
        if (stream.writableLength > MAX_UNSENT) return;
        const msg = Buffer.from(buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
        inFlight++;
        inFlightBytes += len;
        const answer = this.query(msg, source, false).catch(() => undefined);
        previous = Promise.all([answer, previous]).then(([a]) => {
          inFlight--;
          inFlightBytes -= len;
          if (socket.destroyed || stream.destroyed) return;
          // The answered messages are no longer held; a copy lets their bytes go (a subarray keeps them).
          if (buf.length === 0) buf = Buffer.alloc(0);
          this.gate.hold(socket, buf.length + inFlightBytes);
          if (a) {
            const framed = Buffer.allocUnsafe(2 + a.length);
            framed.writeUInt16BE(a.length, 0);
            a.copy(framed, 2);
            stream.write(framed);
          }
          take();
          endIfDone();
        });
      }
    };
    stream.on('drain', () => {
      take();
      endIfDone();
    });
    stream.on('data', (c: Buffer) => {
      // TLS may still hand over bytes it decrypted before the connection was closed.
      if (socket.destroyed) return;
      // At most one whole message and a length are held: a client cannot make the buffer grow further.
      if (buf.length + c.length > MAX_TCP_MESSAGE + 2 + 65_536) {
        st.malformed++;
        socket.destroy();
        return;
      }
      buf = buf.length ? Buffer.concat([buf, c]) : c;
      // The connection holds its unread bytes and the messages being answered (the listener's memory share).
      if (!this.gate.hold(socket, buf.length + inFlightBytes)) return;
      take();
    });
    stream.on('end', () => {
      ended = true;
      endIfDone();
    });
  }
}
