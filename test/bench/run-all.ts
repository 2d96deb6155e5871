// `npm run bench`: every benchmark in turn, each in its own process, with its own figures.
//   npm run bench                  startup, validate, scale, throughput at a scaled 50/s, the memory of
//                                  the big bad inputs, the month-end loop's requests (a few minutes)
//   npm run bench -- --real        throughput at the real 5/s too (about 5 more minutes)
// Each script can be run alone with its own flags: see the header of each file.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const real = process.argv.includes('--real');
const steps: [string, string[]][] = [
  ['startup.ts', []],
  ['validate.ts', ['--runs', '1']],
  ['scale.ts', ['--runs', '1']],
  ['throughput.ts', ['--scale', '10']],
  ['bad-input-memory.ts', []],
  ['month-end.ts', []],
  ...(real ? [['throughput.ts', []] as [string, string[]]] : []),
];
let failed = 0;
for (const [file, args] of steps) {
  console.log(`\n== npx tsx test/bench/${file} ${args.join(' ')}`.trimEnd());
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, file), ...args], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`(${file} exited ${r.status}: a target missed or a failure, see above)`);
  }
}
process.exitCode = failed ? 1 : 0;
