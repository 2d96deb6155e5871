// The pain.002 status report of a results file (issue 41): the one table of statuses and reason
// codes, the group and payment-information statuses, and the XML valid against the schemas of
// pain.002.001.03 and .10.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBatch } from '../../src/input/read-batch.ts';
import { PAIN001_VERSIONS } from '../../src/spec/iso20022.ts';
import { groupStatus, isoTxOf, writeStatusReport } from '../../src/results/status-report.ts';
import { writeResults } from '../../src/results/write.ts';
import type { ResultRow, ResultValues } from '../../src/results/types.ts';
import { pain001, root, sampleRows, SAMPLES } from '../input/pain001-files.ts';
import { tempDir } from '../results/helpers.ts';
import { readTexts, schemaErrors, texts } from './validate.ts';

const tmp = tempDir('pb-pain002-');
afterAll(() => tmp.cleanup());

describe('the ISO status and reason of a results row', () => {
  it.each<[ResultValues, string, string | undefined]>([
    [{ status: 'SUCCESSFUL', payoutId: 'p' }, 'ACSC', undefined],
    [{ status: 'PROCESSING', payoutId: 'p', statusReason: 'Approved and processing' }, 'ACSP', undefined],
    [{ status: 'PENDING', payoutId: 'p', errorCode: 'DOCUMENTS_NOT_ATTACHED' }, 'ACSP', undefined],
    [{ status: 'ADDITIONAL_INFO_REQUIRED', payoutId: 'p' }, 'PDNG', undefined],
    [{ status: 'UNKNOWN_OUTCOME', errorCode: 'TIMEOUT', errorMessage: 'no answer' }, 'PDNG', 'NARR'],
    [{ status: 'NOT_SENT', errorMessage: 'left out by --allow-partial' }, 'ACTC', 'NARR'],
    [{ status: 'FAILED_TO_SEND', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'balance too low' }, 'RJCT', 'AM04'],
    [{ status: 'FAILED_TO_SEND', errorCode: 'MISSING_REQUIRED_FIELDS' }, 'RJCT', 'BE01'],
    [{ status: 'FAILED_TO_SEND', errorCode: 'CORRIDOR_NOT_ENABLED' }, 'RJCT', 'AG01'],
    [{ status: 'INVALID', errorCode: 'INVALID_IBAN' }, 'RJCT', 'AC01'],
    [{ status: 'INVALID', errorCode: 'INVALID_BIC' }, 'RJCT', 'RC01'],
    [{ status: 'ALREADY_PAID', payoutId: 'p' }, 'RJCT', 'DUPL'],
    [{ status: 'CONFLICT', errorCode: 'IDEMPOTENCY_KEY_CONFLICT' }, 'RJCT', 'DUPL'],
    [{ status: 'FAILED', payoutId: 'p', statusReason: 'Beneficiary account closed' }, 'RJCT', 'AC04'],
    [{ status: 'REJECTED', payoutId: 'p', statusReason: 'compliance review' }, 'RJCT', 'NARR'],
    // the service's words name a code only when they say it: else NARR, never another reason
    [{ status: 'FAILED', payoutId: 'p', statusReason: 'Insufficient funds at the correspondent bank' }, 'RJCT', 'AM04'],
    [{ status: 'FAILED', payoutId: 'p', statusReason: 'Invalid account number' }, 'RJCT', 'AC01'],
    [{ status: 'REJECTED', payoutId: 'p', statusReason: 'Beneficiary name does not match the account' }, 'RJCT', 'BE01'],
    [{ status: 'REJECTED', payoutId: 'p', statusReason: 'Insufficient documents for this beneficiary' }, 'RJCT', 'NARR'],
    [{ status: 'FAILED', payoutId: 'p', statusReason: 'Beneficiary bank closed for a public holiday' }, 'RJCT', 'NARR'],
    [{ status: 'REJECTED', payoutId: 'p', statusReason: 'Compliance review of the account holder' }, 'RJCT', 'NARR'],
  ])('%j → %s %s', (result, status, reason) => {
    const tx = isoTxOf(result);
    expect([tx.status, tx.reason?.code]).toEqual([status, reason]);
  });

  it("keeps the service's text, in Max105Text pieces, and names an unmapped code in it", () => {
    const long = 'x'.repeat(250);
    expect(isoTxOf({ status: 'REJECTED', payoutId: 'p', statusReason: long }).reason!.text.map((t) => t.length)).toEqual([105, 105, 40]);
    expect(isoTxOf({ status: 'FAILED_TO_SEND', errorCode: 'VALIDATION_ERROR', errorMessage: 'narration too long' }).reason).toEqual({
      code: 'NARR',
      text: ['VALIDATION_ERROR: narration too long'],
    });
  });

  it('gives a group the status of all its transactions, PART when some are rejected, else the least advanced', () => {
    const g = (...s: string[]) => groupStatus(new Map(s.map((x) => [x as 'ACSC', 1])));
    expect([g('ACSC'), g('RJCT'), g('ACSC', 'RJCT'), g('ACSC', 'ACSP'), g('ACSP', 'PDNG'), g('ACTC', 'ACSC')]).toEqual([
      'ACSC',
      'RJCT',
      'PART',
      'ACSP',
      'PDNG',
      'ACTC',
    ]);
  });
});

