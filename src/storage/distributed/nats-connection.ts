import { connect, type NatsConnection } from '@nats-io/transport-node';

export interface NatsConnectOptions {
  /** How this node shows in the server's connection list, e.g. `umbra@host:pid`. */
  name: string;
  /** Wait (ms) between reconnect attempts; a node reconnects forever. Default 1,000. */
  reconnectWaitMs?: number;
  /** Deadline (ms) of the first connection and of each reconnect attempt. Default 2,000. */
  timeoutMs?: number;
}

/** Why a NATS operation failed outside umbra's code; errors.ts answers every `NATS_*` code with 503. */
export type NatsFaultCode =
  | 'NATS_UNREACHABLE'
  | 'NATS_DISCONNECTED'
  | 'NATS_TIMEOUT'
  | 'NATS_NO_RESPONDERS'
  | 'NATS_REFUSED'
  | 'NATS_CLOSED';

/** NATS is down, slow or refusing: a dependency fault (503 with Retry-After), never a bug. */
export class NatsUnavailableError extends Error {
  constructor(
    readonly code: NatsFaultCode,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'NatsUnavailableError';
  }
}

/**
 * The NATS client's own errors that mean NATS (not umbra) failed, as a NatsUnavailableError saying
 * what was being done; anything else (a bug: an invalid subject, a wrong argument) is returned as it is.
 */
export function natsFault(err: unknown, doing: string): unknown {
  if (err instanceof NatsUnavailableError || !(err instanceof Error)) return err;
  const code: NatsFaultCode | undefined = {
    TimeoutError: 'NATS_TIMEOUT' as const,
    ClosedConnectionError: 'NATS_CLOSED' as const,
    DrainingConnectionError: 'NATS_CLOSED' as const,
    ConnectionError: 'NATS_DISCONNECTED' as const,
    RequestError: 'NATS_DISCONNECTED' as const,
    NoResponders: 'NATS_NO_RESPONDERS' as const,
    JetStreamNotEnabled: 'NATS_NO_RESPONDERS' as const,
    // An API error with a 4xx status (a bad stream or consumer config) stays a bug; 5xx is JetStream's own trouble.
    JetStreamApiError: (err as { status?: number }).status! >= 500 ? ('NATS_REFUSED' as const) : undefined,
    StreamNotFoundError: 'NATS_REFUSED' as const,
    ConsumerNotFoundError: 'NATS_REFUSED' as const,
    JetStreamError: 'NATS_REFUSED' as const,
    JetStreamStatusError: 'NATS_REFUSED' as const,
  }[err.name];
  return code ? new NatsUnavailableError(code, `${doing}: ${err.message}`, { cause: err }) : err;
}

/**
 * Connects to NATS and keeps reconnecting forever, so the feed log and bus recover by themselves when
 * NATS comes back. Several servers may be given separated by commas; credentials in the URL are used
 * but never appear in an error.
 */
export async function connectNats(url: string, options: NatsConnectOptions): Promise<NatsConnection> {
  const urls = url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => new URL(u.includes('://') ? u : `nats://${u}`));
  const auth = urls.find((u) => u.username);
  const credentials = auth
    ? auth.password
      ? { user: decodeURIComponent(auth.username), pass: decodeURIComponent(auth.password) }
      : { token: decodeURIComponent(auth.username) }
    : {};
  const servers = urls.map((u) => `${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${u.port || 4222}`);
  try {
    return await connect({
      servers,
      ...credentials,
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectWaitMs ?? 1_000,
      timeout: options.timeoutMs ?? 2_000,
      // A server that vanished without closing the socket is noticed within about 30 s.
      pingInterval: 10_000,
      maxPingOut: 3,
      // The client otherwise builds an Error (with its stack) for every request in case it times
      // out, which doubles the CPU of a publish.
      noAsyncTraces: true,
    });
  } catch (e) {
    throw new NatsUnavailableError('NATS_UNREACHABLE', `NATS is not reachable at ${servers.join(', ')} (${(e as Error).message})`, {
      cause: e,
    });
  }
}

/**
 * Whether a connection is up now, from its status events. Appends refuse at once while it reconnects
 * (rather than wait for a deadline), and readers recreate their consumers when it is back.
 */
export class NatsLink {
  private downSince: number | undefined;
  private readonly reconnectListeners = new Set<() => void>();

  private constructor(private readonly nc: NatsConnection) {
    void this.watch();
  }

  private static readonly links = new WeakMap<NatsConnection, NatsLink>();

  /** One watcher per connection, shared by everything that uses it. */
  static of(nc: NatsConnection): NatsLink {
    let link = NatsLink.links.get(nc);
    if (!link) NatsLink.links.set(nc, (link = new NatsLink(nc)));
    return link;
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') this.downSince ??= Date.now();
      else if (s.type === 'reconnect') {
        this.downSince = undefined;
        for (const l of this.reconnectListeners) l();
      }
    }
  }

  get up(): boolean {
    return this.downSince === undefined && !this.nc.isClosed();
  }

  /** Why NATS cannot be used now, or undefined when it can. */
  problem(): string | undefined {
    if (this.nc.isClosed()) return 'NATS connection closed';
    if (this.downSince !== undefined) return `NATS unreachable since ${new Date(this.downSince).toISOString()}; reconnecting`;
    return undefined;
  }

  private probing: Promise<string | undefined> | undefined;

  /**
   * problem(), or, when the connection looks up, whether the server answers a ping within timeoutMs:
   * a hung server (the socket open, nothing answered) is otherwise seen only when the client's own
   * pings time out, up to half a minute later. Concurrent probes share one ping.
   */
  probe(timeoutMs = 1_000): Promise<string | undefined> {
    const known = this.problem();
    if (known) return Promise.resolve(known);
    this.probing ??= new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(`NATS does not answer (no reply to a ping within ${timeoutMs} ms)`), timeoutMs);
      const done = (why: string | undefined) => {
        clearTimeout(timer);
        resolve(why);
      };
      this.nc.flush().then(
        () => done(undefined),
        (e: Error) => done(`NATS ping failed: ${e.message}`),
      );
    }).finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** Calls `listener` after every reconnect; returns the function that removes it. */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** Resolves once the connection is up (at once when it is), or when the signal aborts. */
  whenUp(signal: AbortSignal): Promise<void> {
    if (this.up || signal.aborted || this.nc.isClosed()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        off();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const off = this.onReconnect(done);
      signal.addEventListener('abort', done, { once: true });
      void this.nc.closed().then(done);
    });
  }
}
