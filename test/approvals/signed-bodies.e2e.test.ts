// Approvals sign everything that is paid, over the real CLI and a sandbox over HTTP (issue 26,
// items 3, 5 and 6): a plan of one sheet of a workbook pays that sheet's row and never the other
// sheet's, through `run --plan` and `watch`; a document replaced after approval, a look-alike
// maker and an edited fingerprint are refused with nothing sent.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair, type NewKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { approveAs, cleanEnv, HEADER, initiates, ledgerJournals, ROOT, runCli, runMain, tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-signed-bodies-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** A USD ACH row of the sample's shape: reference, payee, account, and a document (else a withdrawal). */
function row(reference: string, name: string, account: string, document = ''): string[] {
  const cells: Record<string, string> = {
    reference,
    sourceAmount: '100.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    method: 'ACH',
    accountName: name,
    accountCurrency: 'USD',
    accountNumber: account,
    routingNumber: '021000021',
    accountType: 'checking',
    narration: 'Salary',
    documents: document,
    withdrawal: document ? 'false' : 'true',
  };
  return HEADER.map((h) => cells[h] ?? '');
}

/**
 * Mallory's row on the first sheet, "Draft"; the real employee's on "Approved". Each test pays its
 * own reference: the sandbox is shared, and a reference is paid once per account.
 */
function twoSheets(path: string, reference = 'SH-001'): void {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([HEADER, row(reference, 'Mallory', '999999999999')]), 'Draft');
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([HEADER, row(reference, 'Jane Employee', '000123456789')]), 'Approved');
  writeFileSync(path, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
}

interface Team {
  dir: string;
  cli: (...args: string[]) => ReturnType<typeof runCli>;
  keys: Record<'Alice' | 'Bob' | 'Carol' | 'Dan', NewKeyPair>;
  approve: (plan: string, name: string, keyOf?: string) => ReturnType<typeof runCli>;
  runApproved: (plan: string, ...more: string[]) => ReturnType<typeof runCli>;
  /** The same run refused before anything is sent, by main() in this process: what it refuses is not about a process. */
  refusedRun: (plan: string, ...more: string[]) => ReturnType<typeof runCli>;
  /** A setup step: `plan FILE --out PLAN --no-quote ...more` in this process (the bin's main()). */
  plan: (file: string, out: string, ...more: string[]) => Promise<void>;
  /** A setup step: the approvals of `names` (signed with the key of `keyOf[name]`, else their own), as `approve` stores them. */
  approved: (plan: string, names: string[], keyOf?: Record<string, string>) => Promise<void>;
}

/**
 * A folder with its own state, four listed approvers' keys (Dan among them) and their list. An
 * approval shown, a paying run and a watch run in a real process (cli, approve, runApproved); a run's
 * refusal (refusedRun) and the setup (plan, approved) in this one.
 */
async function team(): Promise<Team> {
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', sb.url, '--rate', '100'];
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  const approvedRun = ['--require-approvals', '2', '--approvers', 'approvers.json', '--yes', ...service];
  const keys = { Alice: newKeyPair(), Bob: newKeyPair(), Carol: newKeyPair(), Dan: newKeyPair() };
  for (const [name, k] of Object.entries(keys)) writeFileSync(join(dir, `${name}.pem`), k.privatePem, { mode: 0o600 });
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify(Object.entries(keys).map(([name, k]) => ({ name, publicKey: k.publicKey }))));
  return {
    dir,
    keys,
    cli: (...args) => cli(...args, ...(['plan', 'run', 'watch'].includes(args[0]!) ? service : [])),
    approve: (plan, name, keyOf = name) =>
      cli('approve', plan, '--as', name, '--key-file', `${keyOf}.pem`, '--approvers', 'approvers.json', '--yes'),
    runApproved: (plan, ...more) => cli('run', '--plan', plan, ...more, ...approvedRun),
    refusedRun: (plan, ...more) => runMain(['run', '--plan', plan, ...more, ...approvedRun], { cwd: dir, env }),
    plan: async (file, out, ...more) => {
      const r = await runMain(['plan', join(dir, file), '--out', join(dir, out), '--no-quote', ...more, ...service], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
    },
    approved: async (plan, names, keyOf = {}) => {
      for (const name of names) await approveAs(join(dir, plan), name, keys[(keyOf[name] ?? name) as keyof typeof keys].privatePem);
    },
  };
}