const COLUMNS = ['reference', 'sourceAmount', 'sourceCurrency', 'narration', 'MsgId', 'MsgNmId', 'PmtInfId', 'InstrId', 'ReqdExctnDt'];
const row = (i: number, pmtInf: string, amount: string, result: ResultValues, msgNmId = 'pain.001.001.03') => ({
  rowNumber: i + 2,
  cells: {
    reference: `E2E-${i}`,
    sourceAmount: amount,
    sourceCurrency: 'EUR',
    narration: 'salary',
    MsgId: 'ERP-RUN-0042',
    MsgNmId: msgNmId,
    PmtInfId: pmtInf,
    InstrId: i === 0 ? 'INSTR-0' : '',
    ReqdExctnDt: '2025-01-31',
  },
  result: { idempotencyKey: `k${i}`, ...result },
});

describe('pain.002 status report', () => {
  it.each([
    ['pain.001.001.03', 'pain.002.001.03'],
    ['pain.001.001.09', 'pain.002.001.10'],
  ])('answers a %s batch with a valid %s: its ids, statuses, reasons and amounts', async (input, version) => {
    const results = tmp.path('erp.results.csv');
    const rows = [
      row(0, 'PMT-A', '100.10', { status: 'SUCCESSFUL', payoutId: 'p0', payoutRef: 'PR-0' }, input),
      row(1, 'PMT-A', '250.05', { status: 'FAILED_TO_SEND', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'Insufficient funds' }, input),
      row(2, 'PMT-B', '0.30', { status: 'PENDING', payoutId: 'p2', payoutRef: 'PR-2' }, input),
    ];
    await writeResults(results, { format: 'csv', inputColumns: COLUMNS, rows });
    const out = tmp.path('erp.pain002.xml');
    expect(await writeStatusReport(results, out)).toBe(version);
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml, version)).toEqual([]);
    expect(xml).toContain(`xmlns="urn:iso:std:iso:20022:tech:xsd:${version}"`);
    expect(texts(xml, 'OrgnlMsgId')).toEqual(['ERP-RUN-0042']);
    expect(texts(xml, 'OrgnlMsgNmId')).toEqual([input]);
    expect(texts(xml, 'OrgnlPmtInfId')).toEqual(['PMT-A', 'PMT-B']);
    expect(texts(xml, 'OrgnlNbOfTxs')).toEqual(['3', '2', '1']);
    expect(texts(xml, 'OrgnlCtrlSum')).toEqual(['350.45', '350.15', '0.30']);
    expect(texts(xml, 'GrpSts')).toEqual(['PART']);
    expect(texts(xml, 'PmtInfSts')).toEqual(['PART', 'ACSP']);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual(['E2E-0', 'E2E-1', 'E2E-2']);
    expect(texts(xml, 'OrgnlInstrId')).toEqual(['INSTR-0']);
    expect(texts(xml, 'TxSts')).toEqual(['ACSC', 'RJCT', 'ACSP']);
    expect(texts(xml, 'Cd')).toEqual(['AM04']);
    expect(texts(xml, 'AddtlInf')).toEqual(['Insufficient funds']);
    expect(texts(xml, 'InstdAmt')).toEqual(['100.10', '250.05', '0.30']); // as the ERP wrote them
    expect(texts(xml, 'AcctSvcrRef')).toEqual(['PR-0', 'PR-2']);
    expect(texts(xml, 'DtldSts')).toEqual(['ACSC', 'RJCT', 'ACSP']);
  });

  it('dates the report in UTC, saying so: a time without a zone is local time to the ERP (ISODateTime)', async () => {
    const results = tmp.path('erp.results.csv');
    await writeResults(results, { format: 'csv', inputColumns: COLUMNS, rows: [row(0, 'PMT-A', '1.00', { status: 'PENDING' })] });
    const out = tmp.path('erp.pain002.xml');
    const before = Math.floor(Date.now() / 1000) * 1000;
    await writeStatusReport(results, out);
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.03')).toEqual([]);
    const [written] = texts(xml, 'CreDtTm');
    expect(written).toMatch(/(Z|[+-]\d\d:\d\d)$/);
    expect(Date.parse(written!)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(written!)).toBeLessThanOrEqual(Date.now());
  });

  it("gathers each payment information's transactions in the file's order, wherever they stand", async () => {
    const results = tmp.path('erp.results.csv');
    const paid = { status: 'SUCCESSFUL', payoutId: 'p' };
    const rows = [row(0, 'PMT-A', '1.00', paid), row(1, 'PMT-B', '2.00', paid), row(2, 'PMT-A', '3.00', paid)];
    await writeResults(results, { format: 'csv', inputColumns: COLUMNS, rows });
    const out = tmp.path('erp.pain002.xml');
    await writeStatusReport(results, out);
    const xml = readFileSync(out, 'utf8');
    expect(texts(xml, 'OrgnlPmtInfId')).toEqual(['PMT-A', 'PMT-B']);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual(['E2E-0', 'E2E-2', 'E2E-1']);
    expect(texts(xml, 'OrgnlCtrlSum')).toEqual(['6.00', '4.00', '2.00']);
  });

  it('reports a CSV batch as one payment information under its batch id, in the version asked for', async () => {
    const results = tmp.path('payroll.results.csv');
    const rows = [0, 1].map((i) => ({
      rowNumber: i + 2,
      cells: { reference: `PAY-${i}`, sourceAmount: '10.00', sourceCurrency: 'GBP', narration: 'n' },
      result: { status: 'NOT_SENT', idempotencyKey: `k${i}` },
    }));
    await writeResults(results, { format: 'csv', inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'narration'], rows });
    const out = tmp.path('payroll.pain002.xml');
    const batchId = 'a'.repeat(64);
    expect(await writeStatusReport(results, out, { batchId, version: 'pain.002.001.10' })).toBe('pain.002.001.10');
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.10')).toEqual([]);
    expect(texts(xml, 'OrgnlMsgId')).toEqual(['a'.repeat(35)]);
    expect(texts(xml, 'OrgnlMsgNmId')).toEqual(['payout-batch']);
    expect(texts(xml, 'OrgnlPmtInfId')).toEqual(['a'.repeat(35)]);
    expect(texts(xml, 'GrpSts')).toEqual(['ACTC']);
    // (the validator is not vacuous: a status code too long, an element out of order are refused)
    expect(await schemaErrors(xml.replace('<GrpSts>ACTC', '<GrpSts>ACTCX'), 'pain.002.001.10')).not.toEqual([]);
    expect(await schemaErrors(xml.replace(/<OrgnlMsgNmId>.*<\/OrgnlMsgNmId>/, ''), 'pain.002.001.10')).not.toEqual([]);
  });
});

