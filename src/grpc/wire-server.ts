import { EventEmitter } from 'node:events';
import {
  constants,
  createSecureServer,
  createServer,
  type Http2Server,
  type Http2SecureServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';

/**
 * The gRPC protocol over node:http2, for the one service umbra serves and reflection.
 *
 * Why not grpc-js's server: per call it costs about twice the CPU of node:http2 answering the same
 * frames (interceptor chains, a Metadata object cloned per call, channelz, several streams and
 * promises per call; figures in docs/grpc.md), and umbra's calls paid that on top of their own work.
 * The protocol a unary or server-streaming call needs is small: a length-prefixed message in,
 * length-prefixed messages out, the status in trailers. Messages are still encoded by the
 * proto-loader serializers of the one .proto, so the bytes are those grpc-js sent.
 *
 * What it implements (gRPC over HTTP/2, identity encoding only): unary, server-streaming and
 * bidirectional methods; `grpc-timeout` (DEADLINE_EXCEEDED); a request message size limit
 * (RESOURCE_EXHAUSTED); Trailers-Only answers for errors before any message; `grpc-message`
 * percent-encoded; cancellation when the client resets the stream or the connection goes; keepalive
 * pings; closing connections that have had no call for a while; graceful shutdown (GOAWAY, in-flight
 * calls finish, the rest are cut after a grace period).
 */

/** Status codes of the gRPC protocol (the same numbers grpc-js's `status` has). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

const STATUS_NAMES: Record<number, string> = Object.fromEntries(Object.entries(GrpcStatus).map(([k, v]) => [v, k]));
/** A status code's name (`RESOURCE_EXHAUSTED`). */
export const statusName = (code: number): string => STATUS_NAMES[code] ?? String(code);

/** Metadata sent by the server (initial or trailing): lower-case ASCII keys, string values. */
export type OutgoingMetadata = Record<string, string>;

/** A call's end other than OK: its code, the detail text, trailing metadata. */
export interface CallFailure {
  code: number;
  details: string;
  metadata?: OutgoingMetadata;
}

/** The metadata a client sent (its request headers), read as grpc-js reads it: every value of a key. */
export class IncomingMetadata {
  constructor(private readonly headers: IncomingHttpHeaders) {}
  get(key: string): string[] {
    const v = this.headers[key];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  }
}

/** One method as proto-loader describes it (`ServiceDefinition` entries of grpc-js have this shape). */
export interface MethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
}

/** What every call offers its handler. */
export interface CallBase<Req> {
  /** The single request message (unary and server-streaming calls). */
  readonly request: Req;
  readonly metadata: IncomingMetadata;
  /** `/package.Service/Method`. */
  getPath(): string;
  /** The :authority the client called (`host:port`). */
  getHost(): string;
}

export type UnaryCallback<Res> = (err: CallFailure | null, value?: Res, trailers?: OutgoingMetadata) => void;
export type UnaryHandler<Req = unknown, Res = unknown> = (call: CallBase<Req>, callback: UnaryCallback<Res>) => void;
export type StreamHandler<Req = unknown> = (call: StreamCall<Req>) => void;
type AnyHandler = UnaryHandler | StreamHandler;

export interface WireServerOptions {
  /** Largest request message accepted (bytes); larger ones end the call with RESOURCE_EXHAUSTED. */
  maxReceiveMessageLength: number;
  /** A connection without calls for this long is closed (GOAWAY). */
  idleTimeoutMs: number;
  /** Ping period and the time a ping may take before the connection is dropped as dead. */
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  /** Calls at once per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams: number;
  /** Buffered memory per connection (MiB) before new calls on it are refused. */
  maxSessionMemory: number;
  tls?: { cert: Buffer; key: Buffer };
}

