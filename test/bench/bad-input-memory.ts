// Peak memory of the big malformed files of the bad-input campaign (test/input/bad-input-files.ts,
// the cases marked `big`): `validate` and `run` each in a child process (the real CLI, through
// runCli of test/engine/helpers.ts) under --max-old-space-size=256, as the campaign test runs them.
//   npx tsx test/bench/bad-input-memory.ts
// Prints, per case, the child's peak RSS (process.resourceUsage().maxRSS, read at its exit:
// everything the OS gave it, Node and the modules included) and its exit code.
// The campaign test (test/input/bad-input-campaign.e2e.test.ts) checks the exit codes and messages;
// memory is measured here only, because it depends on the machine and its load.
// Reference figures, when the CLI ran from the TypeScript sources through tsx (~140 MB of fixed
// cost) and the limit was asserted in the test: 10,000 columns ~200 MB; the 50 MB line ~150 MB (it
// was ~505 MB when csv-parse held the whole line); the zip bombs ~140 MB (they were ~920 MB).
// Compiled (dist/), 2026-11: 76-107 MB for validate, 94-126 MB for run.
// Target: under 320 MB each (exit 1 if one is over, or if a child exits other than as documented).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { saveFigures } from './figures.ts';
import { cleanEnv, runCli } from '../engine/helpers.ts';
import { BAD_CASES } from '../input/bad-input-files.ts';

const TARGET_MB = 320;
const root = mkdtempSync(join(tmpdir(), 'pb-bad-input-memory-'));
const rssHook = join(root, 'rss-hook.cjs');
// Writes the child's peak RSS (KiB) to $PB_RSS_FILE when it exits, whatever the exit.
writeFileSync(
  rssHook,
  'process.on("exit", () => { try { require("fs").writeFileSync(process.env.PB_RSS_FILE, String(process.resourceUsage().maxRSS)); } catch {} });\n',
);

let failed = 0;
const table: string[][] = [];
try {
  const big = BAD_CASES.filter((c) => c.big);
  console.log(`${big.length} big cases, target peak RSS < ${TARGET_MB} MB\n`);
  console.log(['case'.padEnd(36), 'validate'.padStart(14), 'run'.padStart(14)].join(' '));
  for (const [i, c] of big.entries()) {
    const dir = join(root, String(i).padStart(2, '0'));
    mkdirSync(dir);
    c.write(join(dir, c.name));
    const sb = await startSandbox({ rateLimitPerSecond: null });
    try {
      const cells: string[] = [];
      for (const which of ['validate', 'run'] as const) {
        const rssFile = join(dir, `.rss-${which}`);
        const env = cleanEnv({
          PAYOUT_BATCH_STATE_DIR: join(dir, '.state'),
          PB_RSS_FILE: rssFile,
          NODE_OPTIONS: `--max-old-space-size=256 --require ${rssHook}`,
        });
        const argv = which === 'validate' ? ['validate', c.name] : ['run', c.name, '--yes', '--base-url', sb.url];
        const r = await runCli([...argv, ...(c.args ?? [])], { cwd: dir, env, timeoutMs: 120_000 });
        const mb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : NaN;
        const ok = r.code === c.exit && mb < TARGET_MB;
        if (!ok) failed++;
        cells.push(`${Number.isNaN(mb) ? '?' : mb.toFixed(0)} MB, ${r.code ?? r.signal}${ok ? '' : ' !'}`.padStart(14));
      }
      console.log([c.name.padEnd(36), ...cells].join(' '));
      table.push([c.name, ...cells.map((x) => x.trim())]);
    } finally {
      await sb.close();
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
saveFigures({
  name: 'bad-input-memory',
  caption: `Peak RSS of the CLI under --max-old-space-size=256 on the bad-input campaign's big files, and its exit code (target: under ${TARGET_MB} MB and the documented code)`,
  columns: ['file', 'validate', 'run --yes'],
  rows: table,
});
if (failed) console.log(`\n${failed} measurement(s) over the target or with an unexpected exit (marked !)`);
process.exitCode = failed ? 1 : 0;
