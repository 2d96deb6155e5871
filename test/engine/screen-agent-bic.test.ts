// The payee's bank a file names (a swiftCode column, a pain.001's CdtrAgt BIC) is screened even when
// the row's method does not send it (NIP, ACH, FASTER_PAYMENTS...): the money goes to that bank.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBatch } from '../../src/engine/prepare.ts';
import { payeeDigest, screenRows } from '../../src/engine/screen-batch.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { ROOT } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-agent-bic-'));
const LIST = join(dir, 'banks.csv');
writeFileSync(LIST, 'id,name,bic\nB1,LISTED BANK,ZEIBNGLAXXX\n');

/** Row 002 of the sample (NIP, clean), its bank's BIC `bic`, as a CSV and as a pain.001. */
async function batches(bic: string) {
  const [header, , row] = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8').split(/\r?\n/);
  const cells = row!.split(',');
  cells[header!.split(',').indexOf('swiftCode')] = bic;
  cells[header!.split(',').indexOf('documents')] = join(ROOT, 'samples/documents/payslip-2025-01-NG002.pdf');
  writeFileSync(join(dir, 'b.csv'), `${header}\n${cells.join(',')}\n`);
  const rows = sampleRows().filter((r) => r.reference === 'PAYROLL-2025-01-002');
  writeFileSync(join(dir, 'b.xml'), pain001([{ ...rows[0]!, swiftCode: bic }], 'pain.001.001.09'));
  const docs = { documents: join(ROOT, 'samples/documents') };
  return [await loadBatch(join(dir, 'b.csv'), {}), await loadBatch(join(dir, 'b.xml'), docs)];
}

describe("the payee's bank the file names, not sent by the method", () => {
  it('is screened: a listed bank holds the row', async () => {
    for (const b of await batches('ZEIBNGLA')) {
      const p = [...b.rows][0]!.payout!;
      expect([p.method, p.beneficiary.swiftCode]).toEqual(['NIP', undefined]);
      const s = await screenRows(b.rows, { lists: [LIST] });
      expect(
        [...s.held.values()].flatMap((h) => h.hits.map((x) => [x.entryId, x.on])),
        b.format,
      ).toEqual([['B1', 'bic']]);
    }
  });

  it('is part of the payee a clearance names', async () => {
    const [a, b] = [await batches('ZEIBNGLA'), await batches('GTBINGLA')];
    for (const i of [0, 1]) expect(payeeDigest([...a[i]!.rows][0]!.payout!)).not.toBe(payeeDigest([...b[i]!.rows][0]!.payout!));
  });
});
