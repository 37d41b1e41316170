import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** The parts of a request head the raw path needs; everything else in the head has been checked and ignored. */
export interface RawHead {
  url: string;
  /** x-api-key as sent (trimmed), undefined when absent. */
  apiKey: string | undefined;
  /** x-request-id as sent (trimmed), undefined when absent. */
  requestId: string | undefined;
}

/**
 * Serves one request from its head, or returns false for node's HTTP server to serve it (and every
 * request after it on that connection). `reply` takes the status, the header pairs (name, value, name,
 * value ...) and the body; it may be called later (an admission that waits on a store): the connection
 * answers its requests in the order they came.
 */
export type RawServe = (head: RawHead, reply: (status: number, headers: string[], body: string) => void) => boolean;

export interface RawHttp1Options {
  /** The path every request served here starts with (e.g. /api/v4/lookup/ip/). */
  prefix: string;
  serve: RawServe;
  /** node's limit on a request head (server.maxHeaderSize), past which node answers 431. */
  maxHeaderBytes: number;
  /** node's keepAliveTimeout, in ms: an idle connection is closed after it, and Keep-Alive says it. */
  keepAliveTimeoutMs: () => number;
}

const CRLF2 = Buffer.from('\r\n\r\n');
/** Printable ASCII, tab and the head's own CRLFs: anything else (NUL, bare CR or LF is checked apart, obs-text) goes to node. */
const ODD_BYTE = /[^\t\r\n\x20-\x7e]/;
/** A header name as RFC 9110 defines a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * HTTP/1.1 on a bare socket for the one request the service answers most: `GET <prefix><segment>`.
 * node's HTTP server makes an IncomingMessage and a ServerResponse (two streams, their events and
 * timers) for every request, which costs more CPU than umbra's whole lookup (docs/architecture.md).
 *
 * A new connection starts here. Each complete request head in what has arrived is read; a plain GET
 * of the route, with nothing this reader is unsure of, is served here and its answer written as the
 * bytes node would write (same status line, headers and order, `Date`, `Connection` and `Keep-Alive`).
 * At the first request it does not take (another path or method, a query, a body, a partial head,
 * HTTP/1.0, `Connection: close`, an odd byte, a repeated header it reads, a missing Host, a server
 * that is closing), it hands the connection, with every byte not yet answered, to node's HTTP server,
 * which then owns it to the end exactly as if it had had it from the start: its parser, limits,
 * timeouts, error answers and fastify's routes. So whatever this reader gets wrong, it gets wrong by
 * declining, never by answering.
 */
export class RawHttp1 {
  /** Connections served here now (not yet handed over): closed by closeIdleConnections and closeAllConnections. */
  private readonly sockets = new Set<RawConnection>();
  private dateSecond = -1;
  private dateText = '';

  constructor(
    private readonly server: Server,
    readonly options: RawHttp1Options,
  ) {}

  /**
   * Puts the raw reader in front of node's connection handling on `server`: a socket node's listener
   * would take comes here first. Also makes the server's closeIdleConnections / closeAllConnections
   * (called by close()) close the connections held here.
   */
  static install(server: Server, options: RawHttp1Options): RawHttp1 {
    const raw = new RawHttp1(server, options);
    const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    const handOver = (socket: Socket) => {
      for (const l of nodeListeners) l.call(server, socket);
    };
    server.on('connection', (socket: Socket) => raw.adopt(socket, handOver));
    const closeIdle = server.closeIdleConnections.bind(server);
    const closeAll = server.closeAllConnections.bind(server);
    server.closeIdleConnections = () => {
      closeIdle();
      for (const c of raw.sockets) if (c.idle()) c.socket.destroy();
    };
    server.closeAllConnections = () => {
      closeAll();
      for (const c of raw.sockets) c.socket.destroy();
    };
    return raw;
  }

  private adopt(socket: Socket, handOver: (socket: Socket) => void): void {
    const c = new RawConnection(this, socket, (rest) => {
      this.sockets.delete(c);
      handOver(socket);
      // node's parser reads what the socket emits from now on: these bytes first.
      if (rest !== null && rest.length > 0) socket.unshift(rest);
    });
    this.sockets.add(c);
    socket.once('close', () => this.sockets.delete(c));
  }

  /** Whether requests may still be served here (the server has not begun to close). */
  accepting(): boolean {
    return this.server.listening;
  }

