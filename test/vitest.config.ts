import { defineConfig } from 'vitest/config';

/**
 * Test files run without isolation share each worker's module cache, which saves the import of
 * src/ for every file (about a minute of CPU on two cores). A file that needs a module graph of
 * its own runs in the `isolated` project: one that mocks a module (vi.mock), and one that compares
 * generated XLSX bytes (SheetJS keeps the number formats of every workbook read in one table).
 */
const ISOLATED = [
  'test/results/atomic.test.ts',
  'test/validation/templates.test.ts',
  'test/engine/results-once.test.ts',
  'test/engine/retry-twice-at-once.test.ts',
  'test/ops/listen-together.test.ts',
  'test/approvals/policy-unreadable.test.ts',
  'test/ops/watch-policy-since.e2e.test.ts',
  'test/approvals/policy-holds.e2e.test.ts',
  'test/approvals/account-policy.e2e.test.ts',
  'test/approvals/approve-terminal.e2e.test.ts',
  'test/screening-e2e/flow.e2e.test.ts',
  'test/ops/watch-unreadable.test.ts',
  'test/ops/watch-heartbeat.test.ts',
  'test/journal/disk-full.test.ts',
  'test/ledger/unreadable.test.ts',
  'test/files/lock-unreadable.test.ts',
  'test/files/lock-touch.test.ts',
  'test/ops/listen-lock-lost.test.ts',
  'test/ops/listen-cannot-read.test.ts',
  'test/cli/ledger-import-unreadable.test.ts',
  'test/engine/retry-copy-unreadable.test.ts',
  'test/results/unreadable.test.ts',
  // (reads a built-in format id another file's workbooks may have filled in SheetJS's table)
  'test/validation/excel-traps.test.ts',
];

// (an --exclude on the command line is ignored once projects are configured, so the scripts
// narrow the run here: test:unit leaves out every e2e file, and test:variant the browser test,
// whose report does not depend on the sandbox's reading)
const EXCLUDE = [
  'test/bench/**',
  'test/chaos/**',
  'node_modules/**',
  ...(process.env.PB_UNIT_ONLY ? ['test/**/*.e2e.test.ts'] : []),
  ...(process.env.PB_SANDBOX_SHAPES === 'variant' ? ['test/report/browser.e2e.test.ts'] : []),
];

// Kept under test/ so the top level stays as agreed (package.json, tsconfig.json, src/, ...).
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // (temporary files in memory, the build, then the run's PostgreSQL cluster for the team
    // ledger's tests: test/pg)
    globalSetup: ['test/tmp.setup.ts', 'test/build.setup.ts', 'test/pg/pg.setup.ts'],
    // a temporary $PAYOUT_BATCH_STATE_DIR per test: nothing is written to the user's own
    setupFiles: ['test/state.setup.ts'],
    exclude: EXCLUDE,
    // Generous: the end-to-end tests wait on spawned processes, and on a 2-core machine busy with
    // other work (load 12) a test of 17 CLI runs took over 90 s, 5 to 10 times its time on a quiet
    // one. No test asserts a time: this only bounds a hang.
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of the long tests wait on the sandbox's rate limit or on a signature's expiry, not on the
    // CPU: on a 2-core machine vitest's default of one worker would run them end to end, and more
    // workers fill those waits (quiet: 307 s with two, 242 s with three; beside two CPU loops, 357 s;
    // 2026-12-01, 274 files: 333 s and 343 s with three, 289 s and 295 s with four).
    maxWorkers: 4,
    projects: [
      // the sandboxes answer in the reading PB_SANDBOX_SHAPES names (strict by default; `npm run
      // test:variant`, in CI, runs every end-to-end test against the spec's other reading)
      // *.e2e.test.ts spawn the compiled CLI (dist/, built by the global setup when stale);
      // npm run test:unit leaves them out for the inner loop.
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...EXCLUDE, ...ISOLATED], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
