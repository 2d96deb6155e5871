// vitest setupFiles: no test writes to the real user's state folder. Every test gets a fresh
// temporary one as $PAYOUT_BATCH_STATE_DIR (the ledgers of src/ledger and the quota count
// live there): in-process runs read it through quota.ts defaultStateDir(), and cleanEnv() hands it
// to every CLI a test spawns, so the processes of one test share it and no two tests do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach } from 'vitest';

const made: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'pb-test-state-'));
  made.push(d);
  process.env.PAYOUT_BATCH_STATE_DIR = d;
};

fresh(); // for what a test file does before its first test (beforeAll)
beforeEach(fresh);
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
