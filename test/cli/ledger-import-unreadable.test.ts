// `ledger import` asked whether the state folder held a ledgers/ folder with existsSync, false on any
// error: a folder it could not read (EACCES: another user's state folder; EIO) was said to hold no file
// ledger, and a team that then moved to the PostgreSQL ledger without its batches paid their references
// again. Only a missing folder is no file ledger now; any other error refuses (3), naming the folder and
// the error. (root reads any folder: the error is made here as the system would make it.)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Failure } from '../files/failing-fs.ts';
import { afterAll, describe, expect, it, vi } from 'vitest';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { cleanEnv, runMain, tempDirs } = await import('../engine/helpers.ts');
const { testDatabase, withPostgres } = await import('../pg/database.ts');

const dirs = tempDirs('pb-import-unreadable-');
afterAll(() => dirs.remove());

describe.runIf(withPostgres)('ledger import of a state folder whose ledgers/ cannot be read', () => {
  it('refuses (3), naming the folder and the error, instead of saying it holds no file ledger', async () => {
    const dir = await dirs.make();
    const state = join(dir, 'state');
    mkdirSync(join(state, 'ledgers'), { recursive: true, mode: 0o700 });
    const env = cleanEnv({ PAYOUT_BATCH_LEDGER_URL: await testDatabase(), HOME: dir });
    failing
      .set('lstatSync', { path: join(state, 'ledgers'), code: 'EIO' })
      .set('existsSync', { path: join(state, 'ledgers'), code: 'EIO' });
    try {
      const r = await runMain(['ledger', 'import', '--from-state-dir', 'state'], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`the state folder ${join(state, 'ledgers')} cannot be read (EIO)`);
      expect(r.stderr).toContain('Nothing was imported');
      expect(r.stderr).not.toContain('holds no file ledger');
    } finally {
      failing.clear();
    }
    // (a state folder without ledgers/ holds none: said so, exit 2)
    const none = await runMain(['ledger', 'import', '--from-state-dir', '.'], { cwd: join(dir, 'state', 'ledgers'), env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('holds no file ledger (no ledgers/ folder)');
  });
});