/** The beneficiaries of every initiate the CLI sent from a state folder: its journals hold each body, written before it leaves. */
function sentTo(state: string): { accountName: string; accountNumber: string }[] {
  return ledgerJournals(state).flatMap((j) =>
    readFileSync(j, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"t":"initiating"'))
      .map(
        (l) =>
          (JSON.parse((JSON.parse(l) as { body: string }).body) as { beneficiary: { accountName: string; accountNumber: string } })
            .beneficiary,
      ),
  );
}

it('a plan of the sheet "Approved" pays its row, never the first sheet\'s: a --sheet naming another is refused, nothing sent', async () => {
  const t = await team();
  twoSheets(join(t.dir, 'two.xlsx'));
  await t.plan('two.xlsx', 'two.plan.json', '--sheet', 'Approved', '--prepared-by', 'Dan');
  expect(JSON.parse(readFileSync(join(t.dir, 'two.plan.json'), 'utf8'))).toMatchObject({ sheet: 'Approved' });
  const a = await t.approve('two.plan.json', 'Alice');
  expect(a.code, a.stderr).toBe(0);
  // what the approver reads before it is written: the sheet, the totals and every payee
  expect(a.stdout).toContain('1 payout (USD 100.00)');
  expect(a.stdout).toContain('two.xlsx, sheet "Approved"');
  expect(a.stdout).toContain('SH-001 | Jane Employee | ********6789 | ACH | USD 100.00');
  await t.approved('two.plan.json', ['Bob']);
  const before = initiates(sb).length;

  const otherSheet = await t.refusedRun('two.plan.json', '--sheet', 'Draft');
  expect(otherSheet.code, otherSheet.stderr).toBe(3);
  expect(otherSheet.stderr).toContain('the plan was made from the sheet "Approved", not "Draft"');
  expect(initiates(sb).length).toBe(before);

  const ok = await t.runApproved('two.plan.json');
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.stdout).toContain('Approvals: 2 valid approvals of 2 required (Alice, Bob)');
  expect(initiates(sb).length).toBe(before + 1);
  expect(sentTo(join(t.dir, 'state'))).toMatchObject([{ accountName: 'Jane Employee', accountNumber: '000123456789' }]);
});

it('the same through `watch` with "requireApprovals": the plan\'s sheet is run, Mallory is never paid', async () => {
  const t = await team();
  const watchDir = join(t.dir, 'watch');
  mkdirSync(join(watchDir, 'inbox'), { recursive: true });
  copyFileSync(join(t.dir, 'approvers.json'), join(watchDir, 'approvers.json'));
  writeFileSync(
    join(watchDir, 'payout-batch.json'),
    JSON.stringify({
      environment: 'sandbox',
      stateDir: 'state',
      settleSeconds: 0,
      requireApprovals: 2,
      approvers: 'approvers.json',
    }),
  );
  twoSheets(join(t.dir, 'pay.xlsx'), 'SH-002');
  await t.plan('pay.xlsx', 'pay.plan.json', '--sheet', 'Approved', '--prepared-by', 'Dan', '--env', 'sandbox');
  await t.approved('pay.plan.json', ['Alice', 'Bob']);
  const before = initiates(sb).length;
  for (const n of ['pay.plan.json', 'pay.plan.json.approvals.json', 'pay.xlsx']) copyFileSync(join(t.dir, n), join(watchDir, 'inbox', n));

  const w = await t.cli('watch', watchDir, '--once', '--json');
  expect(w.code, w.stderr + w.stdout).toBe(0);
  expect(initiates(sb).length).toBe(before + 1);
  expect(sentTo(join(watchDir, 'state'))).toMatchObject([{ accountName: 'Jane Employee', accountNumber: '000123456789' }]);
});

it('a document replaced after the plan was approved: the body is not the signed one, refused, nothing sent', async () => {
  const t = await team();
  const doc = join(t.dir, 'payslip.pdf');
  copyFileSync(join(ROOT, 'samples/documents/invoice-de-c1.pdf'), doc);
  writeFileSync(
    join(t.dir, 'docs.csv'),
    [HEADER, row('DOC-001', 'Jane Employee', '000123456789', doc)].map((r) => r.join(',')).join('\n') + '\n',
  );
  await t.plan('docs.csv', 'docs.plan.json', '--prepared-by', 'Dan');
  await t.approved('docs.plan.json', ['Alice', 'Bob']);
  copyFileSync(join(ROOT, 'samples/documents/invoice-ch-88231.pdf'), doc);
  const before = sb.requestLog().length;

  const r = await t.refusedRun('docs.plan.json');
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toContain('the documents of DOC-001 are not the planned ones');
  expect(sb.requestLog().length).toBe(before); // not one request: no upload, no initiate
});

