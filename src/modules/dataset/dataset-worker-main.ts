import { closeSync, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { decodeDataset } from './dataset-format.ts';
import { BLOCK_INDEX4_WORDS } from './range-table.ts';
import { prepareIndexes, samePages } from './dataset-reader.ts';
import { arenaIndex6, type WorkerLoaded, type WorkerRequest } from './dataset-loader.ts';

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread (never the event loop) for `ms`. */
const pause = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

/**
 * Memory is taken in steps of STEP bytes with a pause after each: first touching 280 MB at once means
 * a storm of page faults, which holds the process's memory map lock that the server thread's own
 * allocations wait for (measured: requests slowed to 5-10 ms for a quarter of a second). The spare
 * arena is first touched by the first swap's load (not at start), so every write of a fresh arena
 * here is paced: the file's bytes (readInto), the IPv4 index (blockIndex4) and the IPv6 index (index6).
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
parentPort!.on('message', (request: WorkerRequest) => {
  const { id, file, arena, v6At, v6Words, directAt, fresh, previous } = request;
  try {
    const size = readInto(file, new Uint8Array(arena, 0, v6At));
    const { header, sections } = decodeDataset(Buffer.from(arena, 0, size), file);
    const direct = new Int32Array(arena, directAt, BLOCK_INDEX4_WORDS);
    // Over a previous load's index every entry is written; fresh memory is zero, and blocks in no
    // range are left untouched there (no RAM for them).
    const { v6 } = prepareIndexes(sections, {
      direct,
      zeroed: fresh,
      v6: new Uint32Array(arena, v6At, v6Words),
      pace: { blocks: STEP / 8, pause: () => pause(PAUSE_MS) },
    });
    // The previous load's file is intact in the other arena: what did not change keeps its objects.
    const same = previous
      ? samePages(decodeDataset(Buffer.from(previous.arena, 0, previous.size), 'the previous dataset').sections, sections)
      : undefined;
    const loaded: WorkerLoaded = { header, size, v6: arenaIndex6(arena, v6), same };
    // The file and both indexes are in the shared arena already; only the page flags (a few hundred bytes) move.
    parentPort!.postMessage({ id, loaded }, same ? ([same.strings.buffer, same.nets.buffer, same.locs.buffer] as ArrayBuffer[]) : []);
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message });
  }
});
