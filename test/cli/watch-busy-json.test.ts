// `watch --once --json` while another watch of the folder holds its lock longer than it waits: exit 4,
// and, as every command taking --json promises, one JSON document on stdout saying so.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { acquireLock } from '../../src/files/lock.ts';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { cleanEnv, KEY, runMain } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

it('watch --once --json with the folder locked by another watch: exit 4 and its --json document', async () => {
  const sb = await startSb();
  const dir = mkdtempSync(join(tmpdir(), 'pb-watch-busy-'));
  try {
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', settleSeconds: 0 }));
    for (const sub of ['inbox', 'processing', 'done', 'failed']) mkdirSync(join(dir, sub));
    const held = await acquireLock(join(dir, '.watch.lock'), { purpose: 'watch' });
    // (its wait, a minute, passed at once: each reading of the clock 5 s later)
    let t = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => (t += 5_000));
    try {
      const r = await runMain(['watch', dir, '--once', '--json', '--base-url', sb.url], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_API_KEY: KEY }),
      });
      expect(r.code).toBe(ExitCode.SERVICE_UNAVAILABLE);
      expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: ExitCode.SERVICE_UNAVAILABLE, error: expect.any(String) });
    } finally {
      vi.restoreAllMocks();
      held.release();
    }
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
