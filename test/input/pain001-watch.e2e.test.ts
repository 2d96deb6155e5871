// A watch given two pain.001 files: the one dated today is run and moved to done/; the one dated
// later is left in the inbox, nothing of it sent, until its day. In process, against the sandbox over HTTP.
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { WatchConfig } from '../../src/watch/config.ts';
import { watchFolder } from '../../src/watch/watcher.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { connectionTo, startSb } from '../ops/helpers.ts';
import { pain001, root, sampleRows } from './pain001-files.ts';

const dirs = tempDirs('pb-watch-pain001-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('keeps a pain.001 dated later in the inbox, runs the one due', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  const inbox = join(dir, 'inbox');
  mkdirSync(inbox);
  // own-account transfers (withdrawals): no document needed
  const rows = sampleRows()
    .filter((r) => r.method === 'SEPA' && r.sourceCurrency === 'EUR')
    .map((r) => ({ ...r, withdrawal: 'true' }));
  writeFileSync(join(inbox, 'later.xml'), pain001(rows.slice(0, 2), 'pain.001.001.09', { msgId: 'LATER', date: '2099-12-31' }));
  writeFileSync(join(inbox, 'now.xml'), pain001(rows.slice(2), 'pain.001.001.03', { msgId: 'NOW' }));
  const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
  await watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0 });
  expect(readdirSync(inbox)).toEqual(['later.xml']);
  expect(readdirSync(join(dir, 'done')).some((n) => n.endsWith('now.xml'))).toBe(true);
  const sent = sb.requestLog().filter((r) => r.route === 'initiate');
  expect(sent).toHaveLength(rows.length - 2);
});

it("matches a pain.001's documents in the watch's documents/ folder and uploads them", async () => {
  sb = await startSb();
  const dir = await dirs.make();
  mkdirSync(join(dir, 'inbox'));
  cpSync(join(root, 'samples', 'documents'), join(dir, 'documents'), { recursive: true });
  // two NIP payslips: a payout of this method needs its document (RfrdDocInf/Nb names it)
  const rows = sampleRows()
    .filter((r) => r.documents && r.method === 'NIP')
    .slice(0, 2);
  writeFileSync(join(dir, 'inbox', 'payslips.xml'), pain001(rows, 'pain.001.001.09', { msgId: 'PAYSLIPS', date: '2025-01-31' }));
  const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
  await watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0 });
  expect(readdirSync(join(dir, 'done')).some((n) => n.endsWith('payslips.xml'))).toBe(true);
  expect(sb.requestLog().filter((r) => r.route === 'initiate')).toHaveLength(2);
  expect(sb.requestLog().filter((r) => r.route === 'uploadUrl')).toHaveLength(2);
});
