import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { mkdtempSync, rmSync, writeFileSync, openSync, ftruncateSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENEFICIARY_COLUMNS, CANONICAL_FIELDS, type CanonicalField } from '../../src/input/batch-columns.ts';
import { FIELD_CHECKS, METHOD_FIELD_CHECKS, methodFields, requiredFields, PayoutRowSchema } from '../../src/validation/row-schemas.ts';
import { parseRow, type RowContext } from '../../src/validation/row.ts';
import { collectBatch } from './collect.ts';
import { sniffDocumentType, checkDocumentFile } from '../../src/validation/document-files.ts';
import { EXAMPLES } from './examples.ts';
import { PAYOUT_METHODS, type PayoutMethod } from '../../src/spec/codes.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-row-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'inv.pdf'), '%PDF-1.7\n%...');
writeFileSync(join(dir, 'scan.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]));
writeFileSync(join(dir, 'shot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]));
writeFileSync(join(dir, 'fake.pdf'), 'not a pdf');
const big = openSync(join(dir, 'big.pdf'), 'w');
ftruncateSync(big, 10 * 1024 * 1024 + 1);
closeSync(big);

const fields = Object.fromEntries(CANONICAL_FIELDS.map((f) => [f, f])) as Record<CanonicalField, string>;
const ctx: RowContext = { file: 'batch.csv', fields, baseDir: dir };
const row = (method: PayoutMethod, over: Partial<Record<CanonicalField, string>> = {}) => ({
  rowNumber: 7,
  cells: Object.fromEntries(CANONICAL_FIELDS.map((f) => [f, { ...EXAMPLES[method], documents: 'inv.pdf', ...over }[f] ?? ''])),
});
const codes = (method: PayoutMethod, over: Partial<Record<CanonicalField, string>> = {}) =>
  parseRow(row(method, over), ctx).problems.map((p) => `${p.severity[0]}:${p.code}:${p.column ?? ''}`);

describe('one row', () => {
  it.each(PAYOUT_METHODS)('the %s example is valid and becomes a typed PayoutRow', (m) => {
    const r = parseRow(row(m), ctx);
    expect(r.problems).toEqual([]);
    expect(PayoutRowSchema.safeParse(r.payout).success).toBe(true);
    expect(r.payout!.documents).toEqual([join(dir, 'inv.pdf')]);
    expect(Object.values(r.payout!.beneficiary).every((v) => v !== '')).toBe(true);
  });

  it('a ReqdExctnDt no longer written YYYY-MM-DD (a results file saved by Excel) is an error, never a date dropped', () => {
    const dated = (due: string) => parseRow({ rowNumber: 7, cells: { ...row('SEPA').cells, ReqdExctnDt: due } }, ctx);
    expect(dated('2099-01-31').payout!.notBefore).toBe('2099-01-31');
    expect(dated('').payout!.notBefore).toBeUndefined();
    for (const due of ['31/01/2099', '1/31/2099']) {
      const r = dated(due);
      expect(r.payout).toBeUndefined();
      expect(r.problems).toEqual([
        expect.objectContaining({ severity: 'error', code: 'INVALID_DATE', column: 'ReqdExctnDt', row: 7, value: due }),
      ]);
    }
  });

  it('requires the spec per-method fields and accountCurrency, naming the column', () => {
    expect(codes('SEPA', { iban: '' })).toEqual(['e:MISSING_VALUE:iban']);
    expect(codes('ACH', { routingNumber: '', accountType: '' })).toEqual(['e:MISSING_VALUE:routingNumber', 'e:MISSING_VALUE:accountType']);
    expect(codes('NIP', { accountCurrency: '' })).toEqual(['e:MISSING_VALUE:accountCurrency']);
    expect(codes('SWIFT', { bankName: '', beneficiaryCountry: '' })).toEqual([
      'e:MISSING_VALUE:bankName',
      'e:MISSING_VALUE:beneficiaryCountry',
    ]);
    expect(codes('FASTER_PAYMENTS', { iban: '' })).toEqual(['e:MISSING_VALUE:iban']);
    // and what would be valid, as every problem says
    const missing = (m: PayoutMethod, over: Partial<Record<CanonicalField, string>>) =>
      parseRow(row(m, over), ctx).problems.map((p) => [p.column, p.expected]);
    expect(missing('FASTER_PAYMENTS', { sortCode: '' })).toEqual([['sortCode', '6 digits, e.g. 601613 or 60-16-13']]);
    expect(missing('SWIFT', { bankName: '' })).toEqual([['bankName', 'the bankName (SWIFT requires it)']]);
  });

  it('refuses invisible and bidirectional format characters in any cell, naming the character (issue 29)', () => {
    const rtl = parseRow(row('SEPA', { narration: 'Invoice \u202E2100 ecioval' }), ctx).problems;
    expect(rtl).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'INVALID_TEXT',
        column: 'narration',
        row: 7,
        message: 'holds the invisible character U+202E RIGHT-TO-LEFT OVERRIDE, which changes how the text reads',
      }),
    ]);
    for (const c of ['\u061C', '\u200B', '\u200F', '\u202A', '\u2060', '\u2064', '\u2066', '\u2069', '\uFEFF'])
      expect(codes('SEPA', { accountName: `Zo${c}e Muller` }), c.codePointAt(0)!.toString(16)).toEqual(['e:INVALID_TEXT:accountName']);
    expect(codes('SEPA', { accountName: 'Zoë Müller — Ørsted' })).toEqual([]);
  });

  it('accepts method names in any case and the HONG_KONG_FPS alias', () => {
    expect(parseRow(row('HK_FPS', { method: 'hong_kong_fps' }), ctx).payout?.method).toBe('HK_FPS');
    expect(parseRow(row('SEPA', { method: 'sepa' }), ctx).payout?.method).toBe('SEPA');
    expect(codes('SEPA', { method: 'PAYPAL' })).toEqual(['e:INVALID_METHOD:method']);
  });

  it('checks the one-of groups of WECHAT and HK_FPS', () => {
    expect(codes('WECHAT', { openId: '' })).toEqual(['e:MISSING_ONE_OF:openId | wechatUserId']);
    expect(codes('WECHAT', { openId: '', wechatUserId: 'wxid_abc123' })).toEqual([]);
    expect(codes('HK_FPS', { fpsId: '', phoneNumber: '+85291234567' })).toEqual([]);
    expect(codes('HK_FPS', { fpsId: '', accountNumber: '123456789' })).toEqual([
      'e:MISSING_ONE_OF:fpsId | phoneNumber | email | accountNumber | bankCode',
    ]);
    expect(codes('HK_FPS', { fpsId: '', accountNumber: '123456789', bankCode: '004' })).toEqual([]);
  });

  it('warns, without failing the row, for a corridor outside the spec overview', () => {
    expect(codes('SEPA', { sourceCurrency: 'CNY' })).toEqual(['w:CORRIDOR_NOT_IN_OVERVIEW:method']);
    expect(parseRow(row('SEPA', { sourceCurrency: 'CNY' }), ctx).payout).toBeDefined();
  });

  it('cross-checks a UK IBAN with the sort code and account number', () => {
    expect(codes('BACS', { sortCode: '200001' })).toEqual(['e:IBAN_MISMATCH:sortCode']);
    expect(codes('BACS', { iban: 'DE89370400440532013000' })).toEqual(['e:IBAN_MISMATCH:iban']);
  });

  it('masks account identifiers in problems', () => {
    const p = parseRow(row('SEPA', { iban: 'DE88370400440532013000' }), ctx).problems[0]!;
    expect(p).toMatchObject({ file: 'batch.csv', row: 7, column: 'iban', value: '********3000', code: 'INVALID_IBAN' });
    expect(p.expected).toBeTruthy();
    expect(JSON.stringify(parseRow(row('NIP', { accountNumber: '98765' }), ctx).problems)).not.toContain('98765');
  });

  it('masks an e-mail that names the account (HK_FPS) as it masks a phone number', () => {
    const problem = (over: Partial<Record<CanonicalField, string>>) => parseRow(row('HK_FPS', { fpsId: '', ...over }), ctx).problems[0];
    expect(problem({ phoneNumber: '+852-9123-456x' })).toMatchObject({ code: 'INVALID_PHONE', value: '********456x' });
    expect(problem({ email: 'chan.taiman@example' })).toMatchObject({ code: 'INVALID_EMAIL', column: 'email', value: '********mple' });
  });

  it('warns about values in columns the method does not use', () => {
    expect(codes('NIP', { iban: 'DE89370400440532013000' })).toEqual(['w:FIELD_NOT_USED:iban']);
    expect(parseRow(row('NIP', { iban: 'DE89370400440532013000' }), ctx).payout?.beneficiary).not.toHaveProperty('iban');
  });

  it('documents: exist, PDF/JPEG/PNG by their bytes, at most 10 MB and 5; none is a warning unless withdrawal', () => {
    expect(codes('SEPA', { documents: 'inv.pdf; scan.jpg;shot.png' })).toEqual([]);
    expect(codes('SEPA', { documents: 'fake.pdf' })).toEqual(['e:DOCUMENT_TYPE:documents']);
    expect(codes('SEPA', { documents: 'gone.pdf' })).toEqual(['e:DOCUMENT_NOT_FOUND:documents']);
    expect(codes('SEPA', { documents: 'big.pdf' })).toEqual(['e:DOCUMENT_TOO_LARGE:documents']);
    expect(codes('SEPA', { documents: Array(6).fill('inv.pdf').join(';') })).toEqual(['e:TOO_MANY_DOCUMENTS:documents']);
    expect(codes('SEPA', { documents: '' })).toEqual(['w:NO_DOCUMENT:documents']);
    expect(codes('SEPA', { documents: '', withdrawal: 'TRUE' })).toEqual([]);
    expect(codes('SEPA', { documents: join(dir, 'inv.pdf') })).toEqual([]);
    expect(sniffDocumentType(Buffer.from('%PDF-1.4'))).toBe('application/pdf');
    expect(checkDocumentFile(join(dir, 'scan.jpg'))).toMatchObject({ ok: true, contentType: 'image/jpeg' });
  });

  it("reads the row's amount exactly and with the currency's minor units", () => {
    expect(parseRow(row('SEPA', { sourceAmount: '1.234,56' }), ctx).payout?.sourceAmount.toFixed()).toBe('1234.56');
    expect(codes('SEPA', { sourceAmount: '1,234' })).toEqual(['e:AMBIGUOUS_AMOUNT:sourceAmount']);
    // a dot before 3 digits in EUR: 1001 grouped the European way, or 1.001? Refused, never guessed
    expect(codes('SEPA', { sourceAmount: '1.001' })).toEqual(['e:AMBIGUOUS_AMOUNT:sourceAmount']);
    expect(codes('SEPA', { sourceAmount: '1.500' })).toEqual(['e:AMBIGUOUS_AMOUNT:sourceAmount']);
    expect(codes('SEPA', { sourceAmount: '1.0015' })).toEqual(['e:AMOUNT_PRECISION:sourceAmount']);
    expect(codes('SEPA', { sourceAmount: '' })).toEqual(['e:MISSING_VALUE:sourceAmount']);
  });

  it('reports a missing column by its field name, and undecodable characters', () => {
    const { iban: _drop, ...rest } = fields;
    void _drop;
    const p = parseRow(row('SEPA'), { ...ctx, fields: rest }).problems;
    expect(p.map((x) => [x.code, x.column, x.message])).toEqual([
      ['MISSING_VALUE', 'iban', 'SEPA needs iban, and the file has no iban column'],
    ]);
    expect(codes('SEPA', { accountName: 'M\uFFFDller' })).toEqual(['e:ENCODING:accountName']);
    // a formula that failed, in a sheet saved as CSV by Excel, Google Sheets or LibreOffice: no value
    for (const narration of ['#N/A', '#ERROR!', 'Err:502'])
      expect(codes('SEPA', { narration }), narration).toEqual(['e:EXCEL_ERROR:narration']);
  });

  it('text in UTF-8 read as Windows-1252 (a file mixing both) is an encoding error, never a payee "JÃ¼rgen"', async () => {
    // a UTF-8 file, no BOM, with one row pasted from a Windows-1252 file: not valid UTF-8, so read as Windows-1252
    const head =
      'reference,sourceAmount,sourceCurrency,destinationCurrency,destinationCountryCode,method,accountName,accountCurrency,iban,narration\n';
    const utf8 =
      'R1,10.00,EUR,EUR,DEU,SEPA,Jürgen Müller,EUR,DE89370400440532013000,Lohn\nR2,15.00,EUR,EUR,DEU,SEPA,Иван Петров,EUR,DE89370400440532013000,Lohn\n';
    const cp1252 = 'R3,20.00,EUR,EUR,FRA,SEPA,Zoé Côté,EUR,FR1420041010050500013M02606,Salaire\n';
    const p = join(dir, 'mixed.csv');
    writeFileSync(p, Buffer.concat([Buffer.from(head + utf8), Buffer.from(cp1252, 'latin1')]));
    const r = await collectBatch(p);
    expect(r.rows.map((x) => x.valid)).toEqual([false, false, true]);
    expect(r.problems.filter((x) => x.severity === 'error')).toEqual([
      expect.objectContaining({ code: 'ENCODING', row: 2, column: 'accountName' }),
      expect.objectContaining({ code: 'ENCODING', row: 3, column: 'accountName' }),
    ]);
    expect(r.problems[0]!.message).toContain('"Jürgen Müller"');
    // Western text that merely holds such letters stays valid
    for (const accountName of ['Straße\u00a012', 'Ãlvaro Ñuñez', 'Ærø «Société»'])
      expect(codes('SEPA', { accountName }), accountName).toEqual([]);
  });

  describe('a CSV of another code page, guessed to be Windows-1252 (not UTF-8, no BOM), is never paid to a garbled name', () => {
    // each name a row, the file saved in that code page (Mac Excel's "Comma Separated Values", a Polish or a Cyrillic Windows)
    const saved = (encoding: string, names: string[], narration = 'Invoice INV-1003') => {
      const rows = [
        CANONICAL_FIELDS,
        ...names.map((accountName, i) =>
          CANONICAL_FIELDS.map((f) => row('SEPA', { accountName, narration, reference: `R${i}`, sourceAmount: `${i + 1}.00` }).cells[f]!),
        ),
      ];
      const p = join(dir, `${encoding}-${names[0]}.csv`);
      writeFileSync(p, iconv.encode(rows.map((r) => r.map((v) => `"${v}"`).join(',')).join('\r\n'), encoding));
      return p;
    };
    const PAGES = {
      macintosh: ['Zoë Wójcik', 'José Müller', 'Ramón Côté'],
      'windows-1250': ['Łukasz Wąs', 'Paweł Żółć', 'Ştefan Mureş'],
      'windows-1251': ['Иван Петров', 'Пётр Яна'],
    };
    it.each(Object.entries(PAGES))('%s: each row refused, naming the text as read', async (encoding, names) => {
      const r = await collectBatch(saved(encoding, names));
      expect(r.rows.map((x) => x.valid)).toEqual(names.map(() => false));
      const read = names.map((n) => iconv.decode(iconv.encode(n, encoding), 'windows-1252'));
      expect(r.problems).toEqual(
        read.map((text, i) =>
          expect.objectContaining({
            code: 'ENCODING',
            file: expect.stringContaining(encoding),
            row: i + 2,
            column: 'accountName',
            message: expect.stringContaining(`"${text}" reads like another code page`),
            expected:
              'save the file as CSV UTF-8, or (a batch file) name its encoding with --encoding (windows-1250, windows-1251, macintosh, windows-1252)',
          }),
        ),
      );
    });
    it.each(Object.entries(PAGES))('%s: read as the names they are with --encoding', async (encoding, names) => {
      const r = await collectBatch(saved(encoding, names), { encoding });
      expect(r.problems).toEqual([]);
      expect(r.rows.map((x) => x.payout?.beneficiary.accountName)).toEqual(names);
    });
    it('a row the check reads as Western, in a file another of whose rows is misread, is refused too; an ASCII row is not', async () => {
      // "Gdańsk" reads "Gdañsk" in Windows-1252: a plausible name alone, a misread one beside "£ukasz W¹s"
      const r = await collectBatch(saved('windows-1250', ['Łukasz Wąs', 'Anna Gdańska', 'John Smith']));
      expect(r.rows.map((x) => x.valid)).toEqual([false, false, true]);
      expect(r.problems[1]).toMatchObject({
        code: 'ENCODING',
        row: 3,
        column: 'accountName',
        message: expect.stringContaining('"Anna Gdañska" may be misread: line 2 of the file reads like another code page'),
      });
      expect(r.problems).toHaveLength(2);
    });
    it('a Mac Roman letter Windows-1252 lacks (ç, è) is refused as such, naming --encoding macintosh', async () => {
      const r = await collectBatch(saved('macintosh', ['François Hélène']));
      expect(r.problems).toEqual([
        expect.objectContaining({ code: 'ENCODING', row: 2, column: 'accountName', expected: expect.stringContaining('macintosh') }),
      ]);
      expect((await collectBatch(saved('macintosh', ['François Hélène']), { encoding: 'mac' })).problems).toEqual([]);
    });
    it("Western names in Windows-1252 (Excel's Windows CSV) are read as they are", async () => {
      const names = ['José Müller', 'Ørsted François', 'O’Brien Façade S.A.', 'Mª José Núñez', 'Paral·lel nº 5, Straße', '“Acme™” Ltd'];
      const r = await collectBatch(saved('windows-1252', names, 'Q1–Q4 bonus 50 € – merci… ¿Qué?'));
      expect(r.problems).toEqual([]);
      expect(r.rows.map((x) => x.payout?.beneficiary.accountName)).toEqual(names);
      expect(r.rows[0]!.payout?.narration).toBe('Q1–Q4 bonus 50 € – merci… ¿Qué?');
    });
  });
});