/** Each transaction's amount element, as [element, Ccy, text, CcyOfTrf]. */
const amounts = (xml: string) =>
  [...xml.matchAll(/<(InstdAmt|EqvtAmt)\b[^>]*>([\s\S]*?)<\/\1>/g)].map(([whole, element, inner]) => {
    const [, ccy, value] = /Ccy="([A-Z]{3})">([^<]+)</.exec(whole)!;
    return [element, ccy, value, /<CcyOfTrf>([A-Z]{3})</.exec(inner!)?.[1]];
  });

/** The pain.002 (valid against its schema) of the results of the pain.001 `sent`, each row's cells edited by `edit` (for a retry). */
async function reportOfPain001(sent: string, edit: (cells: ResultRow['cells'], i: number) => ResultRow['cells'] = (c) => c) {
  const src = await readBatch(sent);
  const rows: ResultRow[] = [];
  for await (const r of src.rows)
    rows.push({
      rowNumber: r.rowNumber,
      cells: edit(r.cells, rows.length),
      result: { status: 'PENDING', idempotencyKey: `k${r.rowNumber}` },
    });
  const results = tmp.path('erp.results.csv');
  await writeResults(results, { format: 'csv', inputColumns: src.columns, rows });
  const out = tmp.path('erp.pain002.xml');
  const version = await writeStatusReport(results, out);
  const xml = readFileSync(out, 'utf8');
  expect(await schemaErrors(xml, version)).toEqual([]);
  return xml;
}

