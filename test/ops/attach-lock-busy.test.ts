// `attach` waiting for another attach of the same payout (the payout's lock) longer than it waits:
// refused with what holds it, nothing sent, exit 3 (a cron retry tries again), never an unexpected error.
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { acquireLock } from '../../src/files/lock.ts';
import { sha256Hex } from '../../src/engine/identity.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, connectionTo, KEY, paidBatch, sampleDoc, startSb } from './helpers.ts';

describe('attach while another attach of the payout holds it', () => {
  it('waits, then is refused: nothing sent, exit 3', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const where = ledgerOf(connectionTo(sb)).where;
      const held = await acquireLock(join(where, `attach-${sha256Hex(b.ids[0]!).slice(0, 16)}.lock`), { purpose: 'attach' });
      const sent = sb.requestLog().length;
      // (its wait, a minute, passed at once: each reading of the clock 5 s later)
      let t = Date.now();
      vi.spyOn(Date, 'now').mockImplementation(() => (t += 5_000));
      try {
        const r = await runMain(['attach', b.ids[0]!, sampleDoc(), '--base-url', sb.url], {
          cwd: b.dir,
          env: cleanEnv({ PAYOUT_API_KEY: KEY }),
        });
        expect([r.code, r.stderr]).toEqual([ExitCode.REFUSED, expect.stringContaining('another attach of this payout is running')]);
        expect(r.stderr).toContain('Nothing was sent');
      } finally {
        vi.restoreAllMocks();
        held.release();
      }
      expect(
        sb
          .requestLog()
          .slice(sent)
          .filter((x) => ['uploadUrl', 'storagePut', 'patchDocuments'].includes(x.route)),
      ).toEqual([]);
    } finally {
      await sb.close();
    }
  });
});
