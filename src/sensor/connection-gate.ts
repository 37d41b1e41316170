import type { Socket } from 'node:net';

/** Connection counters every listener reports (the HTTP one adds its record counts to them). */
export interface ConnectionStats {
  connections: number;
  open: number;
  refused: number;
}

/** `::ffff:203.0.113.7` (an IPv4 client of a dual-stack socket) is recorded as 203.0.113.7. */
export function sourceAddress(socket: Socket): string {
  const a = socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/** Counts connections per source address, so one source cannot take all of a listener's slots. */
export class SourceSlots {
  private readonly bySource = new Map<string, number>();
  constructor(private readonly perSource: number) {}
  take(source: string): boolean {
    const n = this.bySource.get(source) ?? 0;
    if (n >= this.perSource) return false;
    this.bySource.set(source, n + 1);
    return true;
  }
  give(source: string): void {
    const n = (this.bySource.get(source) ?? 1) - 1;
    if (n <= 0) this.bySource.delete(source);
    else this.bySource.set(source, n);
  }
}

/**
 * A listener's door: at most `max_connections` open, at most `max_connections_per_source` from one
 * address, so a flood from one source never takes the listener, and every open socket is known for
 * shutdown. One per listener, the same rule for HTTP, TLS and ADB.
 */
export class ConnectionGate {
  private readonly slots: SourceSlots;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly limits: { max_connections: number; max_connections_per_source: number },
    private readonly stats: ConnectionStats,
  ) {
    this.slots = new SourceSlots(limits.max_connections_per_source);
  }

  /** The connection's source address once admitted; undefined when it was refused (and destroyed). */
  admit(socket: Socket): string | undefined {
    const st = this.stats;
    const source = sourceAddress(socket);
    st.connections++;
    if (this.sockets.size >= this.limits.max_connections || !this.slots.take(source)) {
      st.refused++;
      socket.destroy();
      return undefined;
    }
    st.open++;
    this.sockets.add(socket);
    socket.once('close', () => {
      st.open--;
      this.sockets.delete(socket);
      this.slots.give(source);
    });
    // Attackers reset connections all the time; an error only ends that connection.
    socket.on('error', () => {});
    return source;
  }

  /** A socket admitted elsewhere (the HTTP inside a TLS connection): only known for shutdown. */
  track(socket: Socket): void {
    socket.on('error', () => {});
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Closes every open connection (shutdown). */
  destroyAll(): void {
    for (const s of this.sockets) s.destroy();
  }
}
