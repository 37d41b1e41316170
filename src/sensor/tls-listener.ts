import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import type { TlsListenerConfig } from '../modules/sensor/sensor-config.ts';
import { httpsRecord, type SensorIdentity } from '../modules/sensor/sensor-records.ts';
import { parseClientHello } from '../modules/tls/client-hello-parser.ts';
import type { CertificateCache } from './certificates.ts';
import { HttpHoneypot, newListenerStats, type RecordSink } from './http-listener.ts';
import { ConnectionGate } from './connection-gate.ts';
import type { ListenerMemory } from './memory-budget.ts';

const TLS_HANDSHAKE = 0x16;
const RECORD_HEADER = 5;

export interface TlsListenerDeps {
  identity: SensorIdentity;
  domains: DecoyDomains;
  sink: RecordSink;
  certificates: CertificateCache;
  now: () => number;
  publicPort: () => number;
  /** The listener's share of the sensor's memory budget (hellos and the HTTP inside); unlimited when unset. */
  memory?: ListenerMemory;
}

/**
 * A TLS port: reads the first record, which a TLS client sends as its ClientHello, and records it as
 * honeypot_https (parsed with its JA4 by the project's own parser, raw bytes in base64). Bytes that
 * are not a TLS handshake give a record with details null. Then, as configured, it closes or
 * completes the handshake with a self-signed certificate and serves the HTTP inside with the HTTP
 * listener's reader (honeypot_http records with protocol https).
 */
export class TlsHoneypot {
  readonly stats = newListenerStats();
  /** The HTTP reader for the decrypted requests; its stats count the honeypot_http records. */
  readonly inner: HttpHoneypot;
  private readonly gate: ConnectionGate;

  constructor(
    private readonly cfg: TlsListenerConfig,
    private readonly deps: TlsListenerDeps,
  ) {
    this.gate = new ConnectionGate(cfg, this.stats, deps.memory);
    this.inner = new HttpHoneypot(cfg, { ...deps, protocol: 'https' });
  }

  createServer(): Server {
    return createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: false }, (socket) => this.handle(socket));
  }

  destroyAll(): void {
    this.gate.destroyAll();
    this.inner.destroyAll();
  }

  private handle(socket: Socket): void {
    const source = this.gate.admit(socket);
    if (source === undefined) return;
    const st = this.stats;
    const startMs = this.deps.now();
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (bytes: Buffer, complete: boolean) => {
      if (done) return;
      done = true;
      socket.removeListener('data', onData);
      socket.setTimeout(0);
      socket.pause();
      void this.recordHello(socket, source, startMs, bytes, complete);
    };
    const onData = (c: Buffer) => {
      st.bytesIn += c.length;
      chunks.push(c);
      size += c.length;
      if (!this.gate.hold(socket, size)) return;
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      if (buf[0] !== TLS_HANDSHAKE) {
        // Not TLS: keep what comes until the limit or the client goes quiet, then record it.
        if (size >= this.cfg.max_hello_bytes) finish(buf.subarray(0, this.cfg.max_hello_bytes), false);
        return;
      }
      if (size < RECORD_HEADER) return;
      const need = RECORD_HEADER + buf.readUInt16BE(3);
      if (need > this.cfg.max_hello_bytes) finish(buf.subarray(0, this.cfg.max_hello_bytes), false);
      else if (size >= need) finish(buf, true);
    };
    socket.on('data', onData);
    socket.setTimeout(this.cfg.idle_timeout_ms, () => {
      if (size === 0) socket.destroy();
      else finish(Buffer.concat(chunks, size), false);
    });
    socket.on('end', () => {
      if (size === 0) socket.destroy();
      else finish(Buffer.concat(chunks, size), false);
    });
  }

  private async recordHello(socket: Socket, source: string, startMs: number, bytes: Buffer, complete: boolean): Promise<void> {
    const d = this.deps;
    const helloEnd = complete ? RECORD_HEADER + bytes.readUInt16BE(3) : bytes.length;
    const hello = bytes.subarray(0, helloEnd);
    const details = complete ? parseClientHello(hello) : null;
    if (!details) this.stats.malformed++;
    const sni = details?.sni ?? undefined;
    // The hello's record is written while the handshake goes on: the handshake is no answer to it, and
    // waiting for the spool's sync before the ServerHello made every connection wait for two syncs one
    // after the other (the hello's, then the request's). What answers the client is the HTTP answer
    // inside, which waits for this record too (handleInner's `before`), and the close in close mode.
    const recorded = this.captureHello(source, startMs, sni, details, hello);
    if (socket.destroyed) return;
    if (!details || this.cfg.after_hello === 'close') {
      await recorded;
      socket.destroy();
      return;
    }
    let context: import('node:tls').SecureContext;
    try {
      context = await d.certificates.contextFor(d.domains.certificateName(sni));
    } catch {
      socket.destroy();
      return;
    }
    if (socket.destroyed) return;
    // The hello was read off the socket: put back, it is the first thing the TLS engine reads (node's
    // TLSSocket hands a wrapped socket's buffered bytes to the engine before it reads the handle).
    // The engine then works on the TCP handle itself: a JS stream in between (a Duplex replaying the
    // hello) made every handshake write and read cross into JS, a quarter of the sensor's time.
    socket.unshift(bytes);
    const tls = new TLSSocket(socket, { isServer: true, secureContext: context, ALPNProtocols: ['http/1.1'] });
    tls.on('error', () => socket.destroy());
    tls.once('close', () => socket.destroy());
    tls.setTimeout(this.cfg.idle_timeout_ms, () => socket.destroy());
    tls.once('secure', () => {
      tls.setTimeout(0);
      // The hello went to the TLS engine; the HTTP reader holds what comes next under the same share.
      this.gate.hold(socket, 0);
      this.inner.handleInner(tls, source, recorded);
    });
  }

  /** Captures the hello; settles (never rejects) once the sink kept or dropped it. */
  private async captureHello(
    source: string,
    startMs: number,
    sni: string | undefined,
    details: ReturnType<typeof parseClientHello>,
    hello: Buffer,
  ): Promise<void> {
    const d = this.deps;
    let kept = false;
    try {
      kept = await d.sink.capture(
        httpsRecord(d.identity, {
          timestampMs: startMs,
          domain: d.domains.domainOf(sni),
          port: d.publicPort(),
          sourceIp: source,
          details,
          raw: hello,
        }),
      );
    } catch {
      kept = false;
    }
    if (kept) this.stats.records++;
    else this.stats.dropped++;
  }
}
