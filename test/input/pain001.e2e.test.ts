// An ERP's pain.001 through the real CLI against the sandbox over HTTP, as .03 and as .09 (run in
// both sandbox readings by PB_SANDBOX_SHAPES): validate, plan, approve, run --plan, status,
// retry, reconcile; every row paid once, the results carry the message, and the same payments
// re-sent by the ERP pay nothing. A payment information dated later is not sent before its day.
// The runs that pay are CLI processes; validate, plan, status, retry, reconcile run main() here.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { loadPlan, payloadText, planPayload } from '../../src/approvals/payload.ts';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/results.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { PAIN001_VERSIONS, type Pain001Version } from '../../src/spec/iso20022.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, ROOT } from '../engine/helpers.ts';
import { setStatus } from '../ops/helpers.ts';
import { pain001, SAMPLES, sampleRows } from './pain001-files.ts';

const dirs = tempDirs('pb-pain001-e2e-');
const sandboxes: LocalSandbox[] = [];
afterAll(async () => {
  for (const s of sandboxes) await s.close();
  await dirs.remove();
});

async function setup() {
  const sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  sandboxes.push(sb);
  const dir = await dirs.make();
  cpSync(join(ROOT, 'samples', 'documents'), join(dir, 'documents'), { recursive: true });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', sb.url, '--rate', '100'];
  const cli = (...args: string[]) => runCli([...args, ...service], { cwd: dir, env });
  /** The same in this process (main()), for the steps that are not about a process: validate, plan, status, a set-up run, a refusal, a retry. */
  const inProcess = (...args: string[]) => runMain([...args, ...service], { cwd: dir, env });
  const offline = (...args: string[]) => runMain(args, { cwd: dir, env });
  return { sb, dir, cli, inProcess, offline };
}

describe.each(PAIN001_VERSIONS)('%s from the ERP', (version: Pain001Version) => {
  it('validate, plan, approve, run, status, retry, reconcile: every row paid once; a re-send pays nothing', async () => {
    const { sb, dir, cli, inProcess, offline } = await setup();
    cpSync(join(ROOT, SAMPLES[version]), join(dir, 'payroll.xml'));
    const docs = ['--documents', 'documents'];

    const validated = await offline('validate', 'payroll.xml', ...docs);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    expect(validated.stdout).toContain(`ISO 20022 ${version}, message ACME-PAYROLL-2025-01`);

    const planned = await inProcess('plan', 'payroll.xml', ...docs, '--out', 'payroll.plan.json', '--prepared-by', 'Dan');
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    // The message the ERP sent is shown in the plan and recorded for approvers (payloadText prints it).
    expect(planned.stdout).toMatch(new RegExp(`message +ISO 20022 ${version.replace(/\./g, '\\.')} ACME-PAYROLL-2025-01`));
    const planFile = JSON.parse(readFileSync(join(dir, 'payroll.plan.json'), 'utf8')) as { message?: unknown };
    expect(planFile.message).toEqual({ id: 'ACME-PAYROLL-2025-01', version });
    expect(payloadText(planPayload(loadPlan(join(dir, 'payroll.plan.json'))), 0)).toContain(
      `ISO 20022 ${version}, message ACME-PAYROLL-2025-01`,
    );
    const approver = newKeyPair();
    writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: approver.publicKey }]));
    await approveAs(join(dir, 'payroll.plan.json'), 'Alice', approver.privatePem);
    const run = await cli(
      'run',
      '--plan',
      'payroll.plan.json', // (no --documents: the plan recorded the folder)
      '--require-approvals',
      '1',
      '--approvers',
      'approvers.json',
      '--yes',
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(52);

    // The results beside the file, as CSV, one row per transaction with the message carried.
    const results = join(dir, 'payroll.results.csv');
    const table = await readResults(results);
    expect(table.rows).toHaveLength(52);
    const byRef = new Map(sampleRows().map((r) => [r.reference, r]));
    for (const r of table.rows) {
      expect(r.cells).toMatchObject({ MsgId: 'ACME-PAYROLL-2025-01', MsgNmId: version, ReqdExctnDt: '2025-01-31' });
      expect(r.cells.InstrId).toMatch(/^INSTR-\d{4}$/);
      expect(r.cells.sourceAmount).toBe(byRef.get(r.cells.reference)!.sourceAmount);
      expect(r.result.status).toBe('PENDING');
    }
    const amount = (ccy: string, a: string | number) => `${ccy} ${new Dec(a).toFixed(2)}`;
    const paidAmounts = (await allPayouts(sb)).map((p) => amount(p.sourceCurrency, p.sourceAmount)).sort();
    expect(paidAmounts).toEqual(
      sampleRows()
        .map((r) => amount(r.sourceCurrency!, r.sourceAmount!))
        .sort(),
    );

    for (const r of table.rows) {
      await setStatus(sb, r.result.payoutId!, 'PROCESSING');
      await setStatus(sb, r.result.payoutId!, 'SUCCESSFUL');
    }
    const status = await inProcess('status', 'payroll.results.csv');
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const retry = await inProcess('retry', 'payroll.results.csv', '--yes');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    const reconcile = await inProcess('reconcile', 'payroll.results.csv');
    expect(reconcile.code, reconcile.stdout + reconcile.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(52);

    // The ERP sends the same payments again, in a new message: nothing is paid twice.
    writeFileSync(
      join(dir, 'payroll-again.xml'),
      readFileSync(join(dir, 'payroll.xml'), 'utf8').replace('ACME-PAYROLL-2025-01', 'ACME-RESENT'),
    );
    const again = await inProcess('run', 'payroll-again.xml', ...docs, '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(3);
    expect(again.stderr).toMatch(/already sent by another batch/);
    expect(initiates(sb)).toHaveLength(52);
    expect(await allPayouts(sb)).toHaveLength(52);
  }, 300_000); // 52 rows through seven commands, on a shared machine
});

