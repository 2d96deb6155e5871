// The payer a pain.001 transfer is made on behalf of (UltmtDbtr) is screened as a second party of its
// row: a clearance binds the parties it was made for, so one of the payee never clears a hit of the
// payer's, nor one of a payer another payer's. (Held and never sent: test/screening-e2e/flow.e2e.test.ts.)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBatch } from '../../src/engine/prepare.ts';
import { payeeDigest, screenRows, type Clearance } from '../../src/engine/screen-batch.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { ROOT } from './helpers.ts';

const LIST = join(ROOT, 'samples/sanctions/sdn.csv');
const dir = mkdtempSync(join(tmpdir(), 'pb-ultmt-dbtr-'));
/** The why of a hit on the payer `name`. */
const onBehalf = (name: string) => expect.stringMatching(new RegExp(`^the payer it is sent on behalf of \\(UltmtDbtr\\) "${name}": `));

/** Row 1 of a pain.001 of the sample's row 002 (clean), paid to `payee` (default its own), on behalf of `payer` (none: none). */
async function row(o: { payee?: string; payer?: string; payerBic?: string }, file: string) {
  const rows = sampleRows()
    .filter((r) => r.reference === 'PAYROLL-2025-01-002')
    .map((r) => ({ ...r, accountName: o.payee ?? r.accountName! }));
  const [nm, id] = [o.payer && `<Nm>${o.payer}</Nm>`, o.payerBic && `<Id><OrgId><AnyBIC>${o.payerBic}</AnyBIC></OrgId></Id>`];
  const payer = nm || id ? `<UltmtDbtr>${nm ?? ''}<PstlAdr><TwnNm>Lagos</TwnNm><Ctry>NG</Ctry></PstlAdr>${id ?? ''}</UltmtDbtr>` : '';
  writeFileSync(join(dir, file), pain001(rows, 'pain.001.001.09').replace('<Cdtr>', `${payer}<Cdtr>`));
  const b = await loadBatch(join(dir, file), { documents: join(ROOT, 'samples/documents') });
  expect(b.rows.at(0)!.payout).toBeDefined();
  return b.rows;
}

const screen = async (rows: Awaited<ReturnType<typeof row>>, clearances: Clearance[] = []) => {
  const s = await screenRows(rows, { lists: [LIST], clearances });
  return { held: s.held.get(1)?.hits.map((h) => h.why) ?? [], cleared: s.cleared.has(1) };
};

/** A clearance, made and approved, of the row's hits on the list entry 90001 ("OKAFOR, Adaeze"). */
async function clearance(rows: Awaited<ReturnType<typeof row>>): Promise<Clearance> {
  const hit = (await screenRows(rows, { lists: [LIST] })).held.get(1)!.hits[0]!;
  const p = rows.at(0)!.payout!;
  return {
    ...{ id: 'c1', reference: p.reference, payee: payeeDigest(p), list: 'ofac-sdn', entryId: hit.entryId, entryName: hit.entryName },
    ...{ entryDigest: hit.entryDigest, reason: 'another person', signedBy: ['Alice'] },
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  };
}

describe('the payer a transfer is made on behalf of (UltmtDbtr)', () => {
  it('listed, to a clean payee: the row is held, the hit naming that payer', async () => {
    expect(await screen(await row({}, 'clean.xml'))).toEqual({ held: [], cleared: false });
    expect(await screen(await row({ payer: 'Adaeze Okafor' }, 'listed.xml'))).toEqual({
      held: [onBehalf('Adaeze Okafor')],
      cleared: false,
    });
  });

  it('given by a listed bank identifier (AnyBIC), with or without a name, holds the row on that BIC, as an ultimate creditor is', async () => {
    for (const payer of [undefined, 'Someone Clean']) {
      const held = (await screenRows(await row({ payer, payerBic: 'BKCHCNBJXXX' }, 'bic.xml'), { lists: [LIST] })).held.get(1)?.hits;
      expect(held, payer).toEqual([
        expect.objectContaining({
          entryId: '90005',
          on: 'bic',
          why: expect.stringMatching(/\(UltmtDbtr\).*: the payer's BIC BKCHCNBJXXX is listed$/),
        }),
      ]);
    }
    // (and a clearance names it)
    const digest = async (bic: string) => payeeDigest((await row({ payerBic: bic }, 'd.xml')).at(0)!.payout!);
    expect(await digest('BKCHCNBJXXX')).not.toBe(await digest('DEUTDEFFXXX'));
  });

  it("a clearance of the payee's hit does not clear the same entry's hit on a payer it is then sent on behalf of", async () => {
    const payee = await row({ payee: 'Adaeze Okafor' }, 'payee.xml');
    const c = await clearance(payee);
    expect(await screen(payee, [c])).toEqual({ held: [], cleared: true });
    const both = await screen(await row({ payee: 'Adaeze Okafor', payer: 'OKAFOR Adaeze' }, 'both.xml'), [c]);
    expect(both.held).toEqual([expect.not.stringContaining('UltmtDbtr'), onBehalf('OKAFOR Adaeze')]);
  });

  it("a clearance of the payer's hit clears that payer only: another payer, or the payee, of the same entry is held", async () => {
    const payer = await row({ payer: 'Adaeze Okafor' }, 'payer.xml');
    const c = await clearance(payer);
    expect(await screen(payer, [c])).toEqual({ held: [], cleared: true });
    const other = await screen(await row({ payer: 'OKAFOR Adaeze' }, 'other.xml'), [c]);
    expect(other.held).toEqual([onBehalf('OKAFOR Adaeze')]);
    const payee = await screen(await row({ payee: 'Adaeze Okafor' }, 'to-payee.xml'), [c]);
    expect(payee.held).toEqual([expect.not.stringContaining('UltmtDbtr')]);
  });
});
