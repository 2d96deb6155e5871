// The deliberately broken sample: its EXACT list of problems, in order.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { collectBatch } from './collect.ts';

const broken = fileURLToPath(new URL('../../samples/payroll-broken.csv', import.meta.url));

describe('samples/payroll-broken.csv', () => {
  it('has exactly these problems', async () => {
    const r = await collectBatch(broken);
    const got = r.problems.map((p) => [p.row, p.severity, p.code, p.column, p.value]);
    expect(got).toEqual([
      [3, 'error', 'AMBIGUOUS_AMOUNT', 'sourceAmount', '1,234'],
      [3, 'error', 'INVALID_BANK_CODE', 'bankCode', '58'],
      [4, 'error', 'INVALID_AMOUNT', 'sourceAmount', '-50.00'],
      [4, 'error', 'INVALID_ROUTING_NUMBER', 'routingNumber', '021000022'],
      [4, 'error', 'INVALID_ACCOUNT_TYPE', 'accountType', 'current'],
      [5, 'error', 'INVALID_SORT_CODE', 'sortCode', '60161'],
      [5, 'error', 'INVALID_ACCOUNT_NUMBER', 'accountNumber', '***2681'],
      [6, 'error', 'AMBIGUOUS_AMOUNT', 'sourceAmount', '100.555'],
      [6, 'error', 'INVALID_IBAN', 'iban', '********3001'],
      [7, 'error', 'INVALID_CURRENCY', 'sourceCurrency', 'EURO'],
      [7, 'error', 'INVALID_COUNTRY', 'destinationCountryCode', 'DE'],
      [7, 'error', 'INVALID_METHOD', 'method', 'PAYPAL'],
      [8, 'error', 'INVALID_PHONE', 'phoneNumber', '******4567'],
      [8, 'error', 'INVALID_EMAIL', 'email', '********.com'],
      [9, 'warning', 'FIELD_NOT_USED', 'sortCode', '601613'],
      [9, 'error', 'INVALID_BIC', 'swiftCode', 'SBINXXBB'],
      [9, 'error', 'MISSING_VALUE', 'bankName', undefined],
      [10, 'error', 'MISSING_VALUE', 'narration', undefined],
      [10, 'error', 'MISSING_VALUE', 'accountName', undefined],
      [10, 'error', 'DUPLICATE_REFERENCE', 'reference', 'BRK-001'],
      [11, 'warning', 'BLANK_ROWS', undefined, undefined],
      [13, 'error', 'PROBABLE_DUPLICATE', 'sourceAmount', '5200.00'],
      [14, 'error', 'INVALID_BOOLEAN', 'withdrawal', 'maybe'],
      [14, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'documents/missing-invoice.pdf'],
      [14, 'error', 'DOCUMENT_TYPE', 'documents', 'documents/not-a-pdf.pdf'],
      [15, 'warning', 'IBAN_MISMATCH', 'iban', '********4300'],
      [15, 'error', 'TOO_MANY_DOCUMENTS', 'documents', 'a.pdf;b.pdf;c.pdf;d.pdf;e.pdf;f.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'a.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'b.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'c.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'd.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'e.pdf'],
      [15, 'error', 'DOCUMENT_NOT_FOUND', 'documents', 'f.pdf'],
      [16, 'warning', 'CORRIDOR_NOT_IN_OVERVIEW', 'method', 'NIP'],
      [16, 'warning', 'ACCOUNT_CURRENCY_MISMATCH', 'accountCurrency', 'USD'],
      [16, 'warning', 'NO_DOCUMENT', 'documents', undefined],
      [17, 'error', 'TOO_LONG', 'narration', 'x'.repeat(141)],
      [17, 'error', 'MISSING_ONE_OF', 'openId | wechatUserId', undefined],
      [18, 'error', 'IBAN_MISMATCH', 'sortCode', '200000'],
      [19, 'warning', 'NUBAN_CHECK_DIGIT', 'accountNumber', '******6789'],
      [20, 'error', 'EXTRA_CELLS', undefined, undefined],
      [21, 'warning', 'BLANK_ROWS', undefined, undefined],
      [22, 'warning', 'TOTALS_ROW', undefined, undefined],
    ]);
    expect(r.problems.every((p) => p.file === broken && p.message.length > 0)).toBe(true);
    expect(
      r.problems
        .filter(
          (p) =>
            p.row !== undefined &&
            p.code !== 'BLANK_ROWS' &&
            p.code !== 'TOTALS_ROW' &&
            p.code !== 'EXTRA_CELLS' &&
            p.code !== 'NO_DOCUMENT',
        )
        .every((p) => p.expected),
    ).toBe(true);
    expect(r.summary).toMatchObject({ rows: 18, valid: 4, invalid: 14, skipped: 3, errors: 34, warnings: 9 });
  });

  it('masks account identifiers: no full account number, IBAN or phone appears', async () => {
    const text = JSON.stringify((await collectBatch(broken)).problems);
    for (const secret of ['DE89370400440532013001', '3192681', '0091234567', 'NL91ABNA0417164300', '0123456789'])
      expect(text).not.toContain(secret);
  });
});