const BASE_HEADERS = { [constants.HTTP2_HEADER_STATUS]: 200, [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc' };
const OK_TRAILER = { 'grpc-status': '0' };

/** `grpc-message` is percent-encoded (everything outside printable ASCII, and `%` itself). */
const encodeMessage = (s: string): string => s.replace(/[^\x20-\x24\x26-\x7e]+/gu, (c) => encodeURIComponent(c));

/** The length-prefixed frame of one uncompressed message. */
function frame(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };
/** `grpc-timeout` (`<digits><unit>`) in ms, undefined when absent or malformed. */
function timeoutMs(v: string | string[] | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(v);
  return m ? Number(m[1]) * TIMEOUT_UNITS[m[2]!]! : undefined;
}

/**
 * The state every call shares: reading length-prefixed messages, sending headers, messages and the
 * final status once. Unary calls use it directly; streaming calls through StreamCall.
 */
class WireCall {
  readonly metadata: IncomingMetadata;
  /** The request (first message) of unary and server-streaming calls. */
  request: unknown;
  private headersSent = false;
  private done = false;
  private pending: Buffer | undefined;
  private deadline: NodeJS.Timeout | undefined;
  /** Told when the client goes away before the call ended (streaming calls listen; unary ones need not). */
  onCancel: (() => void) | undefined;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly method: MethodDefinition,
    private readonly maxMessage: number,
  ) {
    this.metadata = new IncomingMetadata(headers);
    const ms = timeoutMs(headers['grpc-timeout']);
    if (ms !== undefined)
      this.deadline = setTimeout(() => this.finish({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }), ms);
  }

  getPath(): string {
    return this.method.path;
  }

  getHost(): string {
    return String(this.headers[':authority'] ?? this.headers.host ?? '');
  }

  /** The call has ended (status sent or the client went away). */
  get finished(): boolean {
    return this.done;
  }

  /** Splits request bytes into messages; returns false after ending the call on a bad frame. */
  read(chunk: Buffer, each: (message: unknown) => void): boolean {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    while (buf.length >= 5) {
      const size = buf.readUInt32BE(1);
      if (buf[0] !== 0) {
        this.finish({ code: GrpcStatus.UNIMPLEMENTED, details: 'Compressed messages are not supported; send them uncompressed' });
        return false;
      }
      if (size > this.maxMessage) {
        this.finish({
          code: GrpcStatus.RESOURCE_EXHAUSTED,
          details: `Received message larger than max (${size} vs. ${this.maxMessage})`,
        });
        return false;
      }
      if (buf.length < 5 + size) break;
      let message: unknown;
      try {
        message = this.method.requestDeserialize(buf.subarray(5, 5 + size));
      } catch {
        this.finish({ code: GrpcStatus.INTERNAL, details: 'Error deserializing request' });
        return false;
      }
      buf = buf.subarray(5 + size);
      each(message);
      if (this.done) return false;
    }
    if (buf.length > 0) this.pending = Buffer.from(buf);
    return true;
  }

  /** Bytes left over that do not make a whole message. */
  get partial(): boolean {
    return this.pending !== undefined;
  }

  sendHeaders(metadata?: OutgoingMetadata): void {
    if (this.headersSent || this.done || this.stream.destroyed) return;
    this.headersSent = true;
    this.stream.respond(metadata ? { ...BASE_HEADERS, ...metadata } : BASE_HEADERS, { waitForTrailers: true });
  }

  /** Writes one message; false when the peer's window is full (wait for 'drain'). */
  writeMessage(value: unknown): boolean {
    if (this.done || this.stream.destroyed) return false;
    this.sendHeaders();
    const bytes = Buffer.isBuffer(value) ? value : this.method.responseSerialize(value);
    return this.stream.write(frame(bytes));
  }

  /** Writes already encoded messages in one write; false when the peer's window is full (wait for 'drain'). */
  writeEncoded(messages: Buffer[]): boolean {
    if (this.done || this.stream.destroyed) return false;
    this.sendHeaders();
    if (messages.length === 1) return this.stream.write(frame(messages[0]!));
    let size = 0;
    for (const m of messages) size += 5 + m.length;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (const m of messages) {
      out[at] = 0;
      out.writeUInt32BE(m.length, at + 1);
      m.copy(out, at + 5);
      at += 5 + m.length;
    }
    return this.stream.write(out);
  }

  /** The one answer of a unary call and its OK status, in as few writes as HTTP/2 allows. */
  answer(value: unknown, trailers?: OutgoingMetadata): void {
    if (this.done || this.stream.destroyed) return;
    let bytes: Buffer;
    try {
      bytes = this.method.responseSerialize(value);
    } catch {
      return this.finish({ code: GrpcStatus.INTERNAL, details: 'Error serializing response' });
    }
    this.sendHeaders();
    this.done = true;
    this.clearDeadline();
    const stream = this.stream;
    // The handler's own trailer object is completed in place (a copy per call showed in profiles).
    if (trailers) trailers['grpc-status'] = '0';
    stream.once('wantTrailers', () => stream.sendTrailers(trailers ?? OK_TRAILER));
    stream.end(frame(bytes));
  }

  /** Ends the call with a status: in the trailers, or Trailers-Only when nothing was sent yet. */
  finish(failure: CallFailure | null, trailers?: OutgoingMetadata): void {
    if (this.done) return;
    this.done = true;
    this.clearDeadline();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    const status: OutgoingMetadata = failure
      ? { ...failure.metadata, 'grpc-status': String(failure.code), 'grpc-message': encodeMessage(failure.details) }
      : { ...trailers, 'grpc-status': '0' };
    if (!this.headersSent) {
      this.headersSent = true;
      stream.respond({ ...BASE_HEADERS, ...status } as OutgoingHttpHeaders, { endStream: true });
      return;
    }
    stream.once('wantTrailers', () => stream.sendTrailers(status));
    stream.end();
  }

  /** The client went away or reset the call: nothing more is sent. */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.clearDeadline();
    this.onCancel?.();
  }

  private clearDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = undefined;
  }
}

