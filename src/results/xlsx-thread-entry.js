// Entry of the XLSX worker thread. Node 20 does not give a worker the TypeScript loader that
// bin.js registered on the main thread, so the worker registers its own before loading the
// TypeScript side (xlsx-thread.ts).
import { register } from 'tsx/esm/api';

register();
await import('./xlsx-thread.ts');