describe('pain.002 of a pain.001: the original transactions as the ERP sent them', () => {
  it.each(PAIN001_VERSIONS)('echoes each amount and control sum of a %s as written (650000.00, not 650000)', async (v) => {
    const sent = join(root, SAMPLES[v]);
    const xml = await reportOfPain001(sent);
    const pain001 = readFileSync(sent, 'utf8');
    expect(amounts(xml)).toEqual(amounts(pain001));
    expect(texts(xml, 'OrgnlCtrlSum')).toEqual(texts(pain001, 'CtrlSum'));
  });

  it.each(PAIN001_VERSIONS)(
    'echoes each EndToEndId and amount element (InstdAmt or EqvtAmt) of a %s, whatever a retry edited',
    async (v) => {
      const sent = join(root, SAMPLES[v]);
      let eqvt = -1;
      // edited for a retry: another reference (the first was refused), another amount and currency to receive
      const xml = await reportOfPain001(sent, (cells, i) => {
        if (eqvt < 0 && cells.sourceCurrency !== cells.destinationCurrency) eqvt = i;
        if (i !== 0 && i !== eqvt) return cells;
        return { ...cells, reference: `EDITED-${i}`, sourceAmount: '1.23', destinationCurrency: 'GBP' };
      });
      const pain001 = readFileSync(sent, 'utf8');
      expect(texts(xml, 'OrgnlEndToEndId')).toEqual(texts(pain001, 'EndToEndId'));
      expect(amounts(xml)).toEqual(amounts(pain001));
      expect(amounts(xml)[eqvt]![0]).toBe('EqvtAmt');
      expect(texts(xml, 'OrgnlCtrlSum')).toEqual(texts(pain001, 'CtrlSum'));
    },
  );

  it("reports an amount refused for a currency other than DbtrAcct/Ccy in its own currency, not the account's", async () => {
    const usd = pain001(
      sampleRows().filter((r) => r.method === 'ACH'),
      'pain.001.001.03',
    );
    const sent = tmp.path('eur-from-usd.xml');
    writeFileSync(sent, usd.replace('<InstdAmt Ccy="USD">', '<InstdAmt Ccy="EUR">'));
    const xml = await reportOfPain001(sent);
    expect(amounts(xml)[0]).toEqual(['InstdAmt', 'EUR', '5200.00', undefined]);
    expect(amounts(xml)).toEqual(amounts(readFileSync(sent, 'utf8')));
  });

  it('echoes an equivalent amount whose CcyOfTrf or @Ccy is not in capitals as an equivalent amount, valid: never as instructed', async () => {
    const sent = tmp.path('lower-ccy.xml');
    const written = readFileSync(join(root, SAMPLES['pain.001.001.03']), 'utf8');
    writeFileSync(sent, written.replace('<CcyOfTrf>NGN<', '<CcyOfTrf>ngn<').replace('<Amt Ccy="USD">950.00<', '<Amt Ccy="usd">950.00<'));
    const xml = await reportOfPain001(sent);
    expect(amounts(xml)).toEqual(amounts(written));
  });

  it('echoes an amount written as xs:decimal also allows ("1500.", ".50") by its value, and sums it', async () => {
    const [first, second] = sampleRows().filter((r) => r.method === 'ACH');
    const xml = pain001(
      [
        { ...first!, sourceAmount: '1500.00' },
        { ...second!, sourceAmount: '0.50' },
      ],
      'pain.001.001.03',
    );
    const sent = tmp.path('xs-decimal.xml');
    writeFileSync(sent, xml.replace('>1500.00<', '>1500.<').replace('>0.50<', '>.50<'));
    const report = await reportOfPain001(sent);
    expect(amounts(report).map((a) => a[2])).toEqual(['1500', '0.5']);
    expect(texts(report, 'OrgnlCtrlSum').map(Number)).toEqual(texts(xml, 'CtrlSum').map(Number)); // (1500.5: its amounts' decimals)
  });
});

