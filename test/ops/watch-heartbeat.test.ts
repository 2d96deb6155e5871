// The heartbeat of a watch's claims: each held claim's .claim.json is touched, or another host takes
// it over after claimStaleSeconds. It used to swallow every error as "moved meanwhile": a disk failing
// under processing/ went unsaid while another host could take over a claim this one still ran. Now
// ENOENT alone is quiet (the claim moved to done/ or failed/); any other failure is said once per
// claim, and again when the heartbeat works. (root may change any file's times: the failure is made
// here as a failing disk makes it.)
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import type { Failure } from '../files/failing-fs.ts';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs/promises', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { createLogger } = await import('../../src/log.ts');
const { WatchConfig } = await import('../../src/watch/config.ts');
const { watchFolder } = await import('../../src/watch/watcher.ts');
const { claimFile } = await import('../../src/watch/claim-folder.ts');
const { generateCsv, tempDirs } = await import('../engine/helpers.ts');
const { allPayouts, connectionTo, startSb, until } = await import('./helpers.ts');

const dirs = tempDirs('pb-watch-heartbeat-');
let sb: Awaited<ReturnType<typeof startSb>> | undefined;
afterEach(() => failing.clear());
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it('a failing heartbeat is said once per claim, naming it, the error code and claimStaleSeconds; and again once it works', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  mkdirSync(join(dir, 'inbox'));
  writeFileSync(join(dir, 'inbox', 'payroll.csv'), generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'BEAT' }));
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  const said = (level: number, claim: string) =>
    logs.filter((l) => l.level === level && l.claim === claim && /heartbeat/.test(String(l.msg)));
  let claim = '';
  let beatAgain = 0;

  const r = await watchFolder({
    dir,
    config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, claimStaleSeconds: 10 }),
    conn: connectionTo(sb),
    once: true,
    crashWaitMs: 0,
    logger,
    // (held while the run waits: the heartbeat beats every second, a tenth of claimStaleSeconds)
    onClaim: async (file) => {
      const path = claimFile(dirname(file));
      claim = dirname(file).split('/').pop()!;
      const failure: Failure = { path, code: 'EIO' };
      failing.set('utimes', failure);
      await until(() => (failure.hits ?? 0) >= 3, 20_000, 'three failed heartbeats');
      failing.clear();
      const before = statSync(path).mtimeMs;
      await until(() => said(30, claim).length > 0, 20_000, 'the heartbeat said to work again');
      beatAgain = statSync(path).mtimeMs - before;
    },
  });

  const warned = said(40, claim);
  expect(warned).toHaveLength(1);
  expect(warned[0]).toMatchObject({ claim, code: 'EIO', claimStaleSeconds: 10 });
  expect(warned[0]!.msg).toBe(
    `claim heartbeat failing (EIO): after 10 s without one another host may take ${claim} over while this watch still runs it`,
  );
  expect(said(30, claim)).toHaveLength(1);
  expect(said(30, claim)[0]!.msg).toBe('claim heartbeat works again');
  expect(beatAgain).toBeGreaterThan(0);
  // the run itself went on: the file paid and moved to done/
  expect(r.files.map((f) => [f.name, f.outcome])).toEqual([['payroll.csv', 'done']]);
  expect(await allPayouts(sb)).toHaveLength(2);
});
