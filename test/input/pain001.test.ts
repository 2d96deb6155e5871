// The pain.001 reader: the samples read as the sample payroll's CSV, the carried columns, the
// refusals of the whole file (control totals, DOCTYPE, another message) and the row errors that
// name an element's XPath.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/input/read-batch.ts';
import { writeResults } from '../../src/results/write.ts';
import { formatProblem, validateBatch, type ValidatedRow } from '../../src/validation/validation.ts';
import { PAIN001_VERSIONS, type Pain001Version } from '../../src/spec/iso20022.ts';
import { pain001, root, sampleRows, SAMPLES } from './pain001-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-pain001-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer) => {
  const p = join(dir, `p${++n}.xml`);
  writeFileSync(p, content);
  return p;
};

async function read(path: string, documents?: string) {
  const v = await validateBatch(path, documents === undefined ? {} : { documents });
  const rows: ValidatedRow[] = [];
  for await (const r of v.rows) rows.push(r);
  return { v, rows };
}

async function refusal(path: string): Promise<InputError> {
  const e = await read(path).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
}

const usa = sampleRows().filter((r) => r.method === 'ACH');

describe.each(PAIN001_VERSIONS)('%s sample', (version: Pain001Version) => {
  it('is committed as the generator writes it', () => {
    expect(readFileSync(join(root, SAMPLES[version]), 'utf8')).toBe(pain001(sampleRows(), version));
  });

  it('gives the same payouts as the sample CSV, with the message carried to the results', async () => {
    const xml = await read(join(root, SAMPLES[version]), join(root, 'samples', 'documents'));
    const csv = await read(join(root, 'samples', 'payroll-2025-01.csv'));
    expect(xml.v.source.format).toBe('pain.001');
    expect(xml.v.summary).toMatchObject({ rows: 52, valid: 52, invalid: 0 });
    const byRef = new Map(csv.rows.map((r) => [r.payout!.reference, r.payout!]));
    for (const r of xml.rows) {
      const { rowNumber: _n, notBefore, ...payout } = r.payout!;
      expect(notBefore).toBe('2025-01-31');
      const { rowNumber: _m, ...expected } = byRef.get(payout.reference)!;
      // CdtrAcct/Id holds an IBAN or another id, not both: for SWIFT the IBAN is the account number
      const { iban } = expected.beneficiary;
      if (expected.method === 'SWIFT' && iban) expected.beneficiary = { ...expected.beneficiary, accountNumber: iban };
      expect(payout).toEqual(expected);
    }
    expect(xml.rows[0]!.cells).toMatchObject({
      reference: 'PAYROLL-2025-01-001',
      MsgId: 'ACME-PAYROLL-2025-01',
      MsgNmId: version,
      PmtInfId: 'PMT-001-NIP-NGN',
      InstrId: 'INSTR-0001',
      ReqdExctnDt: '2025-01-31',
      documentsMatchedBy: 'RfrdDocInf/Nb',
    });
  });
});

it('a requested time (v09 DtTm) is not sent before its UTC day, nor before the day it names', async () => {
  const at = (dtTm: string) =>
    pain001(usa, 'pain.001.001.09').replace(
      /<ReqdExctnDt>\s*<Dt>[^<]*<\/Dt>\s*<\/ReqdExctnDt>/g,
      `<ReqdExctnDt><DtTm>${dtTm}</DtTm></ReqdExctnDt>`,
    );
  // 22:00 in New York is 03:00 UTC the next day; 01:00 in Karachi is 20:00 UTC the day before
  for (const [dtTm, day] of [
    ['2025-01-31T22:00:00-05:00', '2025-02-01'],
    ['2025-02-01T01:00:00+05:00', '2025-02-01'],
    ['2025-01-31T22:00:00', '2025-01-31'],
    // 24:00 (xs:dateTime's end of a day) in UTC is the next day's first instant
    ['2025-01-31T24:00:00Z', '2025-02-01'],
    // and without a zone too: never paid the day before that instant, wherever the debtor's day is
    ['2025-01-31T24:00:00', '2025-02-01'],
  ]) {
    const { rows } = await read(file(at(dtTm!)));
    expect(
      rows.map((r) => r.payout?.notBefore),
      dtTm,
    ).toEqual(rows.map(() => day));
  }
});

it('the pain.001 template (`template --format pain.001`) is one valid transaction', async () => {
  const { v, rows } = await read(join(root, 'templates', 'payout-template-pain001.xml'));
  expect(v.summary).toMatchObject({ rows: 1, valid: 1, errors: 0 });
  expect(rows[0]!.payout!.method).toBe('SEPA');
});