describe('the file a pain.002 replaces', () => {
  it('is only an earlier report: never the results or the batch named by mistake', async () => {
    const results = tmp.path('named.results.csv');
    await writeResults(results, {
      format: 'csv',
      inputColumns: COLUMNS,
      rows: [row(0, 'PMT-A', '10.00', { status: 'PENDING', payoutId: 'p' })],
    });
    const batch = tmp.path('named.xml');
    writeFileSync(batch, '<?xml version="1.0"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03"></Document>\n');
    const before = [readFileSync(results, 'utf8'), readFileSync(batch, 'utf8')];
    for (const path of [results, batch])
      await expect(writeStatusReport(results, path)).rejects.toMatchObject({
        code: 'WRITE_FAILED',
        message: expect.stringContaining('not replaced'),
      });
    expect([readFileSync(results, 'utf8'), readFileSync(batch, 'utf8')]).toEqual(before);
    const out = tmp.path('named.pain002.xml');
    await writeStatusReport(results, out);
    await writeStatusReport(results, out, { version: 'pain.002.001.10' }); // an earlier report is replaced, whatever its version
    expect(readFileSync(out, 'utf8')).toContain('pain.002.001.10');
  });
});

describe('pain.002 of cells XML cannot carry as they are', () => {
  const report = async (name: string, rows: { rowNumber: number; cells: Record<string, string>; result: ResultValues }[]) => {
    const results = tmp.path(`${name}.results.csv`);
    await writeResults(results, { format: 'csv', inputColumns: COLUMNS, rows });
    const out = tmp.path(`${name}.pain002.xml`);
    await writeStatusReport(results, out);
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.03')).toEqual([]);
    return xml;
  };

  it('stays well-formed when a reference or a message holds a control character (a CSV batch can)', async () => {
    const r = row(0, 'PMT-A', '10.00', { status: 'INVALID', errorCode: 'INVALID_TEXT', errorMessage: 'the reference \u001b[31m' });
    const xml = await report('control', [{ ...r, cells: { ...r.cells, reference: 'PAY-\u001b[31m-1' } }]);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual(['PAY-\uFFFD[31m-1']);
    expect(texts(xml, 'AddtlInf')).toEqual(['INVALID_TEXT: the reference \uFFFD[31m']);
  });

  it('echoes a reference and a message holding an entity\'s text ("R&amp;D") as they are, not as what it names', async () => {
    const r = row(0, 'PMT-A', '10.00', { status: 'REJECTED', payoutId: 'p', statusReason: 'name &lt;unknown&gt; &#65; & co' });
    const xml = await report('entity', [{ ...r, cells: { ...r.cells, reference: 'R&amp;D-1 & AT&T' } }]);
    expect(readTexts(xml, 'OrgnlEndToEndId')).toEqual(['R&amp;D-1 & AT&T']);
    expect(readTexts(xml, 'AddtlInf')).toEqual(['name &lt;unknown&gt; &#65; & co']);
  });

  it('never cuts a reference longer than OrgnlEndToEndId holds (two would read as one): left out, written whole in RmtInf', async () => {
    const [a, b] = ['A', 'B'].map((x) => `INVOICE-2025-01-SUPPLIER-ACME-00001-${x}`) as [string, string]; // (37 characters, the same first 35)
    const rows = [a, b, 'E2E-2'].map((reference, i) => {
      const r = row(i, 'PMT-A', '10.00', { status: 'SUCCESSFUL', payoutId: `p${i}`, payoutRef: reference });
      return { ...r, cells: { ...r.cells, reference } };
    });
    const xml = await report('long', rows);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual(['E2E-2']);
    expect(texts(xml, 'AcctSvcrRef')).toEqual(['E2E-2']);
    expect(texts(xml, 'Ustrd')).toEqual([a, b]);
  });

  it('echoes a 35-character EndToEndId holding a character beyond U+FFFF whole, and never splits one', async () => {
    const id = `${'A'.repeat(33)}𠮷B`; // 35 characters of Max35Text, 36 UTF-16 units
    const r = row(0, 'PMT-A', '10.00', { status: 'REJECTED', payoutId: 'p', statusReason: `${'x'.repeat(104)}😀 compliance` });
    const xml = await report('astral', [{ ...r, cells: { ...r.cells, reference: id } }]);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual([id]);
    expect(texts(xml, 'AddtlInf')).toEqual([`${'x'.repeat(104)}😀`, ' compliance']);
  });
});

