// engine/screen-batch.ts: which rows the screening holds, and what a clearance covers (issue 42).
import { copyFileSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { payeeDigest, payeeOf, screenRows, type Clearance } from '../../src/engine/screen-batch.ts';
import { BatchUnusable } from '../../src/engine/engine-errors.ts';
import type { EngineRow } from '../../src/engine/prepare.ts';
import { screeningChanged } from '../../src/engine/plan-file.ts';
import { ROOT, payoutRow } from './helpers.ts';

const LIST = join(ROOT, 'samples/sanctions/sdn.csv');

/** A valid row paying `name` (the account of payoutRow). */
const rowOf = (rowNumber: number, name: string) => {
  const payout = payoutRow(rowNumber);
  payout.reference = `REF-${rowNumber}`;
  payout.beneficiary = { ...payout.beneficiary, accountName: name };
  return { rowNumber, payout, problems: [], cells: {} } as unknown as EngineRow;
};

describe('screenRows', () => {
  const rows = [rowOf(2, 'Adaeze Okafor'), rowOf(3, 'John Smith')];
  const clearanceFor = (over: Partial<Clearance> = {}): Clearance => ({
    id: 'c1',
    reference: 'REF-2',
    payee: payeeDigest(rows[0]!.payout!),
    list: 'ofac-sdn',
    entryId: '90001',
    entryName: 'OKAFOR, Adaeze',
    entryDigest: '', // (the hit's, as the test reads it)
    reason: 'another person',
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    signedBy: ['Alice'],
    ...over,
  });

  it('holds a listed payee and screens every valid row', async () => {
    const s = await screenRows(rows, { lists: [LIST] });
    expect(s.screened).toBe(2);
    expect([...s.held.keys()]).toEqual([2]);
    expect(s.held.get(2)!.hits[0]).toMatchObject({ entryId: '90001', band: 'hit' });
  });

  it('lets a row go only under a clearance of that payee, that entry as it read, not expired', async () => {
    const { entryDigest } = (await screenRows(rows, { lists: [LIST] })).held.get(2)!.hits[0]!;
    expect([...(await screenRows(rows, { lists: [LIST], clearances: [clearanceFor({ entryDigest })] })).cleared.keys()]).toEqual([2]);
    for (const over of [
      { entryName: 'OKAFOR, Adaeze Chioma' }, // the entry changed since
      { entryDigest: 'f'.repeat(64) }, // its aliases or identifiers changed since
      { entryId: '90006' }, // another entry
      { payee: payeeDigest({ ...rows[0]!.payout!, beneficiary: { ...rows[0]!.payout!.beneficiary, accountNumber: '99999999' } }) }, // another account
      { reference: 'REF-3' },
      { expiresAt: new Date(Date.now() - 1000).toISOString() },
    ]) {
      const s = await screenRows(rows, { lists: [LIST], clearances: [clearanceFor({ entryDigest, ...over })] });
      expect([...s.held.keys()], JSON.stringify(over)).toEqual([2]);
      expect(s.cleared.size).toBe(0);
    }
  });

  it("a clearance holds no more once its list entry changed: a name cleared does not clear the payee's account listed since", async () => {
    const list = join(mkdtempSync(join(tmpdir(), 'pb-screen-entry-')), 'own.csv');
    const row = rowOf(2, 'Adaeze Okafor');
    row.payout!.beneficiary = { ...row.payout!.beneficiary, accountNumber: '12345678' };
    writeFileSync(list, 'id,name,account\nW1,OKAFOR Adaeze,\n');
    const hit = (await screenRows([row], { lists: [list] })).held.get(2)!.hits[0]!;
    const clearance = clearanceFor({
      ...{ list: 'plain', entryId: 'W1', entryName: 'OKAFOR Adaeze', entryDigest: hit.entryDigest },
      payee: payeeDigest(row.payout!),
    });
    expect([...(await screenRows([row], { lists: [list], clearances: [clearance] })).cleared.keys()]).toEqual([2]);
    writeFileSync(list, 'id,name,account\nW1,OKAFOR Adaeze,12-345-678\n');
    const s = await screenRows([row], { lists: [list], clearances: [clearance] });
    expect([...s.held.keys()]).toEqual([2]);
    expect(s.held.get(2)!.hits.map((h) => h.on)).toEqual(['account', 'name']);
  });

  it('binds a clearance to where the money goes: another bank code, sort code or wallet of the payee voids it', async () => {
    const row = rowOf(2, 'Adaeze Okafor');
    row.payout!.beneficiary = { ...row.payout!.beneficiary, accountNumber: '0123456785', bankCode: '058' };
    const { entryDigest } = (await screenRows([row], { lists: [LIST] })).held.get(2)!.hits[0]!;
    const clearance = clearanceFor({ entryDigest, payee: payeeDigest(row.payout!) });
    expect([...(await screenRows([row], { lists: [LIST], clearances: [clearance] })).cleared.keys()]).toEqual([2]);
    for (const other of [{ bankCode: '044' }, { sortCode: '200000' }, { alipayId: 'someone-else' }]) {
      const moved = { ...row, payout: { ...row.payout!, beneficiary: { ...row.payout!.beneficiary, ...other } } };
      const s = await screenRows([moved], { lists: [LIST], clearances: [clearance] });
      expect([...s.held.keys()], JSON.stringify(other)).toEqual([2]);
    }
  });

  it('under a maximum age: refuses a list older than it, and no list at all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-screen-age-'));
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) {
      copyFileSync(join(ROOT, 'samples/sanctions', f), join(dir, f));
      utimesSync(join(dir, f), new Date(Date.now() - 2 * 86_400_000), new Date(Date.now() - 2 * 86_400_000));
    }
    expect((await screenRows(rows, { lists: [join(dir, 'sdn.csv')], maxAgeMs: 86_400_000 })).refused).toEqual([
      expect.stringContaining('older than the 24h'),
    ]);
    // (a list written at 23:59 yesterday is 1 minute old past midnight, not a day: its age counts from its time, not its date)
    const fresh = mkdtempSync(join(tmpdir(), 'pb-screen-fresh-'));
    const lastMinuteOfYesterday = new Date(new Date().setUTCHours(0, 0, 0, 0) - 60_000);
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) {
      copyFileSync(join(ROOT, 'samples/sanctions', f), join(fresh, f));
      utimesSync(join(fresh, f), lastMinuteOfYesterday, lastMinuteOfYesterday);
    }
    const age = Date.now() - lastMinuteOfYesterday.getTime();
    expect((await screenRows(rows, { lists: [join(fresh, 'sdn.csv')], maxAgeMs: age + 3_600_000 })).refused).toEqual([]);
    expect((await screenRows(rows, { lists: [], maxAgeMs: 86_400_000 })).refused).toEqual([
      expect.stringContaining('give --sanctions-list'),
    ]);
  });

  it('refuses a list it cannot read or recognise: never an empty list', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-screen-bad-'));
    writeFileSync(join(dir, 'list.bin'), Buffer.from([0, 1, 2, 3, 255]));
    await expect(screenRows(rows, { lists: [join(dir, 'missing.csv')] })).rejects.toBeInstanceOf(BatchUnusable);
    await expect(screenRows(rows, { lists: [join(dir, 'list.bin')] })).rejects.toBeInstanceOf(BatchUnusable);
  });
});