it('a payment information dated later: plan says so, run sends the others and leaves its rows NOT_SENT (NOT_DUE)', async () => {
  const { sb, dir, cli, inProcess } = await setup();
  const rows = sampleRows().filter((r) => r.method === 'SEPA' && r.sourceCurrency === 'EUR');
  const later = pain001(rows.slice(0, 3), 'pain.001.001.09', { msgId: 'LATER' }).replaceAll('<Dt>2025-01-31</Dt>', '<Dt>2099-12-31</Dt>');
  const now = pain001(rows.slice(3), 'pain.001.001.03', { msgId: 'NOW' });
  writeFileSync(join(dir, 'later.xml'), later);
  writeFileSync(join(dir, 'now.xml'), now);
  const planned = await inProcess('plan', 'later.xml', '--documents', 'documents');
  expect(planned.stdout + planned.stderr).toContain('3 rows are not due until 2099-12-31 (ReqdExctnDt, a UTC day)');
  const run = await cli('run', 'later.xml', '--documents', 'documents', '--yes');
  expect(run.code, run.stdout + run.stderr).toBe(5); // not finished: run it again on its day
  expect(initiates(sb)).toHaveLength(0);
  const table = await readResults(join(dir, 'later.results.csv'));
  expect(table.rows.map((r) => [r.result.status, r.result.errorCode])).toEqual(rows.slice(0, 3).map(() => ['NOT_SENT', 'NOT_DUE']));
  expect(run.stdout + run.stderr).toContain('not due until 2099-12-31');
  const due = await inProcess('run', 'now.xml', '--documents', 'documents', '--yes');
  expect(due.code, due.stdout + due.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(rows.length - 3);
});

it("a retry never sends a transfer the pain.001's reader found invalid: the row carries why", async () => {
  const { sb, dir, inProcess } = await setup();
  const [cred, none, usd, agreed, grouped] = sampleRows().filter((r) => r.method === 'SEPA' && r.sourceCurrency === 'EUR');
  const paid = sampleRows().find((r) => r.method === 'NIP')!; // (a row sent: a retry is of a batch that sent some)
  const xml = pain001([cred!, none!, usd!, agreed!, grouped!, paid], 'pain.001.001.09')
    .replace(/(<EndToEndId>PAYROLL-2025-01-032<\/EndToEndId>\s*<\/PmtId>\s*<Amt>[^]*?<\/Amt>)/, '$1<ChrgBr>CRED</ChrgBr>')
    .replace(`<EndToEndId>${none!.reference}<`, '<EndToEndId>NOTPROVIDED<')
    .replace(`<InstdAmt Ccy="EUR">${usd!.sourceAmount}<`, `<InstdAmt Ccy="USD">${usd!.sourceAmount}<`)
    .replace(
      new RegExp(`(${agreed!.reference}</EndToEndId>\\s*</PmtId>\\s*<Amt>[^]*?</Amt>)`),
      '$1<XchgRateInf><RateTp>AGRD</RateTp></XchgRateInf>',
    )
    .replace(`>${grouped!.sourceAmount}<`, `>${Number(grouped!.sourceAmount).toLocaleString('en-US', { minimumFractionDigits: 2 })}<`)
    .replace(/<CtrlSum>[^<]*<\/CtrlSum>/g, ''); // (the schema's 0..1: "1,500.00" is no xs:decimal to add up)
  expect(cred!.reference).toBe('PAYROLL-2025-01-032');
  writeFileSync(join(dir, 'erp.xml'), xml);
  const run = await inProcess('run', 'erp.xml', '--documents', 'documents', '--yes');
  expect(initiates(sb), run.stdout + run.stderr).toHaveLength(1);
  const retry = await inProcess('retry', 'erp.results.csv', '--yes');
  expect(initiates(sb), retry.stdout + retry.stderr).toHaveLength(1);
  const table = await readResults(join(dir, 'erp.results.csv'));
  expect(table.rows.map((r) => [r.result.status, r.result.errorCode])).toEqual([
    ['INVALID', 'UNMAPPABLE_TRANSACTION'],
    ['INVALID', 'UNMAPPABLE_TRANSACTION'],
    ['INVALID', 'UNMAPPABLE_TRANSACTION'],
    ['INVALID', 'UNMAPPABLE_TRANSACTION'],
    ['INVALID', 'INVALID_AMOUNT'],
    ['PENDING', undefined],
  ]);
  expect(table.rows.map((r) => r.result.errorMessage)).toEqual([
    expect.stringContaining('the payee is to bear (CRED) or share (SHAR) the charges'),
    expect.stringContaining('EndToEndId NOTPROVIDED'),
    expect.stringContaining('the amount is in USD'),
    expect.stringContaining('at its own rate'),
    expect.stringContaining('is not an ISO 20022 amount'),
    undefined,
  ]);
});

it('a transfer on behalf of another payer (UltmtDbtr) is planned with its address as the remitter address', async () => {
  const { dir, inProcess } = await setup();
  const paid = sampleRows().find((r) => r.method === 'NIP')!;
  const payer = '<UltmtDbtr><Nm>Client Holdings SA</Nm><PstlAdr><TwnNm>Geneva</TwnNm><Ctry>CH</Ctry></PstlAdr></UltmtDbtr>';
  writeFileSync(join(dir, 'erp.xml'), pain001([paid], 'pain.001.001.09').replace('<ChrgBr>', `${payer}<ChrgBr>`));
  const planned = await inProcess('plan', 'erp.xml', '--documents', 'documents', '--out', 'erp.plan.json', '--prepared-by', 'Dan');
  expect(planned.code, planned.stdout + planned.stderr).toBe(0);
  // (the body signed is the body sent: verifyPlannedRows)
  expect(loadPlan(join(dir, 'erp.plan.json')).plan.rows.map((r) => r.body.remitterAddress)).toEqual(['Geneva, CH']);
});