describe('pain.002 of a CSV or Excel batch: its amounts as the run read them', () => {
  // (Excel's #,##0.00 amounts read back as "1,000.00")
  it.each(['csv', 'xlsx'] as const)(
    'reports a %s amount "1.234,56" as 1234.56 and sums it, a negative one (refused) as none, never its opposite',
    async (format) => {
      const results = tmp.path(`decimal-comma.results.${format}`);
      const rows = [
        ['1.234,56', { status: 'SUCCESSFUL', payoutId: 'p0' }],
        ['1,000.00', { status: 'SUCCESSFUL', payoutId: 'p1' }],
        ['-100.00', { status: 'INVALID', errorCode: 'INVALID_AMOUNT', errorMessage: 'the amount is negative' }],
      ].map(([sourceAmount, result], i) => ({
        rowNumber: i + 2,
        cells: { reference: `PAY-${i}`, sourceAmount: sourceAmount as string, sourceCurrency: 'EUR', narration: 'n' },
        result: { idempotencyKey: `k${i}`, ...(result as ResultValues) },
      }));
      await writeResults(results, { format, inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'narration'], rows });
      const out = tmp.path('decimal-comma.pain002.xml');
      await writeStatusReport(results, out, { batchId: 'payroll' });
      const xml = readFileSync(out, 'utf8');
      expect(await schemaErrors(xml, 'pain.002.001.03')).toEqual([]);
      expect(amounts(xml)).toEqual([
        ['InstdAmt', 'EUR', '1234.56', undefined],
        ['InstdAmt', 'EUR', '1000.00', undefined],
      ]);
      expect(texts(xml, 'DtldCtrlSum')).toEqual(['2234.56', '0']);
    },
  );

  it("stays valid when the amounts sum past DecimalNumber's 18 digits (account numbers in the amount column): no control sum", async () => {
    const results = tmp.path('swapped.results.csv');
    const invalid = { status: 'INVALID', errorCode: 'INVALID_AMOUNT', errorMessage: 'the amount has 18 significant digits' };
    const rows = ['123456789012345678', '987654321098765432', '100.50'].map((sourceAmount, i) => ({
      rowNumber: i + 2,
      cells: { reference: `PAY-${i}`, sourceAmount, sourceCurrency: 'EUR', narration: 'n' },
      result: { idempotencyKey: `k${i}`, ...(i < 2 ? invalid : { status: 'SUCCESSFUL', payoutId: 'p' }) },
    }));
    await writeResults(results, { format: 'csv', inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'narration'], rows });
    const out = tmp.path('swapped.pain002.xml');
    await writeStatusReport(results, out, { batchId: 'payroll' });
    const xml = readFileSync(out, 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.03')).toEqual([]);
    expect(texts(xml, 'OrgnlCtrlSum')).toEqual([]);
    expect(texts(xml, 'DtldCtrlSum')).toEqual(['100.50']); // (the rejected ones' alone is past 18 digits too)
    expect(amounts(xml).map((a) => a[2])).toEqual(['123456789012345678', '987654321098765432', '100.50']);
  });
});
