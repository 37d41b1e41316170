import { closeSync, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { decodeDataset } from './dataset-format.ts';
import { BLOCK_INDEX4_WORDS } from './range-table.ts';
import { prepareIndexes, type WorkerLoaded } from './ip-dataset.ts';

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread (never the event loop) for `ms`. */
const pause = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

/**
 * Memory is taken in steps of STEP bytes with a pause after each: first touching 280 MB at once means
 * a storm of page faults, which holds the process's memory map lock that the server thread's own
 * allocations wait for (measured: requests slowed to 5-10 ms for a quarter of a second).
 */
const STEP = 2 << 20;
const PAUSE_MS = 2;

/** Reads the whole file into one transferable buffer (readFileSync's may be pooled or not transferable), in steps. */
function readAll(file: string): ArrayBuffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = new ArrayBuffer(size);
    const view = new Uint8Array(bytes);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, view, at, Math.min(size - at, STEP), at);
      if (n === 0) break;
      at += n;
      pause(PAUSE_MS);
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** The IPv4 block index's 128 MiB, touched in steps before the index is written into it. */
function blockIndexMemory(): Int32Array {
  const direct = new Int32Array(BLOCK_INDEX4_WORDS);
  const words = STEP / 4;
  for (let at = 0; at < direct.length; at += words) {
    direct.fill(0, at, at + words);
    pause(PAUSE_MS);
  }
  return direct;
}

/**
 * Lowest CPU priority for this thread only (Linux: setpriority on the thread id), so on a busy machine
 * the load takes longer instead of taking CPU from the thread that answers requests. Elsewhere, or
 * without /proc, the thread keeps the process's priority.
 */
function yieldCpu(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
  } catch {
    // Not Linux, or no /proc: normal priority.
  }
}

yieldCpu();
// One load per request message; the thread stays (started with the server, so a swap pays no start-up).
parentPort!.on('message', ({ id, file }: { id: number; file: string }) => {
  try {
    const bytes = readAll(file);
    const { header, sections } = decodeDataset(Buffer.from(bytes), file);
    const { direct, v6 } = prepareIndexes(sections, blockIndexMemory());
    const loaded: WorkerLoaded = { header, bytes, direct, v6 };
    parentPort!.postMessage({ id, loaded }, [bytes, direct.buffer as ArrayBuffer, v6.top.buffer as ArrayBuffer, v6.subOf.buffer as ArrayBuffer, v6.sub.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message });
  }
});
