/**
 * The sensor's memory budget for work in progress: partial HTTP heads and bodies, ClientHellos being
 * read, DNS messages over TCP and UDP queries being answered, ADB messages, streams and pushed files,
 * and records serialized on their way to the spool. Each listener owns a fixed share (the shares add
 * up to at most `limits.max_buffered_bytes`), so a flood that exhausts one listener's share cannot
 * take memory the others need: they keep reading, recording and uploading.
 *
 * When a share is full, work is shed instead of buffered: new connections are closed at once, a
 * connection whose buffer would grow past the share is closed, a UDP query or a record is dropped.
 * Each of those counts once in `shed`.
 */
export class ListenerMemory {
  /** Bytes reserved now. */
  used = 0;
  /** Connections, queries and records dropped because the share was full. */
  shed = 0;

  constructor(readonly max: number) {}

  /** Reserves `n` bytes; false (counted in shed, nothing reserved) when the share has no room for them. */
  take(n: number): boolean {
    if (this.used + n > this.max) {
      this.shed++;
      return false;
    }
    this.used += n;
    return true;
  }

  give(n: number): void {
    this.used -= n;
    // A give without its take is a bug that would let the budget drift; it must show, not hide.
    if (this.used < 0) throw new Error(`memory budget released ${-this.used} bytes more than it reserved`);
  }

  /** No byte is free: a new connection would have nothing to read into. */
  get full(): boolean {
    return this.used >= this.max;
  }

  /** A reservation that follows what one connection holds. */
  hold(): Held {
    return new Held(this);
  }
}

/**
 * What one connection holds, kept equal to its buffers' size by the listener (set() after every
 * change). release() on close gives everything back and makes later set() calls refuse, so a late
 * callback of a closed connection cannot reserve bytes that nothing would release.
 */
export class Held {
  private bytes = 0;
  private released = false;

  constructor(private readonly memory: ListenerMemory) {}

  get size(): number {
    return this.bytes;
  }

  /** The connection now holds `n` bytes; false when growing to that would pass the share (nothing changes then). */
  set(n: number): boolean {
    if (this.released) return n === 0;
    if (n > this.bytes) {
      if (!this.memory.take(n - this.bytes)) return false;
    } else if (n < this.bytes) this.memory.give(this.bytes - n);
    this.bytes = n;
    return true;
  }

  release(): void {
    if (this.released) return;
    this.set(0);
    this.released = true;
  }
}

/** A share that never refuses: listeners built without a sensor (unit tests of one listener). */
export const unlimitedMemory = (): ListenerMemory => new ListenerMemory(Number.POSITIVE_INFINITY);
