import { STATUS_CODES } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { headEnd, parseHttpHead, type HttpHead } from '../modules/sensor/http-head.ts';
import type { HttpHandling } from '../modules/sensor/sensor-config.ts';
import { HttpRecordEncoder, type Captured, type SensorIdentity } from '../modules/sensor/sensor-records.ts';
import { ConnectionGate } from './connection-gate.ts';
import type { ListenerMemory } from './memory-budget.ts';

/** Where listeners hand their records; resolves true once a record is kept (durable), false when dropped. */
export interface RecordSink {
  capture(c: Captured): Promise<boolean>;
  /**
   * A record already encoded as its JSON text. Resolves true once the record is in the spool file (a
   * crash of the sensor process no longer loses it), false when it was dropped; never rejects. `kept`
   * is told once it is fsynced and counts as spooled (true), or dropped (false).
   */
  append(feed: Captured['feed'], json: Buffer, kept: (ok: boolean) => void): Promise<boolean>;
}

/** One listener's counters, for /health and /metrics. */
export interface ListenerStats {
  connections: number;
  open: number;
  /** Connections closed at once: over the listener's or the source's limit. */
  refused: number;
  records: number;
  /** Records of requests that did not parse whole (cut short, timed out, oversized, not HTTP). */
  malformed: number;
  /** Records the spool could not keep (full, or a write failed). */
  dropped: number;
  bytesIn: number;
}

export const newListenerStats = (): ListenerStats => ({
  connections: 0,
  open: 0,
  refused: 0,
  records: 0,
  malformed: 0,
  dropped: 0,
  bytesIn: 0,
});

export interface HttpListenerDeps {
  identity: SensorIdentity;
  domains: DecoyDomains;
  sink: RecordSink;
  now: () => number;
  /** The port records carry (the public one), known once the listener is bound. */
  publicPort: () => number;
  protocol?: 'http' | 'https';
  /** The listener's share of the sensor's memory budget (a TLS listener passes its own); unlimited when unset. */
  memory?: ListenerMemory;
}

/**
 * Reads HTTP/1.x requests on raw connections, answers each with the configured decoy and records it
 * as honeypot_http. It never acts on a request: no path is looked up, nothing is fetched or run. A
 * request's record is written to the spool file before its answer is sent, so an attacker who got an
 * answer was recorded, even if the sensor is killed next; the answer does not wait for the fsync,
 * which counts the record as spooled (see spool.ts). The reader is its own (http-head.ts) so that malformed requests are kept as far as
 * they parse instead of being dropped by a strict parser.
 */
export class HttpHoneypot {
  readonly stats = newListenerStats();
  private readonly gate: ConnectionGate;
  private readonly shared: Shared;

  constructor(cfg: HttpHandling, deps: HttpListenerDeps) {
    this.gate = new ConnectionGate(cfg, this.stats, deps.memory);
    const st = this.stats;
    this.shared = {
      cfg,
      deps,
      st,
      gate: this.gate,
      encoder: new HttpRecordEncoder(deps.identity),
      answers: new DecoyAnswers(cfg, deps.now),
      kept: (ok) => {
        if (ok) st.records++;
        else st.dropped++;
      },
    };
  }

  /** A net server for this listener (the TLS listener hands its decrypted sockets to handle()). */
  createServer(): Server {
    // Half-open: a client that sends its request and then shuts its side still gets its answer.
    return createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.handle(socket));
  }

  /** Closes every open connection (shutdown). */
  destroyAll(): void {
    this.gate.destroyAll();
  }

  handle(socket: Socket): void {
    const source = this.gate.admit(socket);
    if (source !== undefined) new HttpConnection(socket, source, this.shared).start();
  }

  /**
   * Serves the HTTP inside a TLS connection: the TLS listener applied the connection limits and
   * knows the source (and counted the connection once). No answer is sent
   * before `before` (the ClientHello's record being written) has settled.
   */
  handleInner(socket: Socket, source: string, before?: Promise<unknown>): void {
    this.gate.track(socket);
    new HttpConnection(socket, source, this.shared, before).start();
  }
}

/** What every connection of a listener shares. */
interface Shared {
  cfg: HttpHandling;
  deps: HttpListenerDeps;
  st: ListenerStats;
  gate: ConnectionGate;
  encoder: HttpRecordEncoder;
  answers: DecoyAnswers;
  /** Counts a record once the spool kept (fsynced) or dropped it. */
  kept: (ok: boolean) => void;
}

/**
 * The listener's answers, built once per second (their Date header) and status, instead of once per
 * request: a flood is answered with the same bytes anyway.
 */
