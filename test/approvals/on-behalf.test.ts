// A pain.001 transfer made on behalf of another payer (UltmtDbtr) is sent with that payer's address
// as the remitterAddress (spec §2): approvers read it before they sign, and a plan naming another is not run.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPlan, payloadText, planPayload } from '../../src/approvals/payload.ts';
import { planBatch } from '../../src/engine/plan-command.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { writePlanReport } from '../../src/report/write-report.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs } from '../engine/helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-on-behalf-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a transfer on behalf of another payer (UltmtDbtr)', () => {
  it('shows approvers whom it is sent for, only on its row; run --plan refuses a plan naming another remitter address', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const rows = sampleRows().filter((r) => ['PAYROLL-2025-01-002', 'PAYROLL-2025-01-003'].includes(r.reference!));
    const payer = '<UltmtDbtr><Nm>Client Holdings SA</Nm><PstlAdr><TwnNm>Geneva</TwnNm><Ctry>CH</Ctry></PstlAdr></UltmtDbtr>';
    const file = join(dir, 'erp.xml');
    await writeFile(file, pain001(rows, 'pain.001.001.09').replace('<Cdtr>', `${payer}<Cdtr>`));
    const out = join(dir, 'plan.json');
    const flags = { mergeDocuments: false, allowPartial: false, enablePairs: false, quote: false };
    const planned = await planBatch({ file, documents: join(ROOT, 'samples/documents'), conn: connectionTo(sb), out, ...flags });

    const lines = payloadText(planPayload(loadPlan(out))).split('\n  ');
    expect(lines.find((l) => l.startsWith('PAYROLL-2025-01-002 |'))).toMatch(
      / \| NGN 480,000\.00 \| on behalf of Client Holdings SA at Geneva, CH$/,
    );
    // (a row without another payer reads as before)
    expect(lines.find((l) => l.startsWith('PAYROLL-2025-01-003 |'))).toMatch(/ \| NIP \| NGN 520,000\.00$/);
    // (and the report `approve` points to for every payee: its table and the CSV beside it)
    const report = await writePlanReport(planned.plan, { environment: 'local', planFile: planned.planFile, planPath: out });
    const html = await readFile(report, 'utf8');
    const on = '<span data-field="on-behalf">on behalf of Client Holdings SA at Geneva, CH</span>';
    expect(/data-field="reference">PAYROLL-2025-01-002<.*?<\/tr>/.exec(html)![0]).toContain(on);
    expect(html.split(on)).toHaveLength(2);
    const csv = (await readFile(report.replace(/\.html$/, '.payees.csv'), 'utf8')).trim().split('\r\n');
    expect(csv[0]).toMatch(/,onBehalf$/);
    expect(csv[1]).toMatch(/^1,PAYROLL-2025-01-002,.*,"on behalf of Client Holdings SA at Geneva, CH"$/);
    expect(csv[2]).toMatch(/^2,PAYROLL-2025-01-003,.*,520000\.00,$/);

    const signed = await readFile(out, 'utf8');
    for (const edit of [{ remitterAddress: 'Zurich, CH' }, { ultimateDebtor: 'Other Holdings SA' }]) {
      const plan = JSON.parse(signed) as { rows: { body: object; ultimateDebtor?: string }[] };
      if ('remitterAddress' in edit) Object.assign(plan.rows[0]!.body, edit);
      else Object.assign(plan.rows[0]!, edit);
      await writeFile(out, JSON.stringify(plan));
      await expect(runBatch({ planFile: out, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) })).rejects.toThrow(
        /row \d+ does not give the planned body of PAYROLL-2025-01-002/,
      );
    }
    expect(await allPayouts(sb)).toHaveLength(0);
  });
});
