// The worker side of an XLSX results file built off the run's thread (write.ts, xlsxOffThread):
// a table as JSON in, the workbook's bytes out (transferred, not copied).
import { parentPort } from 'node:worker_threads';
import type { ResultsTable } from './types.ts';
import { xlsxBytes } from './write.ts';

parentPort!.on('message', (json: string) => {
  const table = JSON.parse(json) as ResultsTable;
  let bytes = xlsxBytes(table);
  // a Buffer may be a view of a larger pool: send exactly its bytes
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength) bytes = new Uint8Array(bytes);
  parentPort!.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
});
