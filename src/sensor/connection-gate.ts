import type { Socket } from 'node:net';
import { type Held, type ListenerMemory, unlimitedMemory } from './memory-budget.ts';

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
  /** Every open socket, with what it holds of the listener's memory share. */
  private readonly sockets = new Map<Socket, Held>();

  constructor(
    private readonly limits: { max_connections: number; max_connections_per_source: number },
    private readonly stats: ConnectionStats,
    readonly memory: ListenerMemory = unlimitedMemory(),
  ) {
    this.slots = new SourceSlots(limits.max_connections_per_source);
  }

  /**
   * The connection's source address once admitted; undefined when it was refused (and destroyed):
   * over a connection limit, or the listener's memory share is full (counted as shed).
   */
  admit(socket: Socket): string | undefined {
    const st = this.stats;
    const source = sourceAddress(socket);
    st.connections++;
    if (this.memory.full) {
      this.memory.shed++;
      socket.destroy();
      return undefined;
    }
    if (this.sockets.size >= this.limits.max_connections || !this.slots.take(source)) {
      st.refused++;
      socket.destroy();
      return undefined;
    }
    st.open++;
    const held = this.memory.hold();
    this.sockets.set(socket, held);
    socket.once('close', () => {
      st.open--;
      this.sockets.delete(socket);
      this.slots.give(source);
      held.release();
    });
    // Attackers reset connections all the time; an error only ends that connection.
    socket.on('error', () => {});
    return source;
  }

  /** A socket admitted elsewhere (the HTTP inside a TLS connection): only known for shutdown. */
  track(socket: Socket): void {
    socket.on('error', () => {});
    const held = this.memory.hold();
    this.sockets.set(socket, held);
    socket.once('close', () => {
      this.sockets.delete(socket);
      held.release();
    });
  }

  /**
   * Sets what an admitted connection holds to `bytes`; when that would pass the memory share, the
   * connection is destroyed (its bytes released, counted as shed) and false is returned.
   */
  hold(socket: Socket, bytes: number): boolean {
    const held = this.sockets.get(socket);
    if (!held) return bytes === 0 || socket.destroyed;
    if (held.set(bytes)) return true;
    socket.destroy();
    return false;
  }

  /** Closes every open connection (shutdown). */
  destroyAll(): void {
    for (const s of this.sockets.keys()) s.destroy();
  }
}
