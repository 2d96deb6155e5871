import { defineConfig } from 'vitest/config';

// Kept under test/ so the top level stays as agreed (package.json, tsconfig.json, src/, ...).
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // *.e2e.test.ts spawn the compiled CLI (dist/, built by the global setup when stale);
    // npm run test:unit leaves them out for the inner loop.
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/build.setup.ts'],
    // a temporary $PAYOUT_BATCH_STATE_DIR per test: nothing is written to the user's own
    setupFiles: ['test/state.setup.ts'],
    exclude: ['test/bench/**', 'test/chaos/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of the long tests wait on the sandbox's rate limit, not on the CPU: on a 2-core machine
    // vitest's default of one worker would run them end to end.
    maxWorkers: 2,
  },
});