/**
 * A server-streaming or bidirectional call, with the surface of grpc-js's ServerWritableStream that
 * umbra and @grpc/reflection use: `write` (false: wait for 'drain'), `end`, `sendMetadata`,
 * `cancelled` and its event; bidirectional calls also emit 'data' per message and 'end'.
 */
export class StreamCall<Req = unknown> extends EventEmitter implements CallBase<Req> {
  constructor(private readonly call: WireCall) {
    super();
    call.onCancel = () => this.emit('cancelled');
    call.stream.on('drain', () => this.emit('drain'));
  }
  get request(): Req {
    return this.call.request as Req;
  }
  get metadata(): IncomingMetadata {
    return this.call.metadata;
  }
  get cancelled(): boolean {
    return this.call.finished;
  }
  getPath(): string {
    return this.call.getPath();
  }
  getHost(): string {
    return this.call.getHost();
  }
  sendMetadata(metadata: OutgoingMetadata): void {
    this.call.sendHeaders(metadata);
  }
  write(message: unknown): boolean {
    return this.call.writeMessage(message);
  }
  /** Already encoded messages (shared by every call on a feed), in one write; false: wait for 'drain'. */
  writeEncoded(messages: Buffer[]): boolean {
    return this.call.writeEncoded(messages);
  }
  /** Ends with OK. */
  end(): void {
    this.call.finish(null);
  }
  /** Ends with a failure status (grpc-js spells it `emit('error', …)`). */
  fail(failure: CallFailure): void {
    this.call.finish(failure);
  }
}

export interface ListenOptions {
  /** Sockets the caller accepted (its connection limit applied) are handed over here. */
  onConnection?: (inject: (socket: Socket) => void) => void;
}

/** The server: services registered by path, sessions tracked for idle close, keepalive and shutdown. */
export class WireServer {
  private readonly methods = new Map<string, { def: MethodDefinition; handler: AnyHandler }>();
  private readonly sessions = new Set<ServerHttp2Session>();
  /** Per connection: counts its calls in flight (a connection with none for a while is closed). */
  private readonly calls = new WeakMap<ServerHttp2Session, { opened(): void; closed(): void }>();
  readonly http2: Http2Server | Http2SecureServer;
  private closing = false;

  constructor(private readonly options: WireServerOptions) {
    const settings = { maxConcurrentStreams: options.maxConcurrentStreams };
    const common = { settings, maxSessionMemory: options.maxSessionMemory };
    this.http2 = options.tls
      ? createSecureServer({ ...common, cert: options.tls.cert, key: options.tls.key, allowHTTP1: false })
      : createServer(common);
    this.http2.on('session', (session) => this.track(session));
    this.http2.on('stream', (stream, headers) => this.dispatch(stream, headers));
  }

  /** Registers every method of a service (grpc-js's ServiceDefinition shape, so @grpc/reflection plugs in). */
  addService(service: Record<string, MethodDefinition>, implementation: Record<string, unknown>): void {
    for (const [name, def] of Object.entries(service)) {
      const handler = implementation[name] ?? implementation[name.charAt(0).toLowerCase() + name.slice(1)];
      if (typeof handler !== 'function') throw new Error(`no handler for ${def.path}`);
      this.methods.set(def.path, { def, handler: handler as AnyHandler });
    }
  }

  /** Serves a connection accepted elsewhere (plain or TLS, as configured). */
  inject(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.http2.emit('connection', socket);
  }

