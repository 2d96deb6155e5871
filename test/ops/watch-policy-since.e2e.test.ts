// A watch judges a file under the account's approval policy, then plans and sends it: a policy set
// for the account in between (its first) holds the file, as it holds a run. In process against the
// sandbox, the host folder of policies a temporary one (package.json "payoutBatch.hostFolder").
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';

const host = vi.hoisted(() => ({ folder: '' }));
vi.mock('../../src/package-root.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/package-root.ts')>()),
  packageJson: () => ({ version: '0.0.0', payoutBatch: { hostFolder: host.folder } }),
}));
host.folder = mkdtempSync(join(tmpdir(), 'pb-policy-host-'));

const { hostStore } = await import('../../src/approvals/account-policy.ts');
const { accountOf } = await import('../../src/ledger/account-ledger.ts');
const { WatchConfig } = await import('../../src/watch/config.ts');
const { watchFolder } = await import('../../src/watch/watcher.ts');
const { generateCsv, tempDirs } = await import('../engine/helpers.ts');
const { connectionTo, startSb } = await import('./helpers.ts');

const dirs = tempDirs('pb-watch-policy-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it("an account's first policy, set while a watch plans a file it judged without one, holds the file: nothing is sent", async () => {
  sb = await startSb();
  const dir = await dirs.make();
  mkdirSync(join(dir, 'inbox'));
  writeFileSync(join(dir, 'inbox', 'payroll.csv'), generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'WPOL' }));
  const conn = connectionTo(sb);
  // (the first request of the preflight: the file was judged under no policy; one is set now)
  const listWallets = conn.client.listWallets.bind(conn.client);
  conn.client.listWallets = async (...a) => {
    const url = sb!.url;
    await hostStore(url).write({ account: accountOf(url), requireApprovals: 1, approvers: [{ name: 'Alice', publicKey: 'a', fingerprint: 'fa' }] }, []); // prettier-ignore
    return listWallets(...a);
  };
  const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
  const r = await watchFolder({ dir, config, conn, once: true, crashWaitMs: 0 });
  expect(r.files).toMatchObject([{ outcome: 'failed', kind: 'refused' }]);
  expect(r.files[0]!.reason).toContain("this account's approval policy changed since this run read it (none, now version 1");
  expect(sb.requestLog().filter((x) => x.route === 'initiate')).toHaveLength(0);
});
