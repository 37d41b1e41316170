import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { sectionViews, type DatasetHeader } from './dataset-format.ts';
import { BLOCK_INDEX4_WORDS, index6Words, type Index6 } from './range-table.ts';

import { LoadedDataset, readDatasetHeader, type LoadedIpDataset, type SamePages } from './dataset-reader.ts';

/** What the loading worker sends back: the header, how many bytes of the arena the file took, and where its IPv6 index is in the arena. */
export interface WorkerLoaded {
  header: DatasetHeader;
  size: number;
  v6: ArenaIndex6;
  /** Compared with the previous load's file, when the request named one. */
  same?: SamePages;
}

/** An Index6 as positions in an arena (views cannot cross threads without copying). */
export interface ArenaIndex6 {
  top: [number, number];
  subOf: [number, number];
  sub: [number, number];
}

/** Where an arena's parts start: the file at 0, then the IPv6 index room, then the IPv4 block index. */
export interface ArenaLayout {
  v6At: number;
  v6Words: number;
  directAt: number;
}

/** A load request to the worker: the file, the arena to read it into, and where the previous load's file is (to compare pages). */
export interface WorkerRequest extends ArenaLayout {
  id: number;
  file: string;
  arena: SharedArrayBuffer;
  /** No load has used this arena yet: its memory is all zero and touched for the first time (page faults). */
  fresh: boolean;
  previous?: { arena: SharedArrayBuffer; size: number };
}

/** A dataset from the loader: its file's size in the arena and where its IPv6 index is. */
interface Loaded {
  dataset: LoadedDataset;
  size: number;
  v6: ArenaIndex6;
}

/** [byte offset, length] of each index array in `arena`. */
export function arenaIndex6(arena: SharedArrayBuffer, x: Index6): ArenaIndex6 {
  const at = (a: Uint32Array | Int32Array): [number, number] => {
    if (a.buffer !== arena) throw new Error('the IPv6 index is not in the arena');
    return [a.byteOffset, a.length];
  };
  return { top: at(x.top), subOf: at(x.subOf), sub: at(x.sub) };
}

/**
 * The loader thread's entry: compiled, the module itself; from the TypeScript sources (tests, benches
 * under tsx), a plain-JS shim that registers tsx in the thread before it imports the module.
 */
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './dataset-worker.mjs' : './dataset-worker-main.js', import.meta.url);

const align8 = (n: number) => (n + 7) & ~7;
const DIRECT_BYTES = BLOCK_INDEX4_WORDS * 4;

/** What a dataset file needs of an arena: its bytes, and the most words its IPv6 index can take. */
function needs(file: string): { fileBytes: number; v6Words: number } {
  const fileBytes = statSync(file).size;
  const header = readDatasetHeader(file);
  return { fileBytes, v6Words: index6Words(header.sections.v6Starts[1] / 4) };
}

/**
 * Loads datasets in a worker thread at the lowest CPU priority: reading 150 MB, checking it and
 * deriving the indexes (about 0.6 s of CPU) happen off the event loop, and on a busy machine the load
 * waits rather than taking CPU from the thread that answers requests. The thread is started once
 * (`start`, at server start) so a swap pays no thread or module start-up; it does not keep the
 * process alive.
 *
 * The file and its IPv4 index go into one of two shared arenas (SharedArrayBuffers made once and
 * reused), the one the current dataset does not use: handing 300 MB of new buffers to the main thread
 * at each swap made V8 start a mark-compact whose final pause held the event loop for 15-20 ms, and
 * reused memory needs no page faults either. So a dataset from this loader is only valid until the
 * next load but one: callers swap it in and drop the previous one, and lookups use a dataset only
 * synchronously (LookupService takes its view inside the charged work, never across an await).
 *
 * The spare arena costs no RAM until the first swap: nothing touches it before a load does, and
 * that load touches it in the loader thread, in paced steps (dataset-worker-main.ts), so the page
 * faults happen there and the event loop only reads pages the loader already wrote. Making it
 * resident at start instead held about 280 MiB more from start to the first rebuild, to spare that
 * one swap its paced page faults (figures: docs/intelligence.md).
 */
export class DatasetLoader {
  private worker: Worker | undefined;
  private next = 0;
  private readonly waiting = new Map<
    number,
    {
      file: string;
      arena: SharedArrayBuffer;
      layout: ArenaLayout;
      resolve: (loaded: Loaded) => void;
      reject: (e: Error) => void;
    }
  >();
  private readonly arenas: Array<SharedArrayBuffer | undefined> = [undefined, undefined];
  /** The arena the last loaded dataset lives in (the next load uses the other). */
  private current = 1;
  /** The last loaded dataset and its file's size (in arenas[current]): the next load shares its unchanged pages. */
  private last: Loaded | undefined;

