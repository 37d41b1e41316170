/** Something that emits 'drain' when its buffer empties: a node Writable, an HTTP response, a gRPC server stream. */
export interface Drainable {
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** Resolves when `out` drains or `signal` aborts, whichever comes first, and leaves no listener behind. */
export function drained(out: Drainable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    out.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
