import type { Server, Socket } from 'node:net';
import type { Logger } from 'pino';

/** What a limiter reports to (the metrics of one transport). */
export interface ConnectionCounters {
  refused(): void;
  reclaimed(n: number): void;
}

export interface ConnectionLimitOptions {
  /** `http` or `grpc`: names the transport in the log line. */
  transport: string;
  /** Connections served at once. */
  max: number;
  /**
   * Whether a connection has no request in flight and may be closed to make room; omit to never
   * reclaim (the limit then only refuses).
   */
  isIdle?: (socket: Socket) => boolean;
  /** Writes the refusal and closes the socket (a 503 problem+json for HTTP); omit to close at once. */
  refuse?: (socket: Socket) => void;
  counters: ConnectionCounters;
  logger: Logger;
  /** ms; Date.now by default (only the rate of the warn line depends on it). */
  now?: () => number;
}

interface Tracked {
  /** When the connection was last seen doing something (connected, bytes read, a request in flight). */
  activeAt: number;
  bytesRead: number;
}

/** At most one warn line per window; the counts in it cover the whole window. */
const LOG_WINDOW_MS = 10_000;
/** How often connections are looked at, so the idle ones can be ordered by how long they were idle. */
const SAMPLE_MS = 1_000;

/**
 * Caps the connections one listening server serves, so a flood of connections can never use up the
 * process's file descriptors (which would also starve SQLite, the feed log and the other port).
 *
 * When a connection arrives and `max` are open, idle connections (no request in flight) are closed
 * first, longest idle first, a batch of about 5% of `max` at a time (so a flood does not sort the
 * list for every connection). Only when nothing is idle is the newcomer refused: `refuse` answers it
 * (HTTP: 503 problem+json, `Connection: close`) from a small headroom of extra sockets, beyond which
 * node drops connections outright (`server.maxConnections`). Refusals and reclaims are counted and
 * logged at warn, at most once per 10 s with the counts since the last line.
 *
 * Per connection, not per request: one Map entry per socket; a timer samples bytesRead once a second
 * so that "idle since" is known without touching the request path.
 */