  /** GOAWAY to every connection; calls in flight may finish for `graceMs`, then connections are cut. */
  close(graceMs: number): Promise<void> {
    this.closing = true;
    if (this.sessions.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const left = new Set(this.sessions);
      const force = setTimeout(() => {
        for (const s of left) s.destroy();
      }, graceMs);
      for (const s of left)
        s.once('close', () => {
          left.delete(s);
          if (left.size === 0) {
            clearTimeout(force);
            resolve();
          }
        });
      for (const s of left) s.close();
    });
  }

  private track(session: ServerHttp2Session): void {
    const o = this.options;
    this.sessions.add(session);
    session.on('error', () => {});
    let open = 0;
    let idleSince = Date.now();
    // One timer per connection, re-armed when it fires: the call path only counts.
    let idleTimer: NodeJS.Timeout | undefined;
    const checkIdle = () => {
      if (open === 0 && Date.now() - idleSince >= o.idleTimeoutMs) {
        session.close();
        // A peer that never completed the preface holds no stream for close() to wait on, but may hold the socket.
        setTimeout(() => session.destroy(), 1000).unref();
        return;
      }
      idleTimer = setTimeout(checkIdle, open === 0 ? Math.max(1, o.idleTimeoutMs - (Date.now() - idleSince)) : o.idleTimeoutMs);
      idleTimer.unref();
    };
    idleTimer = setTimeout(checkIdle, o.idleTimeoutMs);
    idleTimer.unref();
    // Pings find peers that vanished without closing.
    const keepalive = setInterval(() => {
      if (session.closed || session.destroyed) return;
      const dead = setTimeout(() => session.destroy(), o.keepaliveTimeoutMs);
      dead.unref();
      try {
        session.ping((err) => (err ? session.destroy() : clearTimeout(dead)));
      } catch {
        clearTimeout(dead);
      }
    }, o.keepaliveTimeMs);
    keepalive.unref();
    this.calls.set(session, {
      opened: () => void open++,
      closed: () => {
        if (--open === 0) idleSince = Date.now();
      },
    });
    session.once('close', () => {
      this.sessions.delete(session);
      this.calls.delete(session);
      clearTimeout(idleTimer);
      clearInterval(keepalive);
    });
    if (this.closing) session.close();
  }

  private dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', () => {});
    const calls = this.calls.get(stream.session as ServerHttp2Session);
    calls?.opened();
    let call: WireCall | undefined;
    stream.once('close', () => {
      calls?.closed();
      call?.cancel();
    });
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const path = headers[':path'] ?? '';
    const entry = this.methods.get(path);
    const def: MethodDefinition = entry?.def ?? {
      path,
      requestStream: false,
      responseStream: false,
      requestDeserialize: (b) => b,
      responseSerialize: (v) => v as Buffer,
    };
    call = new WireCall(stream, headers, def, this.options.maxReceiveMessageLength);
    if (!entry) return call.finish({ code: GrpcStatus.UNIMPLEMENTED, details: `The server does not implement the method ${path}` });
    const encoding = headers['grpc-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      return call.finish({ code: GrpcStatus.UNIMPLEMENTED, details: `Compression ${String(encoding)} is not supported` });
    }
    if (def.requestStream) return this.bidi(call, entry.handler as StreamHandler);
    // Unary and server-streaming: exactly one request message, handled when the client half-closes.
    let count = 0;
    const take = (m: unknown) => {
      if (++count === 1) call.request = m;
    };
    stream.on('data', (chunk: Buffer) => void call.read(chunk, take));
    stream.once('end', () => {
      if (call.finished) return;
      if (count !== 1 || call.partial) {
        return call.finish({
          code: count > 1 ? GrpcStatus.UNIMPLEMENTED : GrpcStatus.INTERNAL,
          details: count > 1 ? 'Received a second request message for server streaming method' : 'Received no request message',
        });
      }
      if (def.responseStream) return (entry.handler as StreamHandler)(new StreamCall(call));
      (entry.handler as UnaryHandler)(call as unknown as CallBase<unknown>, (err, value, trailers) => {
        if (err) call.finish(err);
        else call.answer(value, trailers);
      });
    });
  }

  private bidi(call: WireCall, handler: StreamHandler): void {
    const s = new StreamCall(call);
    handler(s);
    call.stream.on('data', (chunk: Buffer) => void call.read(chunk, (m) => s.emit('data', m)));
    call.stream.once('end', () => {
      if (!call.finished) s.emit('end');
    });
  }
}
