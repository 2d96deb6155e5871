// A pain.001 whose later payment information is not due yet: `run` sends the rest and exits 5 (not
// finished, run it again on its day). `status` of its results says the same while the rows sent are
// in progress: a row NOT_SENT as NOT_DUE waits for its day, it does not need a person.
import { describe, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { join } from 'node:path';
import { cleanEnv, connectionTo, paidBatch, runCli, startSb, workDir } from './helpers.ts';

describe('status of a batch whose other rows are not due yet', () => {
  it('is not finished (exit 5), not rows needing a person (exit 1)', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const table = await readResults(b.results);
      const message = 'not due until 2099-12-31 (ReqdExctnDt, a UTC day): not sent before that day';
      table.rows[1]!.result = { status: 'NOT_SENT', errorCode: 'NOT_DUE', errorMessage: message };
      await writeResults(b.results, table);
      const o = { client: connectionTo(sb).client, resultsFile: b.results, ledgers: [], stateRoots: [await workDir('pb-state-')] };
      expect((await refreshStatus(o)).kind).toBe('not-finished');
      const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(b.dir, 'state') });
      const cli = await runCli(['status', b.results, '--base-url', sb.url], { cwd: b.dir, env });
      expect(cli.code, cli.stderr).toBe(5);
      expect(cli.stdout).toContain('Not finished: 1 still in progress, 1 not due yet; run status again later (exit 5).');
      table.rows[1]!.result = { status: 'NOT_SENT', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'short' };
      await writeResults(b.results, table);
      expect((await refreshStatus(o)).kind).toBe('rows-failed');
    } finally {
      await sb.close();
    }
  });
});
