// The ultimate creditor of a pain.001 transfer (UltmtCdtr: whom the money is for, behind the
// creditor paid) is screened as the payee is, bound by the clearances and plans that cover its row.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBatch } from '../../src/engine/prepare.ts';
import { payeeDigest, screenRows, type Clearance } from '../../src/engine/screen-batch.ts';
import { payeeOf, verifyPlannedRows, type PlanFile } from '../../src/engine/plan-file.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { ROOT } from './helpers.ts';

const LIST = join(ROOT, 'samples/sanctions/sdn.csv');
const DOCS = join(ROOT, 'samples/documents');
const dir = mkdtempSync(join(tmpdir(), 'pb-ultmt-'));

/** A pain.001 of the sample's rows 002 and 003 (both clean), row 002 for the ultimate creditor `name` and/or `bic` (none: none). */
async function batch(name?: string, file = 'p.xml', bic?: string) {
  const rows = sampleRows().filter((r) => ['PAYROLL-2025-01-002', 'PAYROLL-2025-01-003'].includes(r.reference!));
  const id = bic ? `<Id><OrgId><AnyBIC>${bic}</AnyBIC></OrgId></Id>` : '';
  const ultmt =
    name || bic
      ? `</CdtrAcct><UltmtCdtr>${name ? `<Nm>${name}</Nm><PstlAdr><Ctry>NG</Ctry></PstlAdr>` : ''}${id}</UltmtCdtr>`
      : '</CdtrAcct>';
  writeFileSync(join(dir, file), pain001(rows, 'pain.001.001.09').replace('</CdtrAcct>', ultmt));
  const b = await loadBatch(join(dir, file), { documents: DOCS });
  expect([...b.rows].every((r) => r.payout)).toBe(true);
  return b;
}

describe('the ultimate creditor (UltmtCdtr)', () => {
  it('listed behind a clean creditor, holds the row, naming that party', async () => {
    expect((await screenRows((await batch()).rows, { lists: [LIST] })).held.size).toBe(0);
    const s = await screenRows((await batch('Adaeze Okafor')).rows, { lists: [LIST] });
    expect([...s.held.keys()]).toEqual([1]);
    expect(s.held.get(1)!.hits).toEqual([expect.objectContaining({ entryId: '90001', why: expect.stringContaining('ultimate creditor') })]);
  });

  it('given by a listed bank identifier (AnyBIC), with or without a name, holds the row; a clearance names it', async () => {
    for (const name of [undefined, 'Someone Clean']) {
      const s = await screenRows((await batch(name, 'bic.xml', 'BKCHCNBJXXX')).rows, { lists: [LIST] });
      expect([...s.held.keys()], name).toEqual([1]);
      expect(s.held.get(1)!.hits).toEqual([
        expect.objectContaining({
          entryId: '90005',
          on: 'bic',
          why: expect.stringMatching(/: the ultimate creditor's BIC BKCHCNBJXXX is listed$/),
        }),
      ]);
    }
    // (and a clearance names it)
    const digest = async (bic: string) => payeeDigest((await batch(undefined, 'd.xml', bic)).rows.at(0)!.payout!);
    expect(await digest('BKCHCNBJXXX')).not.toBe(await digest('DEUTDEFFXXX'));
  });

  it('a clearance of its hit names that ultimate creditor: another one behind the same payee is held again', async () => {
    const b = await batch('Adaeze Okafor');
    const hit = (await screenRows(b.rows, { lists: [LIST] })).held.get(1)!.hits[0]!;
    const payout = b.rows.at(0)!.payout!;
    const clearance: Clearance = {
      ...{ id: 'c1', reference: payout.reference, payee: payeeDigest(payout), list: 'ofac-sdn', entryId: '90001' },
      ...{ entryName: hit.entryName, entryDigest: hit.entryDigest, reason: 'another person', signedBy: ['Alice'] },
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    };
    expect([...(await screenRows(b.rows, { lists: [LIST], clearances: [clearance] })).cleared.keys()]).toEqual([1]);
    const other = await batch('OKAFOR Adaeze', 'other.xml');
    expect([...(await screenRows(other.rows, { lists: [LIST], clearances: [clearance] })).held.keys()]).toEqual([1]);
  });

  it('is part of the row approvers sign: shown to them, and a run reading another one sends nothing', async () => {
    const b = await batch('Adaeze Okafor');
    const p = b.rows.at(0)!.payout!;
    const row = { rowNumber: 1, reference: p.reference, sourceCurrency: p.sourceCurrency, sourceAmount: p.sourceAmount.toFixed() };
    const documents = p.documents.map((file) => ({ file, sha256: b.documents!.get(file)!.sha256 }));
    const signed = { ...row, body: initiateBody(p), documents, ultimateCreditor: 'Adaeze Okafor' };
    expect(payeeOf(signed)).toMatchObject({ ultimateCreditor: 'Adaeze Okafor' });
    const plan = { file: b.file, fileSha256: b.identity.fileSha256, rows: [{ ...signed, ultimateCreditor: 'Someone Else' }] };
    expect(() => verifyPlannedRows(plan as unknown as PlanFile, b, undefined)).toThrow(/does not give the planned/);
    plan.rows[0]!.ultimateCreditor = 'Adaeze Okafor';
    expect(() => verifyPlannedRows(plan as unknown as PlanFile, b, undefined)).not.toThrow();
  });
});
