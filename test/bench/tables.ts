// Writes every table of test/bench/README.md again from test/bench/results/*.json, measuring
// nothing: `npx tsx test/bench/tables.ts`.
import { renderAll } from './figures.ts';

console.log(`tables written: ${renderAll().join(', ')}`);
