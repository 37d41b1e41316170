// The worker thread behind loadDatasetAsync (ip-dataset.ts). Plain JS so that it starts under any
// loader setup; it registers tsx itself (harmless when the parent's --import tsx already did) and
// runs the TypeScript half.
import { register } from 'tsx/esm/api';

register();
await import('./dataset-worker-main.ts');