  /** The bytes of one answer, as node's ServerResponse writes them for a keep-alive HTTP/1.1 request. */
  response(status: number, headers: string[], body: string): string {
    let head = `HTTP/1.1 ${status} ${statusText(status)}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    return `${head}Date: ${this.date()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(
      this.options.keepAliveTimeoutMs() / 1000,
    )}\r\n\r\n${body}`;
  }

  /** node's Date header: the current second, made once a second. */
  private date(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.dateSecond) {
      this.dateSecond = second;
      this.dateText = new Date(now).toUTCString();
    }
    return this.dateText;
  }
}

/** node's reason phrase for a status (its own table, as ServerResponse writes it). */
const statusText = (status: number): string => STATUS_CODES[status] ?? 'unknown';

/** One connection while the raw reader holds it. */
class RawConnection {
  /** Bytes received and not yet taken as a request. */
  private pending: Buffer | null = null;
  /** A request whose answer has not been written yet (answers go out in request order). */
  private waiting = false;
  private handedOver = false;
  private readonly onData = (chunk: Buffer) => this.data(chunk);
  private readonly onTimeout = () => {
    // node's keepAliveTimeout: an idle connection is closed; one with an answer under way is not.
    if (!this.waiting) this.socket.destroy();
  };
  private readonly onError = () => this.socket.destroy();

  constructor(
    private readonly raw: RawHttp1,
    readonly socket: Socket,
    private readonly handOver: (rest: Buffer | null) => void,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(raw.options.keepAliveTimeoutMs());
    socket.on('data', this.onData);
    socket.on('timeout', this.onTimeout);
    socket.on('error', this.onError);
  }

  idle(): boolean {
    return !this.waiting && this.pending === null;
  }

  private data(chunk: Buffer): void {
    if (this.handedOver) return;
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.waiting) this.drain();
  }

  /** Serves the complete heads in `pending`, in order, until one waits, or hands over at the first it does not take. */
  private drain(): void {
    let buf = this.pending!;
    let at = 0;
    let out = '';
    while (at < buf.length) {
      if (!this.raw.accepting()) break;
      const end = buf.indexOf(CRLF2, at);
      if (end === -1 || end - at > this.raw.options.maxHeaderBytes) break;
      const head = parseHead(buf.toString('latin1', at, end + 2), this.raw.options.prefix);
      if (head === null) break;
      let now: string | undefined;
      let sync = true;
      const taken = this.raw.options.serve(head, (status, headers, body) => {
        const bytes = this.raw.response(status, headers, body);
        if (sync) now = bytes;
        else this.later(bytes);
      });
      sync = false;
      if (!taken) break;
      at = end + 4;
      if (now !== undefined) {
        out += now;
        continue;
      }
      // Answered later: the rest waits (and what arrives meanwhile joins it).
      this.waiting = true;
      break;
    }
    if (out !== '') this.socket.write(out, 'utf8');
    this.pending = at === buf.length ? null : buf.subarray(at);
    if (this.waiting || this.pending === null) return;
    buf = this.pending;
    this.pending = null;
    this.release(buf);
  }

  /** An answer that came after its request's turn: written, then the requests that waited behind it. */
  private later(bytes: string): void {
    this.waiting = false;
    if (this.socket.destroyed) return;
    this.socket.write(bytes, 'utf8');
    if (this.pending !== null) this.drain();
    // The server began to close while this answer was being made: end the connection after it, as
    // node does, rather than keep it open until the keep-alive timeout and hold close() up.
    else if (!this.raw.accepting()) this.socket.end();
  }

  /** Gives the connection and the bytes not served to node's HTTP server. */
  private release(rest: Buffer): void {
    this.handedOver = true;
    this.socket.off('data', this.onData);
    this.socket.off('timeout', this.onTimeout);
    this.socket.off('error', this.onError);
    this.handOver(rest);
  }
}

/**
 * The head of a `GET <prefix><segment> HTTP/1.1` request the raw path may serve, or null when node
 * should read it. `text` is the head in latin1 with its last line's CRLF (no blank line).
 */
export function parseHead(text: string, prefix: string): RawHead | null {
  if (!text.startsWith('GET ') || ODD_BYTE.test(text)) return null;
  const lineEnd = text.indexOf('\r\n');
  const line = text.slice(0, lineEnd);
  if (!line.endsWith(' HTTP/1.1')) return null;
  const url = line.slice(4, line.length - 9);
  // The path is one plain segment after the prefix: no query, no escapes, nothing to decode.
  if (!url.startsWith(prefix) || url.indexOf(' ') !== -1 || url.indexOf('?') !== -1 || url.indexOf('%') !== -1) return null;
  let apiKey: string | undefined;
  let requestId: string | undefined;
  let host = false;
  let at = lineEnd + 2;
  while (at < text.length) {
    const next = text.indexOf('\r\n', at);
    const header = text.slice(at, next);
    at = next + 2;
    // A bare CR or LF inside a line is for node to judge.
    if (header.indexOf('\r') !== -1 || header.indexOf('\n') !== -1) return null;
    const colon = header.indexOf(':');
    if (colon <= 0) return null;
    const name = header.slice(0, colon);
    if (!TOKEN.test(name)) return null;
    const value = header.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    switch (name.toLowerCase()) {
      case 'host':
        if (host) return null;
        host = true;
        break;
      case 'x-api-key':
        if (apiKey !== undefined) return null;
        apiKey = value;
        break;
      case 'x-request-id':
        if (requestId !== undefined) return null;
        requestId = value;
        break;
      case 'connection':
        if (value.toLowerCase() !== 'keep-alive') return null;
        break;
      case 'content-length':
        if (value !== '0') return null;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
    }
  }
  // node refuses a request without Host (requireHostHeader).
  return host ? { url, apiKey, requestId } : null;
}
