import { parentPort, workerData } from 'node:worker_threads';
import type { BuildThreadMessage } from './dataset-build-thread.ts';
import { buildDataset } from './dataset-builder.ts';

// The build thread's body (dataset-build-thread.ts): builds, reports progress, says done or why not.
const post = (m: BuildThreadMessage) => parentPort!.postMessage(m);
const { outFile } = workerData as { outFile: string };
try {
  const info = await buildDataset({ outFile, onProgress: (progress) => post({ type: 'progress', progress }) });
  post({ type: 'done', info });
} catch (e) {
  post({ type: 'failed', message: (e as Error).message });
}