describe('pain.001 refused whole', () => {
  it('a group CtrlSum that is not the sum of the amounts, naming both', async () => {
    const e = await refusal(file(pain001(usa, 'pain.001.001.03', { ctrlSum: '32100.01' })));
    expect(e.code).toBe('CONTROL_TOTALS');
    expect(e.message).toContain('/Document/CstmrCdtTrfInitn/GrpHdr');
    expect(e.message).toContain('CtrlSum says 32100.01, the amounts add up to 32100');
  });

  it('a CtrlSum the amounts cannot add up to names the amounts that are no xs:decimal, never only a sum without them', async () => {
    const xml = pain001(usa.slice(0, 3), 'pain.001.001.09');
    const bad = xml
      .replace(/(<InstdAmt Ccy="USD">)([^<]*)/, '$11,$2')
      .replace(/(<InstdAmt Ccy="USD">[^]*?<InstdAmt Ccy="USD">)([^<]*)/, '$1$2 USD');
    const e = await refusal(file(bad));
    expect(e.code).toBe('CONTROL_TOTALS');
    expect(e.message).toMatch(
      /the amounts add up to [\d.]+ without \/Document\/CstmrCdtTrfInitn\/PmtInf\[1\]\/CdtTrfTxInf\[1\]\/Amt\/InstdAmt "1,[\d.]+" and 1 more, not an xs:decimal/,
    );
  });

  it("a PmtInf's NbOfTxs that is not its count of transactions", async () => {
    const xml = pain001(usa, 'pain.001.001.09').replace(
      '<PmtMtd>TRF</PmtMtd>\n      <NbOfTxs>6<',
      '<PmtMtd>TRF</PmtMtd>\n      <NbOfTxs>5<',
    );
    const e = await refusal(file(xml));
    expect(e.code).toBe('CONTROL_TOTALS');
    expect(e.message).toContain('/Document/CstmrCdtTrfInitn/PmtInf[1] do not match: NbOfTxs says 5, the transactions are 6');
  });

  it("a PmtInf may leave its NbOfTxs out (the schema's 0..1) and write it with leading zeros; the group header may not leave it out", async () => {
    const xml = pain001(usa, 'pain.001.001.09');
    const block = '<PmtMtd>TRF</PmtMtd>\n      <NbOfTxs>6</NbOfTxs>';
    expect(xml).toContain(block);
    for (const written of ['<PmtMtd>TRF</PmtMtd>', '<PmtMtd>TRF</PmtMtd>\n      <NbOfTxs>06</NbOfTxs>'])
      expect((await read(file(xml.replace(block, written)))).v.summary).toMatchObject({ rows: 6, valid: 6 });
    const e = await refusal(file(xml.replace(/<GrpHdr>([\s\S]*?)<NbOfTxs>\d+<\/NbOfTxs>/, '<GrpHdr>$1')));
    expect(e.message).toContain('/Document/CstmrCdtTrfInitn/GrpHdr do not match: NbOfTxs says (nothing), the transactions are 6');
  });

  it("an amount with zeros past the currency's decimals (xs:decimal 1.500 is 1.5) is that amount, never a thousands separator", async () => {
    const xml = pain001([{ ...usa[0]!, sourceAmount: '1.50' }, ...usa.slice(1)], 'pain.001.001.03');
    for (const amount of ['1.500', '1.5000000']) {
      const { v, rows } = await read(file(xml.replace('<InstdAmt Ccy="USD">1.50<', `<InstdAmt Ccy="USD">${amount}<`)));
      expect(v.summary).toMatchObject({ rows: 6, valid: 6 });
      expect(rows[0]!.payout!.sourceAmount.toFixed()).toBe('1.5');
    }
  });

  it('amounts written as xs:decimal also allows (.50, +12.00) add up to the control sums, never refusing the file', async () => {
    const xml = pain001(
      [
        { ...usa[0]!, sourceAmount: '0.50' },
        { ...usa[1]!, sourceAmount: '12.00' },
      ],
      'pain.001.001.03',
    );
    const written = xml.replace('<InstdAmt Ccy="USD">0.50<', '<InstdAmt Ccy="USD">.50<').replace('>12.00<', '>+12.00<');
    const { v, rows } = await read(file(written));
    expect(v.summary).toMatchObject({ rows: 2, valid: 2 });
    expect(rows.map((r) => r.payout!.sourceAmount.toFixed())).toEqual(['0.5', '12']);
  });

  it('a DOCTYPE with an internal entity, and one with an external entity, never read', async () => {
    const internal = '<!DOCTYPE Document [<!ENTITY who "Mallory">]>';
    const external = '<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';
    for (const prolog of [internal, external]) {
      const xml = pain001(usa, 'pain.001.001.03', { prolog }).replace('<Nm>James Carter</Nm>', '<Nm>&xxe;&who;</Nm>');
      const e = await refusal(file(xml));
      expect(e.code).toBe('XML_DTD');
      expect(e.message).not.toContain('root:');
    }
  });

  it('an XML document of another message, by its namespace', async () => {
    const xml = pain001(usa, 'pain.001.001.03').replace('pain.001.001.03', 'pain.001.001.12');
    const e = await refusal(file(xml));
    expect(e.code).toBe('UNSUPPORTED_FORMAT');
    expect(e.message).toContain('urn:iso:std:iso:20022:tech:xsd:pain.001.001.12');
  });

  it('a payment block before the group header (or none): refused, no transaction taken for the header', async () => {
    const xml = pain001(usa, 'pain.001.001.03');
    const header = xml.slice(xml.indexOf('<GrpHdr>'), xml.indexOf('<PmtInf>'));
    for (const moved of [xml.replace(header, '').replace('</CstmrCdtTrfInitn>', `${header}</CstmrCdtTrfInitn>`), xml.replace(header, '')]) {
      const e = await refusal(file(moved));
      expect(e.code).toBe('MALFORMED_XML');
      expect(e.message).toContain('/Document/CstmrCdtTrfInitn/PmtInf[1] comes before GrpHdr');
    }
  });

  it('XML that is not well-formed', async () => {
    const e = await refusal(file(pain001(usa, 'pain.001.001.09').replace('</Cdtr>', '')));
    expect(e.code).toBe('MALFORMED_XML');
  });
});

