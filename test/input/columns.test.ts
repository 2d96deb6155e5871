import { describe, expect, it } from 'vitest';
import { BENEFICIARY_FIELDS } from '../../src/spec/methods.ts';
import {
  BENEFICIARY_COLUMNS,
  CANONICAL_FIELDS,
  COLUMN_ALIASES,
  mapColumns,
  matchHeader,
  normalizeHeader,
} from '../../src/input/batch-columns.ts';
import { InputError } from '../../src/input/input-errors.ts';
import { OPTIONAL_RESULT_COLUMNS, RESULT_COLUMNS } from '../../src/input/result-columns.ts';

const REQUIRED = [
  'reference',
  'sourceAmount',
  'sourceCurrency',
  'destinationCurrency',
  'destinationCountryCode',
  'method',
  'accountName',
  'accountCurrency',
  'narration',
];

describe('column mapping', () => {
  it('has a column for every beneficiary field of the spec', () => {
    expect([...BENEFICIARY_COLUMNS].sort()).toEqual([...BENEFICIARY_FIELDS].sort());
    for (const f of BENEFICIARY_FIELDS) expect(CANONICAL_FIELDS).toContain(f);
  });

  it('matches headers ignoring case, spaces, _ and -', () => {
    expect(matchHeader('Source Amount')).toEqual({ field: 'sourceAmount', by: 'name' });
    expect(matchHeader('source_amount')).toEqual({ field: 'sourceAmount', by: 'name' });
    expect(matchHeader('SOURCE-AMOUNT')).toEqual({ field: 'sourceAmount', by: 'name' });
    expect(matchHeader(' destination country code ')).toEqual({ field: 'destinationCountryCode', by: 'name' });
  });

  it('knows the aliases of common exports', () => {
    const cases: [string, string][] = [
      ['Amount', 'sourceAmount'],
      ['IBAN', 'iban'],
      ['Beneficiary Name', 'accountName'],
      ['Sort Code', 'sortCode'],
      ['SWIFT/BIC', 'swiftCode'],
      ['BIC', 'swiftCode'],
      ['Currency', 'sourceCurrency'],
      ['Account No.', 'accountNumber'],
      ['ABA Routing Number', 'routingNumber'],
      ['Payment Method', 'method'],
      ['Description', 'narration'],
      ['E-mail', 'email'],
      ['Mobile', 'phoneNumber'],
      ['Postal Code', 'postCode'],
      ['Attachments', 'documents'],
      ['Ref', 'reference'],
    ];
    for (const [h, f] of cases) expect(matchHeader(h)?.field, h).toBe(f);
    expect(matchHeader('Cost centre')).toBeUndefined();
  });

  it('has no alias that names another field or two fields at once', () => {
    const seen = new Map<string, string>();
    for (const f of CANONICAL_FIELDS) seen.set(normalizeHeader(f), f);
    for (const f of CANONICAL_FIELDS) {
      for (const a of COLUMN_ALIASES[f]?.split(', ') ?? []) {
        const n = normalizeHeader(a);
        expect(seen.get(n) ?? f, `${a} of ${f}`).toBe(f);
        seen.set(n, f);
      }
    }
  });

  it('keeps unknown columns, in order, and maps the known ones', () => {
    const m = mapColumns([...REQUIRED, 'Cost centre', 'iban', ''], 'f.csv');
    expect(m.columns).toEqual([...REQUIRED, 'Cost centre', 'iban', '(column 12)']);
    expect(m.mapping['Cost centre']).toBeUndefined();
    expect(m.fields.iban).toBe('iban');
  });

  it('names every missing required column in one error', () => {
    try {
      mapColumns(['reference', 'Amount', 'Currency', 'method'], 'f.csv');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).code).toBe('MISSING_COLUMNS');
      expect((e as InputError).message).toContain('destinationCurrency, destinationCountryCode, accountName, accountCurrency, narration');
    }
  });

  it('refuses a header row that names no column, and two aliases of one field', () => {
    expect(() => mapColumns(['a', 'b', 'c'], 'f.csv')).toThrow(expect.objectContaining({ code: 'NO_HEADER' }));
    expect(() => mapColumns([...REQUIRED.filter((r) => r !== 'accountName'), 'Name', 'Beneficiary Name'], 'f.csv')).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_COLUMNS' }),
    );
  });

  it('refuses the same header twice, as written or differently written, and names both columns', () => {
    for (const second of ['reference', 'Reference', ' reference ']) {
      try {
        mapColumns([...REQUIRED, second], 'f.csv');
        expect.unreachable();
      } catch (e) {
        expect((e as InputError).code, second).toBe('DUPLICATE_COLUMNS');
        expect((e as InputError).message).toContain(`"reference" (column 1) and "${second.trim()}" (column 10) both name reference`);
      }
    }
    // the same alias twice with no exact name is two aliases of one field
    expect(() => mapColumns([...REQUIRED.filter((r) => r !== 'sourceAmount'), 'Amount', 'Amount'], 'f.csv')).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_COLUMNS' }),
    );
  });

  it('reads a results file again: no result column names a payout field, prefixed or not', () => {
    const results = [...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS];
    const m = mapColumns([...REQUIRED, 'documents', 'status', ...results, ...results.map((c) => `result.${c}`)], 'f.results.csv');
    expect(Object.keys(m.mapping)).toEqual([...REQUIRED, 'documents']);
    // The same header twice is still refused.
    expect(() => mapColumns([...REQUIRED, 'documents', 'documents'], 'f.csv')).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_COLUMNS' }),
    );
  });

  it('keeps unknown headers repeated, made unique', () => {
    const m = mapColumns([...REQUIRED, 'Notes', 'Notes', ''], 'f.csv');
    expect(m.columns.slice(-3)).toEqual(['Notes', 'Notes (2)', '(column 12)']);
    expect(m.notes).toEqual([]);
  });

  it('never names two columns alike, so neither is lost: a "Notes (2)" beside two "Notes"', () => {
    for (const headers of [
      ['Notes', 'Notes', 'Notes (2)'],
      ['Notes (2)', 'Notes', 'Notes'],
      ['(column 11)', ''],
    ]) {
      const columns = mapColumns([...REQUIRED, ...headers], 'f.csv').columns;
      expect(new Set(columns).size, headers.join(',')).toBe(columns.length);
    }
  });

  it('prefers the exact name over an alias, even the same alias twice, each with a note', () => {
    const m = mapColumns([...REQUIRED, 'Amount', 'Amount'], 'f.csv');
    expect(m.fields.sourceAmount).toBe('sourceAmount');
    expect(m.columns.slice(-2)).toEqual(['Amount', 'Amount (2)']);
    expect(m.notes).toEqual([
      'column "Amount" is kept as an extra column: "sourceAmount" already gives sourceAmount',
      'column "Amount (2)" is kept as an extra column: "sourceAmount" already gives sourceAmount',
    ]);
  });

  it('prefers the exact name over an alias and keeps the alias column as an extra', () => {
    const m = mapColumns([...REQUIRED, 'Bank', 'bankName'], 'f.csv');
    expect(m.fields.bankName).toBe('bankName');
    expect(m.mapping.Bank).toBeUndefined();
    expect(m.notes[0]).toContain('"Bank"');
  });
});
