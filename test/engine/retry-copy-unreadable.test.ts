// `retry BATCH` works on a copy of the run's results in the caller's folder, made once and then edited
// there. Whether the copy was there was asked with existsSync, false on any error: a copy that could not
// be stat'ed (EIO) was taken as none, and the run's results were copied over it, the user's edits lost,
// before the retry went on. Only a missing copy is none now; any other error refuses, naming it. (root
// reads any file: the error is made here as the system would make it.)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Failure } from '../files/failing-fs.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { cleanEnv, generateCsv, runMain, tempDirs } = await import('./helpers.ts');
const { startSb } = await import('../ops/helpers.ts');

let sb: Awaited<ReturnType<typeof startSb>>;
const dirs = tempDirs('pb-retry-copy-');
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('retry BATCH, its copy of the results there but unreadable', () => {
  it('refuses, naming the copy and the error, instead of copying the run’s results over it', async () => {
    const [ran, here] = [await dirs.make(), await dirs.make()];
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(ran, 'state') });
    const main = (cwd: string, ...args: string[]) => runMain([...args, '--base-url', sb.url, '--rate', '100'], { cwd, env });
    writeFileSync(join(ran, 'a.csv'), generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'CPY' }));
    expect((await main(ran, 'run', 'a.csv', '--yes')).code).toBe(0);
    const ledger = join(ran, 'state', 'ledgers', readdirSync(join(ran, 'state', 'ledgers'))[0]!);
    const batch = readdirSync(ledger)
      .find((n) => n.endsWith('.journal.jsonl'))!
      .slice(0, 16);
    expect((await main(here, 'retry', batch, '--yes')).code).toBe(0);
    const copy = join(here, `${batch}.results.csv`);
    const edited = readFileSync(copy, 'utf8').replace(/\n/g, '\r\n'); // (saved again by a spreadsheet)
    writeFileSync(copy, edited);

    failing.set('statSync', { path: copy, code: 'EIO' }).set('existsSync', { path: copy, code: 'EIO' });
    try {
      const r = await main(here, 'retry', batch, '--yes');
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`cannot read ${copy} (EIO)`);
      expect(r.stderr).toContain('Nothing was sent');
    } finally {
      failing.clear();
    }
    expect(readFileSync(copy, 'utf8')).toBe(edited);
  });
});