describe('pain.001 transactions', () => {
  it('a USD transfer in the USA without a payment type is ambiguous: invalid, naming the element and what would be valid', async () => {
    const { rows } = await read(file(pain001(usa, 'pain.001.001.09', { paymentType: { ACH: undefined } })));
    expect(rows.map((r) => r.valid)).toEqual(usa.map(() => false));
    const p = rows[2]!.problems.filter((x) => x.severity === 'error');
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ code: 'UNMAPPABLE_TRANSACTION', column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/PmtTpInf' });
    expect(formatProblem(p[0]!)).toMatch(
      /\.xml \/Document\/CstmrCdtTrfInitn\/PmtInf\[1\]\/PmtTpInf: error UNMAPPABLE_TRANSACTION: .*ACH or by WIRE.*URGP \(WIRE\) or NURG \(ACH\)/,
    );
  });

  it("the intermediary agent's BIC is the intermediarySwift of a SWIFT transfer, never dropped", async () => {
    const swift = sampleRows().filter((r) => r.reference === 'PAYROLL-2025-01-049');
    for (const [version, bic] of [
      ['pain.001.001.03', 'BIC'],
      ['pain.001.001.09', 'BICFI'],
    ] as const) {
      const via = `<IntrmyAgt1><FinInstnId><${bic}>CHASUS33</${bic}></FinInstnId></IntrmyAgt1>`;
      const { rows } = await read(file(pain001(swift, version).replace('<CdtrAgt>', `${via}<CdtrAgt>`)));
      expect(rows[0]!.payout!.beneficiary.intermediarySwift).toBe('CHASUS33');
    }
  });

  it('a pain.001 not in UTF-8 is told to be saved as UTF-8, never given --encoding (a CSV option)', async () => {
    const xml = pain001(usa.slice(0, 1), 'pain.001.001.03').replace('<Nm>James Carter</Nm>', '<Nm>Jürgen Müller</Nm>');
    const { rows } = await read(file(Buffer.from(xml, 'latin1')));
    const p = rows[0]!.problems.find((x) => x.code === 'ENCODING')!;
    expect(p.expected).toBe('the file saved as UTF-8, as ISO 20022 messages are');
    const e = await refusal(file(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')])));
    expect(e.message).toContain('not an XML document in UTF-8');
  });

  it('EndToEndId NOTPROVIDED (ISO 20022\'s "no reference") is no reference: invalid, never another payout\'s', async () => {
    const xml = pain001(usa.slice(0, 2), 'pain.001.001.03').replace(`<EndToEndId>${usa[0]!.reference}<`, '<EndToEndId>NOTPROVIDED<');
    const { rows } = await read(file(xml));
    expect(rows.map((r) => r.valid)).toEqual([false, true]);
    expect(rows[0]!.problems.filter((p) => p.severity === 'error')).toEqual([
      expect.objectContaining({
        code: 'UNMAPPABLE_TRANSACTION',
        column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/PmtId/EndToEndId',
      }),
    ]);
  });

  it('LclInstrm/Prtry names a method as the spec writes it (HONG_KONG_FPS, hk_fps): that method, never another one', async () => {
    const hk = sampleRows().find((r) => r.method === 'HK_FPS' && r.accountNumber)!;
    // a USD transfer to an account in Hong Kong by FPS, its bank's BIC and name given: the table's other lines make it SWIFT
    const usd = {
      ...hk,
      sourceCurrency: 'USD',
      destinationCurrency: 'USD',
      accountCurrency: 'USD',
      swiftCode: 'HSBCHKHHXXX',
      bankName: 'HSBC',
    };
    for (const prtry of ['HONG_KONG_FPS', 'hk_fps', 'Hong-Kong FPS']) {
      const xml = pain001([usd], 'pain.001.001.09', { paymentType: { HK_FPS: { LclInstrm: { Prtry: prtry } } } });
      const { rows } = await read(file(xml));
      expect(rows[0]!.payout?.method, prtry).toBe('HK_FPS');
    }
  });

  it('a reference or payment used twice names the elements of both transactions, not rows and columns the file has none of', async () => {
    const [a, b] = [usa[0]!, usa[1]!];
    const xml = pain001([a, { ...b, reference: a.reference! }, { ...a, reference: `${a.reference}-2` }], 'pain.001.001.09');
    const { rows } = await read(file(xml));
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf';
    const errors = rows.map((r) => r.problems.filter((p) => p.severity === 'error'));
    expect(errors[0]).toEqual([]);
    expect(errors[1]).toMatchObject([{ code: 'DUPLICATE_REFERENCE', column: `${at}[2]/PmtId/EndToEndId` }]);
    expect(formatProblem(errors[1]![0]!)).toContain(
      `${at}[2]/PmtId/EndToEndId: error DUPLICATE_REFERENCE: the reference is already used by ${at}[1]:`,
    );
    expect(errors[2]).toMatchObject([{ code: 'PROBABLE_DUPLICATE', column: `${at}[3]/Amt/InstdAmt` }]);
    expect(errors[2]![0]!.message).toContain(`as ${at}[1]:`);
  });

  it('an amount is exactly what xs:decimal allows: "1500." is 1500; a thousands separator is invalid at its element, never read', async () => {
    const xml = pain001([{ ...usa[0]!, sourceAmount: '1500.00' }], 'pain.001.001.09').replace(/<CtrlSum>[^<]*<\/CtrlSum>/g, ''); // (0..1)
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt';
    for (const [written, amount] of [
      ['1500.', '1500'],
      ['+1500.', '1500'],
      ['1,500.00', undefined],
      ['1.500.000', undefined],
      ['1 500.00', undefined],
    ]) {
      const { rows } = await read(file(xml.replace('>1500.00<', `>${written}<`)));
      expect(rows[0]!.payout?.sourceAmount.toFixed()).toBe(amount);
      const errors = rows[0]!.problems.filter((p) => p.severity === 'error').map((p) => [p.code, p.column]);
      expect(errors).toEqual(amount ? [] : [['INVALID_AMOUNT', at]]);
    }
  });

  it("an amount's currency not in capitals is refused as such at its @Ccy, with DbtrAcct/Ccy or without, never read as another", async () => {
    const xml = pain001(
      sampleRows()
        .filter((r) => r.method === 'SEPA')
        .slice(0, 1),
      'pain.001.001.09',
    ).replace('<InstdAmt Ccy="EUR">', '<InstdAmt Ccy="eur">');
    const noDebitCcy = xml.replace(/(<DbtrAcct>[^]*?)<Ccy>EUR<\/Ccy>/, '$1');
    expect(noDebitCcy).not.toBe(xml);
    for (const written of [xml, noDebitCcy]) {
      const { rows } = await read(file(written));
      const errors = rows[0]!.problems.filter((p) => p.severity === 'error');
      expect(errors).toMatchObject([
        { code: 'INVALID_CURRENCY', column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt/@Ccy', value: 'eur' },
      ]);
      expect(formatProblem(errors[0]!)).toContain('3 capital letters');
    }
  });

  it('an amount with more decimals than its currency is AMOUNT_PRECISION at its element, never read as thousands', async () => {
    const xml = pain001([{ ...usa[0]!, sourceAmount: '1.555' }, ...usa.slice(1)], 'pain.001.001.03');
    const { rows } = await read(file(xml.replace(/<CtrlSum>[^<]*<\/CtrlSum>/g, ''))); // (the schema's 0..1)
    expect(rows[0]!.problems.filter((p) => p.severity === 'error')).toMatchObject([
      {
        code: 'AMOUNT_PRECISION',
        column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Amt/InstdAmt',
        message: '1.555 has 3 decimals; USD has 2: round it to 1.56 or 1.55 yourself',
      },
    ]);
  });

  it('a structured remittance (a creditor reference, or the invoices referred to) without Ustrd is the narration', async () => {
    const xml = pain001(usa.slice(0, 2), 'pain.001.001.03').replace(/<Ustrd>[^<]*<\/Ustrd>/g, '');
    const reference = '<CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>RF18539007547034</Ref></CdtrRefInf>';
    const { rows } = await read(file(xml.replace('</Strd>', `${reference}</Strd>`)));
    expect(rows.map((r) => [r.valid, r.payout?.narration])).toEqual([
      [true, 'RF18539007547034'],
      [true, 'payslip-2025-01-US002'],
    ]);
  });

  it('a missing value names the element that would hold it, not the column it becomes', async () => {
    const xml = pain001(usa.slice(0, 1), 'pain.001.001.03').replace(/<Nm>James Carter<\/Nm>|<Ustrd>[^<]*<\/Ustrd>|<Strd>[^]*<\/Strd>/g, '');
    const { rows } = await read(file(xml));
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/';
    expect(rows[0]!.problems.filter((p) => p.code === 'MISSING_VALUE').map((p) => p.column)).toEqual([`${at}RmtInf/Ustrd`, `${at}Cdtr/Nm`]);
  });

  it('a UK IBAN written in groups (as printed) still gives the sort code and account number, never "needs sortCode"', async () => {
    const uk = sampleRows()
      .filter((r) => r.method === 'FASTER_PAYMENTS' || r.method === 'BACS')
      .slice(0, 2);
    const xml = pain001(uk, 'pain.001.001.09')
      .replace('<IBAN>GB29NWBK60161331926819</IBAN>', '<IBAN>GB29 NWBK 6016 1331 9268 19</IBAN>')
      .replace(/<IBAN>(GB\w+)<\/IBAN>/, (_m, i: string) => `<IBAN>${i.toLowerCase()}</IBAN>`);
    const { rows } = await read(file(xml));
    expect(rows.map((r) => r.problems.filter((p) => p.severity === 'error'))).toEqual([[], []]);
    expect(rows.map((r) => r.payout?.beneficiary)).toMatchObject(
      uk.map((r) => ({ iban: r.iban, sortCode: r.sortCode, accountNumber: r.accountNumber })),
    );
  });

  it('an agent\'s BIC written in groups gives the country of its characters 5-6, never a country " D"', async () => {
    const swift: Record<string, string> = { ...sampleRows().find((r) => r.method === 'SWIFT')!, iban: '' };
    const xml = pain001([swift], 'pain.001.001.09').replace(`<BICFI>${swift.swiftCode!}</BICFI>`, '<BICFI>COBA DE FF XXX</BICFI>');
    const { rows } = await read(file(xml));
    expect(rows[0]!.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(rows[0]!.payout).toMatchObject({ destinationCountryCode: 'DEU', beneficiary: { swiftCode: 'COBADEFFXXX' } });
  });

  it('a missing routing number, sort code or bank code names ClrSysMmbId/MmbId, never an element that does not exist', async () => {
    const xml = pain001(usa.slice(0, 1), 'pain.001.001.03').replace(/<ClrSysMmbId>[^]*?<\/ClrSysMmbId>/, '');
    const { rows } = await read(file(xml));
    expect(rows[0]!.problems.filter((p) => p.code === 'MISSING_VALUE').map((p) => p.column)).toEqual([
      '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/CdtrAgt/FinInstnId/ClrSysMmbId/MmbId',
    ]);
  });

  it('a bad value names its element', async () => {
    const xml = pain001(usa, 'pain.001.001.03').replace('<MmbId>021000021</MmbId>', '<MmbId>021000022</MmbId>');
    const { rows } = await read(file(xml));
    const p = rows[0]!.problems.find((x) => x.code === 'INVALID_ROUTING_NUMBER')!;
    expect(p.column).toBe('/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/CdtrAgt/FinInstnId/ClrSysMmbId/MmbId');
  });

  it("charges borne by the payee (ChrgBr CRED or SHAR, the transaction's over its block's) are invalid: the service charges the sender", async () => {
    const block = (chrgBr: string) => pain001(usa.slice(0, 3), 'pain.001.001.09').replace('<ChrgBr>SLEV<', `<ChrgBr>${chrgBr}<`);
    // (a transaction's ChrgBr follows its Amt)
    const tx = (xml: string, n: number, chrgBr: string) =>
      xml.replace(new RegExp(`(${usa[n]!.reference}</EndToEndId>\\s*</PmtId>\\s*<Amt>[^]*?</Amt>)`), `$1<ChrgBr>${chrgBr}</ChrgBr>`);
    const { rows } = await read(file(tx(block('CRED'), 1, 'DEBT')));
    expect(rows.map((r) => r.valid)).toEqual([false, true, false]);
    const p = rows[0]!.problems.filter((x) => x.severity === 'error');
    expect(p).toMatchObject([{ code: 'UNMAPPABLE_TRANSACTION', column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/ChrgBr', value: 'CRED' }]);
    expect(formatProblem(p[0]!)).toMatch(
      /\.xml \/Document\/CstmrCdtTrfInitn\/PmtInf\[1\]\/ChrgBr: error .*\(value "CRED"\); expected .*DEBT or SLEV, or leave it out/,
    );
    const shared = await read(file(tx(block('DEBT'), 0, 'SHAR')));
    expect(shared.rows.map((r) => r.valid)).toEqual([false, true, true]);
    expect(shared.rows[0]!.problems.filter((x) => x.severity === 'error')).toMatchObject([
      { column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/ChrgBr', value: 'SHAR' },
    ]);
  });

  it("a transfer the service cannot make as ordered (a cheque, money held for the payee, two intermediaries, a rate of the payer's) is invalid, naming the element", async () => {
    const xml = pain001(usa.slice(0, 3), 'pain.001.001.09');
    const tx = (n: number, elements: string) =>
      xml.replace(new RegExp(`(${usa[n]!.reference}</EndToEndId>\\s*</PmtId>\\s*<Amt>[^]*?</Amt>)`), `$1${elements}`);
    const errors = async (x: string) => (await read(file(x))).rows.map((r) => r.problems.filter((p) => p.severity === 'error'));
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]';
    const cheque = await errors(xml.replace('<PmtMtd>TRF<', '<PmtMtd>CHK<'));
    expect(cheque).toMatchObject(
      usa.slice(0, 3).map(() => [{ code: 'UNMAPPABLE_TRANSACTION', column: `${at}/PmtMtd`, value: 'PmtMtd CHK' }]),
    );
    expect(formatProblem(cheque[0]![0]!)).toMatch(
      /PmtInf\[1\]\/PmtMtd: error .*by transfer .*\(value "PmtMtd CHK"\); expected PmtMtd TRF or TRA/,
    );
    for (const [ordered, value] of [
      ['<XchgRateInf><XchgRate>1.1</XchgRate><RateTp>AGRD</RateTp></XchgRateInf>', 'XchgRateInf/RateTp AGRD'],
      ['<XchgRateInf><RateTp>SPOT</RateTp><CtrctId>FX-77</CtrctId></XchgRateInf>', 'XchgRateInf/CtrctId FX-77'],
      ['<XchgRateInf><XchgRate>1.1</XchgRate></XchgRateInf>', 'XchgRateInf/RateTp (none)'],
    ])
      expect(await errors(tx(1, ordered!))).toMatchObject([[], [{ column: `${at}/CdtTrfTxInf[2]/${value!.split(' ')[0]}`, value }], []]);
    const instructions = (cds: string[]) =>
      xml.replace('<RmtInf>', cds.map((cd) => `<InstrForCdtrAgt><Cd>${cd}</Cd></InstrForCdtrAgt>`).join('') + '<RmtInf>');
    expect((await errors(instructions(['PHOB', 'HOLD'])))[0]).toMatchObject([
      { column: `${at}/CdtTrfTxInf[1]/InstrForCdtrAgt/Cd`, value: 'InstrForCdtrAgt/Cd HOLD' },
    ]);
    expect((await errors(instructions(['CHQB'])))[0]).toMatchObject([{ value: 'InstrForCdtrAgt/Cd CHQB' }]);
    const via = (n: number) => `<IntrmyAgt${n}><FinInstnId><BICFI>CHASUS3${n}</BICFI></FinInstnId></IntrmyAgt${n}>`;
    expect((await errors(xml.replace('<CdtrAgt>', `${via(1)}${via(2)}<CdtrAgt>`)))[0]).toMatchObject([
      { column: `${at}/CdtTrfTxInf[1]/IntrmyAgt2/FinInstnId/BICFI`, value: 'IntrmyAgt2/FinInstnId/BICFI CHASUS32' },
    ]);
    // an indicative rate, a transfer advice, a call to the payee: paid as ordered
    const harmless = tx(0, '<XchgRateInf><XchgRate>1.1</XchgRate><RateTp>SALE</RateTp></XchgRateInf>').replace(
      '<PmtMtd>TRF<',
      '<PmtMtd>TRA<',
    );
    expect(
      (await read(file(harmless.replace('<RmtInf>', '<InstrForCdtrAgt><Cd>PHOB</Cd></InstrForCdtrAgt><RmtInf>')))).v.summary,
    ).toMatchObject({ valid: 3 });
  });

  it("a creditor's address both structured and in lines (hybrid) keeps its AdrLines, never dropped", async () => {
    const wire = sampleRows().filter((r) => r.reference === 'PAYROLL-2025-01-020');
    const xml = pain001(wire, 'pain.001.001.09').replace(
      '</StrtNm>',
      '</StrtNm><BldgNb>7</BldgNb><AdrLine>Suite 1200</AdrLine><AdrLine>c/o Treasury</AdrLine>',
    );
    const { rows } = await read(file(xml));
    expect(rows[0]!.payout!.beneficiary.address).toBe('233 S Wacker Dr 7, Suite 1200, c/o Treasury');
  });

  it("the payer a transfer is made on behalf of (UltmtDbtr, its own or its PmtInf's) gives the remitter address, kept by its results", async () => {
    const xml = pain001(usa.slice(0, 3), 'pain.001.001.09');
    const payer = (inner: string) => `<UltmtDbtr><Nm>Client Holdings SA</Nm>${inner}</UltmtDbtr>`;
    const geneva =
      '<PstlAdr><StrtNm>Rue du Rhone</StrtNm><BldgNb>8</BldgNb><PstCd>1204</PstCd><TwnNm>Geneva</TwnNm><Ctry>CH</Ctry></PstlAdr>';
    const tx = (x: string, n: number, inner: string) =>
      x.replace(new RegExp(`(${usa[n]!.reference}</EndToEndId>\\s*</PmtId>\\s*<Amt>[^]*?</Amt>)`), `$1${payer(inner)}`);
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]';
    // the block's payer for all its transactions, unless one names its own
    const sent = file(
      tx(xml.replace('<ChrgBr>', `${payer(geneva)}<ChrgBr>`), 1, '<PstlAdr><TwnNm>Zurich</TwnNm><Ctry>CH</Ctry></PstlAdr>'),
    );
    const { v, rows } = await read(sent);
    expect(rows.map((r) => r.payout?.remitterAddress)).toEqual([
      'Rue du Rhone 8, Geneva, 1204, CH',
      'Zurich, CH',
      'Rue du Rhone 8, Geneva, 1204, CH',
    ]);
    // a retry reads the results file: the address goes again
    const results = join(dir, 'payer.results.csv');
    const cells = rows.map((r) => ({ rowNumber: r.rowNumber, cells: r.cells, result: { status: 'FAILED_TO_SEND', idempotencyKey: 'k' } }));
    await writeResults(results, { format: 'csv', inputColumns: v.source.columns, rows: cells });
    expect((await read(results)).rows.map((r) => r.payout?.remitterAddress)).toEqual(rows.map((r) => r.payout?.remitterAddress));
    // a payer with no address is refused (the payout would give the business's as the payer's), also on retry
    const nameOnly = await read(file(tx(xml, 0, '')));
    expect(nameOnly.rows.map((r) => r.problems.filter((p) => p.severity === 'error'))).toMatchObject([
      [{ code: 'UNMAPPABLE_TRANSACTION', column: `${at}/CdtTrfTxInf[1]/UltmtDbtr/PstlAdr`, value: 'Client Holdings SA' }],
      [],
      [],
    ]);
    const retried = nameOnly.rows.map((r) => ({
      rowNumber: r.rowNumber,
      cells: r.cells,
      result: { status: 'INVALID', idempotencyKey: 'k' },
    }));
    await writeResults(results, { format: 'csv', inputColumns: nameOnly.v.source.columns, rows: retried });
    expect((await read(results)).rows.map((r) => r.valid)).toEqual([false, true, true]);
    // (an ERP naming the debtor itself as the ultimate debtor: the business is the payer)
    const itself = await read(file(tx(xml, 0, '').replace('Client Holdings SA', 'ACME PAYROLL LTD')));
    expect(itself.rows.map((r) => r.valid)).toEqual([true, true, true]);
    // too long is refused at its PstlAdr, never cut
    const long = await read(file(tx(xml, 2, geneva.replace('Rue du Rhone', 'R'.repeat(200)))));
    expect(long.rows[2]!.problems.filter((p) => p.severity === 'error')).toMatchObject([
      { code: 'TOO_LONG', column: `${at}/CdtTrfTxInf[3]/UltmtDbtr/PstlAdr` },
    ]);
  });

  it('an UltmtDbtr without Nm names the payer by its identifier, shown as such, never by a part of its address', async () => {
    const xml = pain001(usa.slice(0, 1), 'pain.001.001.09');
    const at = '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]';
    const payer = async (inner: string, debtor = xml) => {
      const { rows } = await read(file(debtor.replace(/(<\/Amt>)/, `$1<UltmtDbtr>${inner}</UltmtDbtr>`)));
      const p = rows[0]!;
      return { cell: p.cells.UltmtDbtr, bic: p.cells.UltmtDbtrBIC, errors: p.problems.filter((x) => x.severity === 'error') };
    };
    const geneva = '<PstlAdr><StrtNm>Rue du Rhone</StrtNm><TwnNm>Geneva</TwnNm><Ctry>CH</Ctry></PstlAdr>';
    // an address alone names no payer: it is the remitter's address, not a name
    expect(await payer(geneva)).toEqual({ cell: '', bic: '', errors: [] });
    const othr = '<Id><OrgId><Othr><Id>CHE-123.456.789</Id></Othr></OrgId></Id>';
    expect(await payer(geneva + othr)).toEqual({ cell: 'Id/OrgId/Othr/Id CHE-123.456.789', bic: '', errors: [] });
    // its bank identifier is carried as UltmtDbtrBIC (screened as a BIC), and with no address the row is refused naming it
    expect(await payer('<Id><OrgId><AnyBIC>BKCHCNBJXXX</AnyBIC></OrgId></Id>')).toMatchObject({
      cell: 'Id/OrgId/AnyBIC BKCHCNBJXXX',
      bic: 'BKCHCNBJXXX',
      errors: [{ code: 'UNMAPPABLE_TRANSACTION', column: `${at}/UltmtDbtr/PstlAdr`, value: 'Id/OrgId/AnyBIC BKCHCNBJXXX' }],
    });
    // one named by nothing this tool shows (a person's id number is never printed) is still another payer: refused without an address
    expect(await payer('<Id><PrvtId><Othr><Id>756.1234.5678.97</Id></Othr></PrvtId></Id>')).toMatchObject({
      cell: '(no name: Id/PrvtId)',
      bic: '',
      errors: [{ code: 'UNMAPPABLE_TRANSACTION', column: `${at}/UltmtDbtr/PstlAdr`, value: '(no name: Id/PrvtId)' }],
    });
    // a name wins; the debtor's own identifier is the business paying
    expect(await payer(`<Nm>Client Holdings SA</Nm>${geneva}${othr}`)).toMatchObject({ cell: 'Client Holdings SA' });
    expect(await payer(othr, xml.replace(/(<Dbtr>\s*<Nm>Acme Payroll Ltd<\/Nm>)/, `$1${othr}`))).toEqual({
      cell: '',
      bic: '',
      errors: [],
    });
  });

  it("every part of a creditor's structured address reaches the address and the city (the state with the town), or refuses the row at PstlAdr", async () => {
    const wire = sampleRows().filter((r) => r.reference === 'PAYROLL-2025-01-020');
    const address = (v: string, parts: string) =>
      pain001(wire, v as Pain001Version).replace(/<PstlAdr>[^]*?<\/PstlAdr>/, `<PstlAdr>${parts}<Ctry>US</Ctry></PstlAdr>`);
    // (each version's elements in its schema's order; .03 has no BldgNm, Flr, PstBx, Room, TwnLctnNm, DstrctNm)
    const v09 =
      '<Dept>Treasury</Dept><SubDept>Payables</SubDept><StrtNm>S Wacker Dr</StrtNm><BldgNb>233</BldgNb><BldgNm>Willis Tower</BldgNm>' +
      '<Flr>12</Flr><PstBx>4410</PstBx><Room>1204</Room><PstCd>60606</PstCd><TwnNm>Chicago</TwnNm><TwnLctnNm>The Loop</TwnLctnNm>' +
      '<DstrctNm>Cook County</DstrctNm><CtrySubDvsn>IL</CtrySubDvsn>';
    const v03 =
      '<Dept>Treasury</Dept><SubDept>Payables</SubDept><StrtNm>S Wacker Dr</StrtNm><BldgNb>233</BldgNb><PstCd>60606</PstCd><TwnNm>Chicago</TwnNm><CtrySubDvsn>IL</CtrySubDvsn>';
    const beneficiary = async (xml: string) => (await read(file(xml))).rows[0]!.payout!.beneficiary;
    expect(await beneficiary(address('pain.001.001.09', v09))).toMatchObject({
      address: 'Treasury, Payables, Willis Tower, Floor 12, Room 1204, S Wacker Dr 233, PO Box 4410, Cook County, The Loop',
      city: 'Chicago, IL',
      postCode: '60606',
    });
    expect(await beneficiary(address('pain.001.001.03', v03))).toMatchObject({
      address: 'Treasury, Payables, S Wacker Dr 233',
      city: 'Chicago, IL',
    });
    // what becomes too long is refused, never cut
    const long = address(
      'pain.001.001.09',
      v09.replace('Payables', 'Accounts Payable and Receivables, Intercompany Settlements, Group Liquidity'),
    );
    const { rows } = await read(file(long));
    expect(rows[0]!.problems.filter((p) => p.severity === 'error')).toMatchObject([
      { code: 'TOO_LONG', column: '/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[1]/Cdtr/PstlAdr' },
    ]);
  });

  it('only a transfer between accounts of the same holder (Purp/Cd ACCT) is a withdrawal, never an intra-company payment (INTC)', async () => {
    const purpose = (cd: string) => pain001(usa.slice(0, 1), 'pain.001.001.03').replace('<RmtInf>', `<Purp><Cd>${cd}</Cd></Purp><RmtInf>`);
    for (const [cd, withdrawal] of [
      ['ACCT', true],
      ['INTC', false],
      ['CASH', false],
      ['SUPP', false],
    ] as const) {
      const { rows } = await read(file(purpose(cd)));
      expect([cd, rows[0]!.payout!.withdrawal]).toEqual([cd, withdrawal]);
    }
  });

  it('--documents: by end-to-end id first, else by the referred document number, saying which', async () => {
    const docs = join(dir, 'docs');
    mkdirSync(docs);
    const pdf = readFileSync(join(root, 'samples', 'documents', 'payslip-2025-01-US001.pdf'));
    writeFileSync(join(docs, `${usa[0]!.reference}.pdf`), pdf);
    writeFileSync(join(docs, 'payslip-2025-01-US002.pdf'), pdf);
    const { rows } = await read(file(pain001(usa.slice(0, 3), 'pain.001.001.03')), docs);
    expect(rows.map((r) => [r.cells.documents, r.cells.documentsMatchedBy])).toEqual([
      [join('docs', `${usa[0]!.reference}.pdf`), 'EndToEndId'],
      [join('docs', 'payslip-2025-01-US002.pdf'), 'RfrdDocInf/Nb'],
      [undefined, undefined],
    ]);
    expect(rows[2]!.problems.map((p) => p.code)).toEqual(['NO_DOCUMENT']);
  });
});
