// `attach` on the team ledger: a document's `doc` line is in the account's ledger before the PATCH, so
// attach run again, on another host or after a crash, uploads and attaches nothing.
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { accountOf, foldAll } from '../../src/ledger/account-ledger.ts';
import { PgLedgers } from '../../src/ledger/postgres.ts';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { cleanEnv, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { connectionTo, sampleDoc, startSb } from './helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const dirs = tempDirs('pb-attach-team-');

describe.runIf(withPostgres)('attach on the team ledger', () => {
  let sb: LocalSandbox;
  let url: string;
  let dir: string;
  /**
   * A host of the team: its own state folder and HOME; the ledger's URL, password and all, in the
   * environment. `inProcess`: by main() in this process, for a step that sets the scene.
   */
  const host = (name: string, args: string[], inProcess = false) =>
    (inProcess ? runMain : runCli)([...args, '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, name, 'state'), HOME: join(dir, name), PAYOUT_BATCH_LEDGER_URL: url }),
    });
  const sent = () => sb.requestLog().filter((r) => ['uploadUrl', 'storagePut', 'patchDocuments'].includes(r.route)).length;
  /** The payout ids of a batch run by host a. */
  async function paid(prefix: string): Promise<string> {
    await writeBatch(dir, `${prefix}.csv`, { rows: 1, prefix, amount: () => (prefix === 'TEAM' ? '11.00' : '12.00') });
    const run = await host('a', ['run', `${prefix}.csv`, '--yes'], true);
    expect(run.code, run.stderr).toBe(0);
    const results = join(
      dir,
      readdirSync(dir).find((f) => f.startsWith(`${prefix}.`) && f.includes('results'))!,
    );
    return (await readResults(results)).rows[0]!.result.payoutId!;
  }
  const dbs: TeamDb[] = [];
  const teamLedger = async () => new PgLedgers(dbs[dbs.push(await TeamDb.open(url, { command: 'attach' })) - 1]!).of(accountOf(sb.url));

  beforeAll(async () => {
    sb = await startSb({ monthlyQuota: null });
    url = await testDatabase();
    dir = await dirs.make();
  });
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    await sb?.close();
    await dirs.remove();
  });

  it('run again from another host (its own state folder): attached already, nothing uploaded or PATCHed', async () => {
    const id = await paid('TEAM');
    const first = await host('b', ['attach', id, sampleDoc()], true);
    expect(first.code, first.stderr).toBe(0);
    const before = sent();
    const copy = join(dir, 'invoice again.pdf');
    copyFileSync(sampleDoc(), copy);
    const again = await host('c', ['attach', id, copy]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`${copy} is attached already`);
    expect(sent()).toBe(before);
  });

  it('the upload is in the database before the PATCH leaves: killed after it, attach again sends nothing', async () => {
    const id = await paid('CRASH');
    const doc = sampleDoc('invoice-eu-c1.pdf');
    const killed = connectionTo(sb).client;
    const patch = killed.patchDocuments.bind(killed);
    let seenByAnotherHost = false;
    killed.patchDocuments = async (payoutId, urls) => {
      const known = (await foldAll([await teamLedger()])).flatMap((b) => [...b.folded.uploads.values()]);
      seenByAnotherHost = urls.every((u) => known.includes(u));
      await patch(payoutId, urls);
      throw new Error('killed after the PATCH');
    };
    await expect(attachDocuments({ client: killed, payoutId: id, files: [doc], ledgers: [await teamLedger()] })).rejects.toThrow('killed');
    expect(seenByAnotherHost).toBe(true);
    const before = sent();
    const r = await attachDocuments({ client: connectionTo(sb).client, payoutId: id, files: [doc], ledgers: [await teamLedger()] });
    expect([r.uploaded, r.already.length, sent()]).toEqual([[], 1, before]);
  });
});
