// Entry of the XLSX worker thread when the code runs from its TypeScript sources (the tests):
// Node 20 does not give a worker the loader of its parent, so it registers tsx before loading
// xlsx-thread.ts. The bundled package starts dist/xlsx-thread.js directly.
import { register } from 'tsx/esm/api';

register();
await import('./xlsx-thread.ts');
