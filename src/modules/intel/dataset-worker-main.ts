import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeDataset } from './dataset-format.ts';
import { prepareIndexes, type WorkerLoaded } from './ip-dataset.ts';

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

const { file } = workerData as { file: string };
const bytes = readAll(file);
const { header, sections } = decodeDataset(Buffer.from(bytes), file);
const { direct, top } = prepareIndexes(sections);
const loaded: WorkerLoaded = { header, bytes, direct, top };
parentPort!.postMessage(loaded, [bytes, direct.buffer as ArrayBuffer, top.buffer as ArrayBuffer]);