export class ConnectionLimiter {
  readonly max: number;
  /** Extra sockets that may be held briefly while a refusal is written. */
  readonly headroom: number;
  private readonly open = new Map<Socket, Tracked>();
  private refusing = 0;
  private pendingRefused = 0;
  private pendingReclaimed = 0;
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private sampler: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ConnectionLimitOptions) {
    if (!Number.isInteger(options.max) || options.max < 1)
      throw new Error(`connection limit must be a positive integer, got ${options.max}`);
    this.max = options.max;
    this.headroom = Math.min(256, Math.max(4, Math.ceil(options.max / 20)));
    this.now = options.now ?? Date.now;
  }

  /** Connections open now (served ones; not those being refused). */
  get connections(): number {
    return this.open.size;
  }

  /**
   * Puts the limit in front of `server`'s connection listeners: admitted sockets go to them as before,
   * refused ones never reach them. Call before the server listens.
   */
  attach(server: Server): void {
    const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (this.admit(socket)) for (const l of listeners) l.call(server, socket);
    });
    // The hard backstop: past it node closes new connections without a word (still counted).
    server.maxConnections = this.max + this.headroom;
    server.on('drop', () => this.noteRefused());
    server.on('listening', () => this.start());
    server.on('close', () => this.stop());
  }

  /** Admits `socket`, reclaiming idle connections when full; false when it was refused (and handled). */
  admit(socket: Socket): boolean {
    if (this.open.size >= this.max) this.reclaim();
    if (this.open.size >= this.max) {
      this.noteRefused();
      if (this.options.refuse !== undefined && this.refusing < this.headroom) {
        this.refusing++;
        socket.once('close', () => this.refusing--);
        this.options.refuse(socket);
      } else socket.destroy();
      return false;
    }
    this.open.set(socket, { activeAt: this.now(), bytesRead: 0 });
    socket.once('close', () => this.open.delete(socket));
    return true;
  }

  /** Updates when each connection was last active: bytes read since the last look, or a request in flight. */
  private sample(now: number): void {
    const isIdle = this.options.isIdle;
    for (const [socket, t] of this.open) {
      const read = socket.bytesRead;
      if (read !== t.bytesRead || (isIdle !== undefined && !isIdle(socket))) {
        t.bytesRead = read;
        t.activeAt = now;
      }
    }
  }

  /** Closes idle connections, longest idle first, up to a batch; returns how many. */
  private reclaim(): number {
    const isIdle = this.options.isIdle;
    if (isIdle === undefined) return 0;
    const now = this.now();
    this.sample(now);
    const idle: Array<[Socket, Tracked]> = [];
    for (const entry of this.open) if (isIdle(entry[0])) idle.push(entry);
    idle.sort((a, b) => a[1].activeAt - b[1].activeAt);
    const batch = Math.min(idle.length, Math.max(1, Math.ceil(this.max / 20)));
    for (let i = 0; i < batch; i++) {
      const socket = idle[i]![0];
      this.open.delete(socket);
      socket.destroy();
    }
    if (batch > 0) {
      this.options.counters.reclaimed(batch);
      this.pendingReclaimed += batch;
      this.maybeLog(now);
    }
    return batch;
  }

  /**
   * Closes the open connections `unused` picks (at shutdown: those with no request on them). Node's
   * closeIdleConnections() leaves a connection that never sent a request (a browser's preconnect, a
   * pool's spare) open, and the server's close waits for it until the client gives up.
   */
  closeWhere(unused: (socket: Socket) => boolean): number {
    let n = 0;
    for (const socket of this.open.keys())
      if (unused(socket)) {
        socket.destroy();
        n++;
      }
    return n;
  }

  private noteRefused(): void {
    this.options.counters.refused();
    this.pendingRefused++;
    this.maybeLog(this.now());
  }

  private maybeLog(now: number): void {
    if (this.pendingRefused + this.pendingReclaimed === 0 || now - this.lastLogAt < LOG_WINDOW_MS) return;
    this.options.logger.warn(
      {
        transport: this.options.transport,
        connections: this.open.size,
        limit: this.max,
        refused: this.pendingRefused,
        reclaimed: this.pendingReclaimed,
        window_s: LOG_WINDOW_MS / 1000,
      },
      'connection limit reached',
    );
    this.lastLogAt = now;
    this.pendingRefused = 0;
    this.pendingReclaimed = 0;
  }

  start(): void {
    if (this.sampler !== undefined) return;
    this.sampler = setInterval(() => {
      const now = this.now();
      this.sample(now);
      // Counts held back by the rate limit are written once the window has passed.
      this.maybeLog(now);
    }, SAMPLE_MS);
    this.sampler.unref();
  }

  stop(): void {
    clearInterval(this.sampler);
    this.sampler = undefined;
  }
}

/**
 * The soft limit on open files from /proc/self/limits text ("Max open files  SOFT  HARD  files"), or
 * undefined when it cannot be read (not Linux) or is unlimited.
 */
export function softOpenFileLimit(limitsText: string | undefined): number | undefined {
  const m = limitsText === undefined ? null : /^Max open files\s+(\S+)/m.exec(limitsText);
  const n = m ? Number(m[1]) : Number.NaN;
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Default connection limits from the soft file-descriptor limit: a reserve for everything else the
 * process opens (SQLite and its WAL, the feed log's hour files, parquet exports, the dataset), a
 * quarter of the limit but at least 256; of the rest 70% for HTTP and 24% for gRPC, which leaves room
 * for each limiter's refusal headroom (about 5% of its limit). 1024 descriptors (a common default)
 * give 537 and 184; 20,000 give 10,500 and 3,600.
 */
export function defaultConnectionLimits(softLimit: number | undefined): { http: number; grpc: number } {
  const fds = softLimit ?? 1024;
  const budget = Math.max(64, fds - Math.max(256, Math.ceil(fds / 4)));
  return { http: Math.max(48, Math.floor(budget * 0.7)), grpc: Math.max(16, Math.floor(budget * 0.24)) };
}
