import { Worker } from 'node:worker_threads';
import type { BuildProgress } from './dataset-builder.ts';
import type { DatasetInfo } from '../lookup/ip-dataset.ts';

/** Messages of the build thread (dataset-build-worker-main.ts). */
export type BuildThreadMessage =
  | { type: 'progress'; progress: BuildProgress }
  | { type: 'done'; info: DatasetInfo }
  | { type: 'failed'; message: string };

const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './dataset-build-worker.mjs' : './dataset-build-worker-main.js', import.meta.url);

/**
 * Builds the packaged dataset into outFile on a thread of its own. The build holds about 900 MB while
 * it runs; in the server's own thread V8 kept that heap after the build (the first `umbra serve` of a
 * fresh install sat at 1.3 GB), while a thread's heap is given back when the thread ends (measured:
 * 116 MiB resident after the same build on a thread, 872 MiB inline).
 */
export function buildDatasetOnThread(outFile: string, onProgress: (p: BuildProgress) => void = () => {}): Promise<DatasetInfo> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(ENTRY, { workerData: { outFile } });
    // Settled when the thread has ended, not at its last message: only then is its heap given back.
    let outcome: { info: DatasetInfo } | { error: Error } | undefined;
    worker.on('message', (m: BuildThreadMessage) => {
      if (m.type === 'progress') onProgress(m.progress);
      else if (m.type === 'done') outcome = { info: m.info };
      else outcome = { error: new Error(m.message) };
    });
    worker.once('error', (e) => {
      outcome ??= { error: e };
    });
    worker.once('exit', (code) => {
      if (outcome && 'info' in outcome) resolve(outcome.info);
      else reject(outcome?.error ?? new Error(`the dataset build thread ended (exit code ${code}) before the dataset was built`));
    });
  });
}
