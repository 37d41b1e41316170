import { Worker } from 'node:worker_threads';

/**
 * The spool's writer thread: the `pwrite`s of every feed's spool run on a thread of their own, so the
 * event loop never waits for the disk. A synchronous write on the event loop can wait for the file
 * system's journal while an fdatasync of the same file commits; the thread pool costs a hop per write
 * and shares its four threads with the fdatasyncs and every other fs call. One thread serves all feeds
 * (a thread costs memory, and each feed has at most one write in flight); it runs each write in the
 * order it was posted, as a synchronous loop on the count pwrite returns.
 *
 * The thread's code is inline (CommonJS, eval) so it runs the same from the TypeScript sources and the
 * built JavaScript, without a path to resolve; it gets none of the process's node flags (a loader or
 * `--input-type=module` would make it fail to start).
 */
const THREAD_CODE = `
const { parentPort } = require('node:worker_threads');
const { writeSync } = require('node:fs');
parentPort.on('message', (m) => {
  const buf = new Uint8Array(m.buf);
  let off = 0;
  try {
    while (off < buf.length) {
      const n = writeSync(m.fd, buf, off, buf.length - off, m.at + off);
      if (n <= 0) break;
      off += n;
    }
    parentPort.postMessage({ id: m.id, written: off });
  } catch (e) {
    parentPort.postMessage({ id: m.id, written: off, error: { message: String(e && e.message), code: e && e.code } });
  }
});
`;

interface Reply {
  id: number;
  written: number;
  error?: { message: string; code?: string };
}

interface Waiting {
  bytes: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

let thread: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, Waiting>();

function start(): Worker {
  const w = new Worker(THREAD_CODE, { eval: true, name: 'umbra-spool-writer', execArgv: [] });
  w.on('message', (r: Reply) => {
    const p = waiting.get(r.id);
    if (!p) return;
    waiting.delete(r.id);
    // Idle, the thread must not keep the process alive; a write in flight must (its caller awaits it).
    if (waiting.size === 0) w.unref();
    if (r.error) p.reject(Object.assign(new Error(r.error.message), r.error.code ? { code: r.error.code } : {}));
    else if (r.written < p.bytes) p.reject(new Error(`short write (${r.written} of ${p.bytes} bytes)`));
    else p.resolve();
  });
  const fail = (e: Error) => {
    if (thread === w) thread = undefined;
    const lost = [...waiting.values()];
    waiting.clear();
    for (const p of lost) p.reject(e);
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the spool writer thread exited (${code})`)));
  w.unref();
  return w;
}

/** Starts the writer thread ahead of the first write (a thread takes some milliseconds to start). */
export function warmWriterThread(): void {
  thread ??= start();
}

/**
 * Writes all of `buf` into `fd` at `at` on the writer thread; resolves once pwrite returned for every
 * byte (they are in the page cache: a SIGKILL of the process no longer loses them), rejects with the
 * write's error or on a short write. `buf` is transferred: its ArrayBuffer must be its own (allocated
 * with Buffer.allocUnsafeSlow, not a slice of node's pool) and is unusable afterwards.
 */
export function writeOnThread(fd: number, buf: Buffer, at: number): Promise<void> {
  const w = (thread ??= start());
  const id = nextId++;
  return new Promise((resolve, reject) => {
    if (waiting.size === 0) w.ref();
    waiting.set(id, { bytes: buf.length, resolve, reject });
    const ab = buf.buffer as ArrayBuffer;
    w.postMessage({ id, fd, at, buf: ab }, [ab]);
  });
}