  start(): void {
    if (this.worker) return;
    const worker = new Worker(WORKER_ENTRY);
    worker.unref();
    worker.on('message', (m: { id: number; loaded?: WorkerLoaded; error?: string }) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error !== undefined) return w.reject(new Error(m.error));
      if (!m.loaded) return w.reject(new Error('dataset loader answered nothing'));
      try {
        const l = m.loaded;
        const sections = sectionViews(new Uint8Array(w.arena, 0, l.size), l.header.sections, w.file);
        const direct = new Int32Array(w.arena, w.layout.directAt, BLOCK_INDEX4_WORDS);
        const v6 = {
          top: new Uint32Array(w.arena, ...l.v6.top),
          subOf: new Int32Array(w.arena, ...l.v6.subOf),
          sub: new Uint32Array(w.arena, ...l.v6.sub),
        };
        const carry = l.same && this.last ? { from: this.last.dataset, same: l.same } : undefined;
        w.resolve({ dataset: new LoadedDataset(l.header.info, sections, { direct, v6 }, carry), size: l.size, v6: l.v6 });
      } catch (e) {
        w.reject(e as Error);
      }
    });
    // A crashed thread fails what it was doing; the next load starts a new one.
    const fail = (e: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`dataset loader thread exited with code ${code}`)));
    this.worker = worker;
  }

  /**
   * Makes both arenas now, big enough for `file` (with room to grow), so that no swap registers new
   * memory with V8 (call at start, before serving). Untouched arena memory costs no RAM: the spare
   * arena becomes resident only when the first swap loads into it.
   */
  reserve(file: string): void {
    const need = needs(file);
    for (let k = 0; k < 2; k++) this.arena(k, need);
  }

  private readonly layouts: Array<ArenaLayout | undefined> = [undefined, undefined];
  /** Whether a load has written into arenas[k] (its memory is no longer all zero, and resident). */
  private readonly used = [false, false];

  private arena(k: number, need: { fileBytes: number; v6Words: number }): { arena: SharedArrayBuffer; layout: ArenaLayout } {
    const have = this.arenas[k];
    const layout = this.layouts[k];
    if (have && layout && layout.v6At >= align8(need.fileBytes) && layout.v6Words >= need.v6Words) return { arena: have, layout };
    // A quarter more than asked, so a dataset that grows a little between builds fits.
    const v6At = align8(Math.ceil(need.fileBytes * 1.25));
    const v6Words = Math.ceil(need.v6Words * 1.25);
    const made = { v6At, v6Words, directAt: align8(v6At + v6Words * 4) };
    const arena = new SharedArrayBuffer(made.directAt + DIRECT_BYTES);
    this.arenas[k] = arena;
    this.layouts[k] = made;
    this.used[k] = false;
    return { arena, layout: made };
  }

  private queue: Promise<unknown> = Promise.resolve();

  /** Resolves once every load asked for so far has ended (loaded or failed). */
  idle(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  /** Loads run one at a time: each writes into the arena the current dataset does not use. */
  load(file: string): Promise<LoadedIpDataset> {
    const run = this.queue.then(() => this.loadNow(file));
    this.queue = run.catch(() => {});
    return run;
  }

  private async loadNow(file: string): Promise<LoadedIpDataset> {
    this.start();
    const id = ++this.next;
    const k = 1 - this.current;
    const { arena, layout } = this.arena(k, needs(file));
    const previous = this.last ? { arena: this.arenas[this.current]!, size: this.last.size } : undefined;
    const fresh = !this.used[k];
    // No longer known to be zero once a load wrote into it, even a load that then fails.
    this.used[k] = true;
    const loaded = await new Promise<Loaded>((resolve, reject) => {
      this.waiting.set(id, { file, arena, layout, resolve, reject });
      this.worker!.postMessage({ id, file, arena, ...layout, fresh, previous } satisfies WorkerRequest);
    });
    this.current = k;
    this.last = loaded;
    return loaded.dataset;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

/** One load in a thread of its own, ended after (for a single load; a server keeps a DatasetLoader). */
export async function loadDatasetAsync(file: string): Promise<LoadedIpDataset> {
  const loader = new DatasetLoader();
  try {
    return await loader.load(file);
  } finally {
    await loader.close();
  }
}