describe('screeningChanged', () => {
  it("refuses a run whose lists, hits or clearances are not the plan's", async () => {
    const s = await screenRows([rowOf(3, 'John Smith')], { lists: [LIST] });
    const digest = s.lists[0]!.digest;
    const planned = { lists: [{ path: LIST, format: 'ofac-sdn', digest, entries: 7, date: s.lists[0]!.date }], held: [], cleared: [] };
    expect(screeningChanged(planned, s, false)).toBeUndefined();
    expect(screeningChanged({ ...planned, lists: [{ ...planned.lists[0]!, digest: 'f'.repeat(64) }] }, s, false)).toContain(
      'not the --sanctions-list',
    );
    expect(screeningChanged(planned, undefined, false)).toContain('not the --sanctions-list');
    expect(screeningChanged(undefined, s, false)).toContain('made without sanctions lists');
    const held = await screenRows([rowOf(2, 'Adaeze Okafor')], { lists: [LIST] });
    expect(screeningChanged(planned, held, true)).toContain('hit the sanctions lists now');
    expect(screeningChanged({ ...planned, held: [{ rowNumber: 2, reference: 'REF-2', hits: [] }] }, s, false)).toContain(
      'pass --allow-partial',
    );
  });
});

it("a SWIFT transfer's intermediary bank is screened with the payee, and is part of the payee a clearance names", () => {
  const payout = rowOf(2, 'Adaeze Okafor').payout!;
  const via = { ...payout, beneficiary: { ...payout.beneficiary, intermediarySwift: 'SOMEBANKXXX' } };
  expect(payeeOf(via).intermediaryBic).toBe('SOMEBANKXXX');
  expect(payeeDigest(via)).not.toBe(payeeDigest(payout));
});