describe('the beneficiary of random rows', () => {
  // Per field: the examples' values, values that pass one check and fail another (IBANs outside
  // SEPA or the UK, sort codes and accounts that disagree with a GB IBAN), noise and blanks; every
  // cell trimmed, as the readers hand them over (RawRow).
  const pool: Record<string, string[]> = {};
  for (const f of BENEFICIARY_COLUMNS) pool[f] = [...new Set(PAYOUT_METHODS.map((m) => EXAMPLES[m][f]).filter((v): v is string => !!v))];
  pool.iban!.push('SA0380000000608010167519', 'DE89 3704 0044 0532 0130 00', 'gb29nwbk60161331926819', 'DE89370400440532013001');
  pool.sortCode!.push('60-16-13', '200000', '60161');
  pool.accountNumber!.push('31926819', '3192 6819', '1234567', '12345678901234567890', 'ABC123');
  pool.bankCode!.push('004', '000013', '12');
  pool.fpsId!.push('123456789', '123456', '12 345 67');
  pool.phoneNumber = ['+85291234567', '0085291234567', '+852 9123 4567'];
  pool.email = ['li@example.com', 'not-an-email', 'a@b.co'];
  pool.wechatUserId = ['wxid_abc123', '1abcdef'];
  pool.accountType!.push('Savings', 'current');
  pool.swiftCode!.push('DEUTXXFF', 'DEUT');
  pool.accountCurrency!.push('usd', 'EURO');
  const noise = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9 -]{1,20}$/)).map((v) => v.trim());
  const cellsFor = (method: PayoutMethod) =>
    fc.record(
      Object.fromEntries(
        methodFields(method).map((f) => {
          const example = EXAMPLES[method][f];
          const choices = [
            ...(example ? [{ weight: 12, arbitrary: fc.constant(example) }] : []),
            ...(pool[f]?.length ? [{ weight: 3, arbitrary: fc.constantFrom(...pool[f]) }] : []),
            { weight: 1, arbitrary: noise },
            { weight: 2, arbitrary: fc.constant('') },
          ];
          return [f, fc.oneof(...choices)];
        }),
      ),
    );

  it.each(PAYOUT_METHODS)('%s: a refused row says why; an accepted one sends only its fields, normalized', (method) => {
    let accepted = 0;
    fc.assert(
      fc.property(cellsFor(method), (cells) => {
        const r = parseRow(row(method, cells), ctx);
        const errors = r.problems.filter((p) => p.severity === 'error');
        expect(r.payout === undefined).toBe(errors.length > 0);
        for (const p of errors) expect(p.column).toBeTruthy();
        if (!r.payout) return;
        accepted++;
        const b = r.payout.beneficiary as Record<string, string>;
        for (const f of requiredFields(method)) expect(b[f]).toBeTruthy();
        for (const [f, v] of Object.entries(b)) {
          expect(methodFields(method)).toContain(f);
          const check = METHOD_FIELD_CHECKS[method]?.[f as keyof typeof FIELD_CHECKS] ?? FIELD_CHECKS[f as keyof typeof FIELD_CHECKS];
          expect(check(v)).toEqual({ ok: true, value: v });
        }
      }),
      { numRuns: 100 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});
