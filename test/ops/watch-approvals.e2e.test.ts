// `watch` with "requireApprovals" (four eyes), in process against the sandbox over real HTTP: a
// batch dropped without its plan and approvals, or with too few that count, goes to failed/ with
// nothing sent; with two distinct listed approvers it runs exactly its plan.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { addApproval, approvalsPathFor, newKeyPair } from '../../src/approvals/approvals-file.ts';
import { loadPlan, planPayload } from '../../src/approvals/payload.ts';
import { signPlan } from '../../src/approvals/sign.ts';
import { planBatch } from '../../src/engine/plan-command.ts';
import { WatchConfig } from '../../src/watch/config.ts';
import { watchFolder } from '../../src/watch/watcher.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import type { Connection } from '../../src/client/connect.ts';
import { generateCsv, ROOT, tempDirs } from '../engine/helpers.ts';
import { connectionTo, startSb } from './helpers.ts';

const dirs = tempDirs('pb-watch-approvals-');
/** Dan's plan of `file`, as `plan FILE --out PLAN --prepared-by Dan` makes it (no quote). */
const planByDan = (file: string, conn: Connection, out: string) =>
  planBatch({ file, conn, out, quote: false, mergeDocuments: false, allowPartial: false, enablePairs: false, preparedBy: 'Dan' });
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('a batch runs only with its plan and two approvals beside it that count; otherwise failed/, nothing sent', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  const inbox = join(dir, 'inbox');
  const staging = join(dir, 'staging');
  mkdirSync(inbox);
  mkdirSync(staging);
  const [alice, bob, dan] = [newKeyPair(), newKeyPair(), newKeyPair()];
  writeFileSync(
    join(dir, 'approvers.json'),
    JSON.stringify([
      { name: 'Alice', publicKey: alice.publicKey },
      { name: 'Bob', publicKey: bob.publicKey },
      { name: 'Dan', publicKey: dan.publicKey },
    ]),
  );
  const conn = connectionTo(sb);
  const config = WatchConfig.parse({
    environment: 'sandbox',
    settleSeconds: 0,
    requireApprovals: 2,
    approvers: 'approvers.json',
  });
  const watch = () => watchFolder({ dir, config, conn, once: true, crashWaitMs: 0 });
  const initiates = () => sb!.requestLog().filter((r) => r.route === 'initiate').length;

  // Dan prepares the plan of payroll.csv; approvals are kept beside it in staging/.
  const batch = join(staging, 'payroll.csv');
  writeFileSync(batch, generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'APPR' }));
  const plan = join(staging, 'payroll.plan.json');
  await planByDan(batch, conn, plan);
  const approve = (name: string, key: { privatePem: string }) =>
    addApproval(approvalsPathFor(plan), signPlan(planPayload(loadPlan(plan)), name, key.privatePem, `${name}.pem`));
  /** Drops the plan and approvals as they are now, then the batch. */
  const drop = (companions = true) => {
    if (companions)
      for (const n of ['payroll.plan.json', 'payroll.plan.json.approvals.json']) copyFileSync(join(staging, n), join(inbox, n));
    copyFileSync(batch, join(inbox, 'payroll.csv'));
  };

  drop(false);
  const bare = await watch();
  expect(bare.files).toMatchObject([{ outcome: 'failed', kind: 'refused' }]);
  expect(bare.files[0]!.reason).toMatch(/^refused: no payroll\.plan\.json beside it: payout-batch\.json requires 2 approvals/);

  await approve('Dan', dan);
  await approve('Alice', alice);
  drop();
  const makerCounted = await watch();
  expect(makerCounted.files).toMatchObject([{ outcome: 'failed', kind: 'refused' }]);
  expect(makerCounted.files[0]!.reason).toBe(
    'refused: 1 valid approval of 2 required (Alice): Dan (maker of the plan cannot approve it). Nothing was sent.',
  );
  expect(readdirSync(inbox)).toEqual([]); // the plan and approvals went with their batch
  expect(initiates()).toBe(0);

  await approve('Bob', bob);
  drop();
  const approved = await watch();
  expect(approved.kind, JSON.stringify(approved.files)).toBe('ok');
  expect(initiates()).toBe(3);
  const [claim] = readdirSync(join(dir, 'done'));
  expect(JSON.parse(readFileSync(join(dir, 'done', claim!, 'payroll.summary.json'), 'utf8'))).toMatchObject({
    outcome: 'done',
    approvedBy: ['Alice', 'Bob'],
    summary: { created: 3 },
  });
});

it('a file refused for a document changed since its plan names its copy where it lies, in failed/, not processing/', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  mkdirSync(join(dir, 'inbox'));
  mkdirSync(join(dir, 'documents'));
  const alice = newKeyPair();
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
  const conn = connectionTo(sb);
  const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, requireApprovals: 1, approvers: 'approvers.json' });
  // payroll.csv beside documents/, as in the watch folder: its rows name documents/<file>
  const batch = join(dir, 'payroll.csv');
  const csv = generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'DOCW', documentsEvery: 1 });
  writeFileSync(batch, csv.replace(/[^,;]*\/samples\/documents\/([^,;]+\.pdf)/g, 'documents/$1'));
  for (const d of new Set([...csv.matchAll(/[^,;]*\/samples\/documents\/([^,;]+\.pdf)/g)].map((m) => m[1]!)))
    copyFileSync(join(ROOT, 'samples/documents', d), join(dir, 'documents', d));
  const plan = join(dir, 'payroll.plan.json');
  await planByDan(batch, conn, plan);
  await addApproval(approvalsPathFor(plan), signPlan(planPayload(loadPlan(plan)), 'Alice', alice.privatePem, 'Alice.pem'));
  // a document edited after approval
  const [doc] = readdirSync(join(dir, 'documents'));
  writeFileSync(join(dir, 'documents', doc!), Buffer.concat([readFileSync(join(dir, 'documents', doc!)), Buffer.from('\n')]));
  for (const n of ['payroll.plan.json', 'payroll.plan.json.approvals.json', 'payroll.csv'])
    copyFileSync(join(dir, n), join(dir, 'inbox', n));

  const r = await watchFolder({ dir, config, conn, once: true, crashWaitMs: 0 });
  expect(r.files).toMatchObject([{ outcome: 'failed', kind: 'refused' }]);
  const [claim] = readdirSync(join(dir, 'failed'));
  const { reason } = JSON.parse(readFileSync(join(dir, 'failed', claim!, 'payroll.summary.json'), 'utf8')) as { reason: string };
  expect(reason).toContain(`${join(dir, 'failed', claim!, 'payroll.csv')} changed since the plan was made`);
  expect(sb.requestLog().filter((e) => e.route === 'initiate')).toEqual([]);
});
