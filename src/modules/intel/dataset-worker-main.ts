import { closeSync, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { decodeDataset } from './dataset-format.ts';
import { BLOCK_INDEX4_WORDS } from './range-table.ts';
import { prepareIndexes, samePages, type WorkerLoaded, type WorkerRequest } from './ip-dataset.ts';

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

/**
 * Reads the whole file into `into` (the arena's first bytes), in steps; returns its size. The file may
 * not fit: the caller sized the arena from a stat that a rename can outdate, so that is an error
 * the next load (with a fresh stat) recovers from.
 */
function readInto(file: string, into: Uint8Array): number {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > into.length) throw new Error(`${file} grew to ${size} bytes while being loaded; retrying at the next change`);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, into, at, Math.min(size - at, STEP), at);
      if (n === 0) break;
      at += n;
      pause(PAUSE_MS);
    }
    return size;
  } finally {
    closeSync(fd);
  }
}

/** The arena's IPv4 block index words, zeroed in steps before the index is written into them. */
function blockIndexMemory(direct: Int32Array): Int32Array {
  const words = STEP / 4;
  for (let at = 0; at < direct.length; at += words) {
    direct.fill(0, at, Math.min(direct.length, at + words));
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
parentPort!.on('message', ({ id, file, arena, directAt, previous }: WorkerRequest) => {
  try {
    const size = readInto(file, new Uint8Array(arena, 0, directAt));
    const { header, sections } = decodeDataset(Buffer.from(arena, 0, size), file);
    const { v6 } = prepareIndexes(sections, blockIndexMemory(new Int32Array(arena, directAt, BLOCK_INDEX4_WORDS)));
    // The previous load's file is intact in the other arena: what did not change keeps its objects.
    const same = previous ? samePages(decodeDataset(Buffer.from(previous.arena, 0, previous.size), 'the previous dataset').sections, sections) : undefined;
    const loaded: WorkerLoaded = { header, size, v6, same };
    // The file and the IPv4 index are in the shared arena already; only the small IPv6 index (and the page flags) move.
    const moved = [v6.top.buffer, v6.subOf.buffer, v6.sub.buffer, ...(same ? [same.strings.buffer, same.nets.buffer, same.locs.buffer] : [])] as ArrayBuffer[];
    parentPort!.postMessage({ id, loaded }, moved);
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message });
  }
});
