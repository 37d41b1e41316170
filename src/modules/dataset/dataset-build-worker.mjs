// The build thread's entry when umbra runs from its TypeScript sources (tests, benches): plain JS, so
// it starts under any loader setup; it registers tsx itself and runs the TypeScript module. The
// compiled build starts dataset-build-worker-main.js itself.
import { register } from 'tsx/esm/api';

register();
await import('./dataset-build-worker-main.ts');