it('a look-alike maker ("Dаn", Cyrillic а) is refused at plan and approve (exit 2), and a plan naming one is never approved', async () => {
  const t = await team();
  writeFileSync(join(t.dir, 'pay.csv'), [HEADER, row('LA-001', 'Jane Employee', '000123456789')].map((r) => r.join(',')).join('\n') + '\n');
  const lookalike = await t.cli('plan', 'pay.csv', '--out', 'pay.plan.json', '--prepared-by', 'Dаn', '--no-quote');
  expect(lookalike.code).toBe(2);
  expect(lookalike.stderr).toContain('the name mixes the Latin and Cyrillic scripts');
  expect(existsSync(join(t.dir, 'pay.plan.json'))).toBe(false);
  // (in this process: the same entry point, the same exit code)
  const asLookalike = await runMain(['approve', 'pay.plan.json', '--as', 'Dаn', '--key-file', 'Dan.pem', '--yes'], {
    cwd: t.dir,
    env: cleanEnv(),
  });
  expect(asLookalike.code).toBe(2);
  expect(asLookalike.stderr).toContain('the name mixes the Latin and Cyrillic scripts');

  // A plan that records such a maker (made by hand, or by an older version), approved by Dan and Alice.
  await t.plan('pay.csv', 'pay.plan.json', '--prepared-by', 'Dan');
  const path = join(t.dir, 'pay.plan.json');
  writeFileSync(path, readFileSync(path, 'utf8').replace('"preparedBy": "Dan"', '"preparedBy": "Dаn"'));
  await t.approved('pay.plan.json', ['Dan', 'Alice']);
  const before = sb.requestLog().length;
  const r = await t.refusedRun('pay.plan.json');
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`the plan's maker "Dаn" cannot be told from an approver: the name mixes the Latin and Cyrillic scripts`);
  expect(sb.requestLog().length).toBe(before);
});

it('an edited fingerprint makes the approval invalid, in the report and in the gate', async () => {
  const t = await team();
  writeFileSync(join(t.dir, 'fp.csv'), [HEADER, row('FP-001', 'Jane Employee', '000123456789')].map((r) => r.join(',')).join('\n') + '\n');
  await t.plan('fp.csv', 'fp.plan.json', '--prepared-by', 'Eve');
  // Alice's name signed with Dan's key; Bob's and Carol's own approvals.
  await t.approved('fp.plan.json', ['Alice', 'Bob', 'Carol'], { Alice: 'Dan' });
  const file = join(t.dir, 'fp.plan.json.approvals.json');
  const approvals = JSON.parse(readFileSync(file, 'utf8')) as { name: string; publicKeyFingerprint: string }[];
  approvals[0]!.publicKeyFingerprint = t.keys.Alice.fingerprint; // the lie
  approvals[1]!.publicKeyFingerprint = t.keys.Carol.fingerprint; // Bob's key is his own, its fingerprint edited
  writeFileSync(file, JSON.stringify(approvals, null, 2));

  const report = await runMain(['report', join(t.dir, 'fp.plan.json')], { cwd: t.dir, env: cleanEnv() });
  expect(report.code, report.stderr).toBe(0);
  const html = readFileSync(join(t.dir, 'fp.plan.html'), 'utf8');
  const alice = /<tr data-approver="Alice" data-valid="(\w+)">.*?data-field="fingerprint" class="mono">(\w+)</.exec(html);
  expect(alice?.slice(1)).toEqual(['false', t.keys.Dan.fingerprint]);
  expect(html).toMatch(/<tr data-approver="Bob" data-valid="false">/);
  expect(html).toMatch(/<tr data-approver="Carol" data-valid="true">/);

  const before = sb.requestLog().length;
  const r = await t.refusedRun('fp.plan.json');
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(
    `1 valid approval of 2 required (Carol): Alice: its stored fingerprint ${t.keys.Alice.fingerprint} is not that of its key (${t.keys.Dan.fingerprint})`,
  );
  expect(sb.requestLog().length).toBe(before);
});