class DecoyAnswers {
  private second = -1;
  private readonly built = new Map<string, Buffer>();

  constructor(
    private readonly cfg: HttpHandling,
    private readonly now: () => number,
  ) {}

  get(status: number | undefined, close: boolean, headOnly: boolean): Buffer {
    const now = this.now();
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.built.clear();
    }
    const key = `${status ?? 0}${close ? 'c' : 'k'}${headOnly ? 'h' : 'b'}`;
    let answer = this.built.get(key);
    if (!answer) {
      answer = this.build(now, status, close, headOnly);
      // Only the decoy and the few error statuses are ever built: the map stays small.
      this.built.set(key, answer);
    }
    return answer;
  }

  private build(now: number, errorStatus: number | undefined, close: boolean, headOnly: boolean): Buffer {
    const decoy = this.cfg.decoy;
    const status = errorStatus ?? decoy.status;
    const body = errorStatus
      ? Buffer.from(`<html><body><h1>${status} ${STATUS_CODES[status]}</h1></body></html>\n`)
      : Buffer.from(decoy.body);
    const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`, `Date: ${new Date(now).toUTCString()}`];
    for (const [n, v] of Object.entries(decoy.headers)) {
      const lower = n.toLowerCase();
      if (lower !== 'content-length' && lower !== 'connection' && lower !== 'date') lines.push(`${n}: ${v}`);
    }
    lines.push(`Content-Length: ${body.length}`, `Connection: ${close ? 'close' : 'keep-alive'}`, '', '');
    const headBytes = Buffer.from(lines.join('\r\n'), 'latin1');
    return headOnly ? headBytes : Buffer.concat([headBytes, body]);
  }
}

/** One connection's requests, read one after another (pipelined requests wait for the previous answer). */
class HttpConnection {
  private chunks: Buffer[] = [];
  private size = 0;
  private served = 0;
  private busy = false;
  private closed = false;
  /** The client shut its side: answer what came, then close. */
  private ended = false;
  /** The last answer was sent with Connection: close; nothing more is read. */
  private closing = false;
  private requestTimer: NodeJS.Timeout | undefined;
  private requestStartMs = 0;
  private readonly cfg: HttpHandling;
  private readonly deps: HttpListenerDeps;
  private readonly st: ListenerStats;
  private readonly gate: ConnectionGate;

  constructor(
    private readonly socket: Socket,
    private readonly source: string,
    private readonly shared: Shared,
    private readonly before?: Promise<unknown>,
  ) {
    this.cfg = shared.cfg;
    this.deps = shared.deps;
    this.st = shared.st;
    this.gate = shared.gate;
  }

  start(): void {
    const s = this.socket;
    s.setTimeout(this.cfg.idle_timeout_ms, () => void this.cutShort('idle'));
    s.on('data', (c: Buffer) => {
      this.st.bytesIn += c.length;
      if (this.closing) return;
      if (this.size === 0 && this.chunks.length === 0) this.startRequest();
      this.chunks.push(c);
      this.size += c.length;
      // Past the listener's memory share the connection is shed (destroyed) instead of buffered.
      if (!this.gate.hold(s, this.size)) return;
      void this.advance();
    });
    s.on('end', () => {
      this.ended = true;
      if (!this.busy) void this.advance();
    });
    s.on('close', () => {
      this.closed = true;
      clearTimeout(this.requestTimer);
    });
  }

  private startRequest(): void {
    this.requestStartMs = this.deps.now();
    clearTimeout(this.requestTimer);
    this.requestTimer = setTimeout(() => void this.cutShort('deadline'), this.cfg.request_timeout_ms);
    this.requestTimer.unref();
  }

  private buffer(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Serves every whole request in the buffer; stops at a partial one (more bytes will come). */
  private async advance(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      while (!this.closed && this.size > 0) {
        const buf = this.buffer();
        const limit = this.cfg.max_head_bytes;
        const end = headEnd(buf.subarray(0, limit));
        if (end < 0) {
          if (buf.length >= limit) {
            // Oversized head: keep what the limit allows, answer 431 and close.
            this.socket.pause();
            const cut = parseHttpHead(buf.subarray(0, limit));
            cut.malformed = true;
            await this.finish(buf.subarray(0, limit), cut, true, 431);
            return;
          }
          break;
        }
        const head = parseHttpHead(buf.subarray(0, end));
        const body = this.bodyOf(head, buf, end);
        if (body === 'more') break;
        this.socket.pause();
        const raw = buf.subarray(0, end + Math.min(body.length, this.cfg.max_body_bytes));
        const keep = !head.close && !body.close && !head.malformed && ++this.served < this.cfg.max_requests_per_connection;
        // The rest of the buffer (a pipelined request) stays for the next turn.
        const rest = buf.subarray(end + body.length);
        this.chunks = rest.length ? [Buffer.from(rest)] : [];
        this.size = rest.length;
        await this.finish(raw, head, !keep, head.malformed ? 400 : undefined);
        if (!keep || this.closed) return;
        if (this.ended && this.size === 0) {
          this.socket.end();
          return;
        }
        if (this.size > 0) this.startRequest();
        else clearTimeout(this.requestTimer);
        this.socket.resume();
      }
    } finally {
      this.busy = false;
      // What was answered is no longer held (the buffer kept until its record was written).
      this.gate.hold(this.socket, this.size);
    }
    if (this.ended && !this.closed && !this.closing) {
      // Nothing more will come: what is left is a request cut short.
      if (this.size > 0) await this.cutShort('end');
      else this.socket.end();
    }
  }

  /**
   * How many bytes after the head belong to its body, or 'more' while they have not all arrived. A
   * chunked body, or one longer than max_body_bytes, ends the connection once max_body_bytes of it
   * came: the rest is never read, so a connection holds at most a head and the kept body in memory.
   */
  private bodyOf(head: HttpHead, buf: Buffer, end: number): { length: number; close: boolean } | 'more' {
    const have = buf.length - end;
    const max = this.cfg.max_body_bytes;
    if (head.chunked) {
      // Chunked bodies are kept as received, not decoded; the terminating chunk ends them.
      const tail = buf.subarray(end, end + max);
      const term = tail.indexOf('\r\n0\r\n\r\n');
      const done = tail.subarray(0, 5).toString('latin1') === '0\r\n\r\n' ? 5 : term >= 0 ? term + 7 : -1;
      if (done >= 0) return { length: done, close: true };
      if (have >= max) return { length: max, close: true };
      return 'more';
    }
    const declared = head.contentLength ?? 0;
    if (declared > max) return have >= max ? { length: max, close: true } : 'more';
    if (have < declared) return 'more';
    return { length: declared, close: false };
  }

  /** The connection went quiet, ended or ran out of time with a request unfinished: record what came. */
  private async cutShort(why: 'idle' | 'end' | 'deadline'): Promise<void> {
    if (this.closed || this.closing) {
      this.socket.destroy();
      return;
    }
    if (this.busy) {
      // A request is being answered; a deadline or idle timer still ends the connection after it.
      if (why !== 'end') this.socket.destroySoon();
      return;
    }
    if (this.size === 0) {
      this.socket.destroy();
      return;
    }
    this.busy = true;
    const buf = this.buffer().subarray(0, this.cfg.max_head_bytes + this.cfg.max_body_bytes);
    const end = headEnd(buf);
    const head = parseHttpHead(end >= 0 ? buf.subarray(0, end) : buf);
    head.malformed = true;
    this.chunks = [];
    this.size = 0;
    await this.finish(buf, head, true, why === 'end' ? 400 : 408);
    this.busy = false;
    this.gate.hold(this.socket, 0);
  }

  /**
   * Records the request, then answers it (a decoy, or `errorStatus`) and closes when told to. The
   * answer waits for the record's write, not its fsync; the record counts once it is fsynced.
   */
  private async finish(raw: Buffer, head: HttpHead, close: boolean, errorStatus?: number): Promise<void> {
    clearTimeout(this.requestTimer);
    const d = this.deps;
    if (head.malformed) this.st.malformed++;
    const json = this.shared.encoder.encode({
      timestampMs: this.requestStartMs || d.now(),
      domain: d.domains.domainOf(headerValue(head, 'host')),
      port: d.publicPort(),
      protocol: d.protocol ?? 'http',
      sourceIp: this.source,
      head,
      raw,
    });
    await d.sink.append('honeypot_http', json, this.shared.kept);
    if (this.before) await this.before;
    if (close) {
      this.closing = true;
      this.chunks = [];
      this.size = 0;
    }
    if (this.closed) return;
    this.socket.write(this.shared.answers.get(errorStatus, close, head.method === 'HEAD'));
    if (close) {
      this.socket.end();
      // Read on (what comes is dropped) so the client's FIN closes the connection now: a paused socket
      // would hold its per-source slot until the idle timeout.
      this.socket.resume();
    }
  }
}

function headerValue(head: HttpHead, name: string): string | undefined {
  // The usual spellings first: no array of entries per request.
  const h = head.headers;
  const v = h.Host ?? h.host;
  if (name === 'host' && v !== undefined) return v;
  for (const n in h) if (n.toLowerCase() === name) return h[n];
  return undefined;
}
