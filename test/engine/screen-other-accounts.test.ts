// A wallet id, FPS id, phone or email on a list is a hit whatever the name (design: Screening), as an
// IBAN or account number is: screenRows reads every field that names where a payout goes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { screenRows } from '../../src/engine/screen-batch.ts';
import type { EngineRow } from '../../src/engine/prepare.ts';
import { payoutRow } from './helpers.ts';

const LIST = join(mkdtempSync(join(tmpdir(), 'pb-other-accounts-')), 'own.csv');
writeFileSync(LIST, 'id,name,account\nW1,,wx-9988-7766\nF1,,+852 9123 4567\nE1,,Listed.Party@example.com\n');

const rowWith = (rowNumber: number, method: string, fields: Record<string, string>) => {
  const payout = payoutRow(rowNumber);
  payout.reference = `REF-${rowNumber}`;
  payout.method = method as typeof payout.method;
  payout.beneficiary = { accountName: 'Somebody Else', accountCurrency: payout.sourceCurrency, ...fields };
  return { rowNumber, payout, problems: [], cells: {} } as unknown as EngineRow;
};

describe('screenRows: the accounts besides an IBAN and an account number', () => {
  it('holds a payee whose WeChat id, FPS phone or email is on a list, whatever the name', async () => {
    const rows = [
      rowWith(2, 'WECHAT', { wechatUserId: 'WX-9988-7766' }),
      rowWith(3, 'HK_FPS', { phoneNumber: '+85291234567' }),
      rowWith(4, 'HK_FPS', { email: 'listed.party@example.com' }),
      rowWith(5, 'ALIPAY', { alipayId: 'not-listed-1' }),
    ];
    const s = await screenRows(rows, { lists: [LIST] });
    expect([...s.held.keys()]).toEqual([2, 3, 4]);
    expect(s.held.get(2)!.hits[0]).toMatchObject({ entryId: 'W1', on: 'account', band: 'hit' });
    expect(s.held.get(2)!.hits[0]!.why).toContain('wechatUserId is listed');
    expect(s.held.get(3)!.hits[0]).toMatchObject({ entryId: 'F1', band: 'hit' });
    expect(s.held.get(4)!.hits[0]).toMatchObject({ entryId: 'E1', band: 'hit' });
  });
});
