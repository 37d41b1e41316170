// The loader thread's entry when umbra runs from its TypeScript sources (tests, benches): plain JS, so
// it starts under any loader setup; it registers tsx itself (harmless when the parent's --import tsx
// already did) and runs the TypeScript module. The compiled build starts dataset-worker-main.js itself.
import { register } from 'tsx/esm/api';

register();
await import('./dataset-worker-main.ts');
