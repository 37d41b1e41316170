import { closeSync, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { decodeDataset } from './dataset-format.ts';
import { PackedStrings, prepareIndexes, type WorkerLoaded } from './ip-dataset.ts';

/** Reads the whole file into one transferable buffer (readFileSync's may be pooled or not transferable). */
function readAll(file: string): ArrayBuffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = new ArrayBuffer(size);
    const view = new Uint8Array(bytes);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, view, at, Math.min(size - at, 1 << 24), at);
      if (n === 0) break;
      at += n;
    }
    return bytes;
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
parentPort!.on('message', ({ id, file }: { id: number; file: string }) => {
  try {
    const bytes = readAll(file);
    const { header, sections } = decodeDataset(Buffer.from(bytes), file);
    const { direct, v6 } = prepareIndexes(sections);
    const { strings, ...rest } = header;
    const packed = PackedStrings.pack(strings);
    const loaded: WorkerLoaded = { header: rest, stringBytes: packed.bytes, stringOffsets: packed.offsets, bytes, direct, v6 };
    parentPort!.postMessage({ id, loaded }, [bytes, direct.buffer as ArrayBuffer, v6.top.buffer as ArrayBuffer, v6.subOf.buffer as ArrayBuffer, v6.sub.buffer as ArrayBuffer, packed.bytes, packed.offsets.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message });
  }
});
