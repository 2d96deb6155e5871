// Writes the committed templates/ and samples/ from their one source (examples.ts for templates,
// the tables below for samples). Run once after changing either:
//   npx tsx test/validation/generate-files.ts
// test/validation/templates.test.ts checks the committed templates equal what this produces.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { composeIBAN } from 'ibantools';
import { CANONICAL_FIELDS, type CanonicalField } from '../../src/input/batch-columns.ts';
import { templateFileName } from '../../src/validation/templates.ts';
import { TEMPLATE_METHODS, nubanCheckDigit, templateCsv, templateXlsx } from './examples.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// ------------------------------------------------------------------ templates

export function writeTemplates(dir = join(root, 'templates')): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const m of TEMPLATE_METHODS) {
    for (const format of ['csv', 'xlsx'] as const) {
      const name = templateFileName(m, format);
      writeFileSync(join(dir, name), format === 'csv' ? templateCsv(m) : templateXlsx(m));
      written.push(name);
    }
  }
  // the pain.001 template: the sample payroll's first SEPA transaction
  const pain = templateFileName(undefined, 'pain.001');
  writeFileSync(
    join(dir, pain),
    pain001(
      sampleRows()
        .filter((r) => r.method === 'SEPA')
        .slice(0, 1),
      'pain.001.001.09',
      { msgId: 'TEMPLATE' },
    ),
  );
  written.push(pain);
  return written;
}

// ------------------------------------------------------------------ samples: the January payroll

type Row = Partial<Record<CanonicalField, string>>;

const ibanOf = (cc: string, bban: string) => {
  const i = composeIBAN({ countryCode: cc, bban });
  if (!i) throw new Error(`bad sample IBAN ${cc} ${bban}`);
  return i;
};
const ukIban = (bank: string, sort: string, acc: string) => ibanOf('GB', `${bank}${sort}${acc}`);

let seq = 0;
const ref = () => `PAYROLL-2025-01-${String(++seq).padStart(3, '0')}`;
const payslip = (id: string) => `documents/payslip-2025-01-${id}.pdf`;

function base(
  src: string,
  dst: string,
  country: string,
  method: string,
  amount: string,
  name: string,
  narration: string,
  doc: string | undefined,
  withdrawal = false,
): Row {
  return {
    reference: ref(),
    sourceAmount: amount,
    sourceCurrency: src,
    destinationCurrency: dst,
    destinationCountryCode: country,
    method,
    accountName: name,
    accountCurrency: dst,
    narration,
    documents: doc ?? '',
    withdrawal: withdrawal ? 'true' : 'false',
  };
}

export function payrollRows(): Row[] {
  seq = 0;
  const rows: Row[] = [];
  // Lagos staff, NGN wallet, NIP
  const lagos: [string, string, string, string][] = [
    ['Adaeze Okafor', '058', '012345678', '650000.00'],
    ['Chinedu Eze', '044', '069123456', '480000.00'],
    ['Funmilayo Adeyemi', '033', '209876543', '520000.00'],
    ['Ibrahim Musa', '057', '100200300', '410000.00'],
    ['Ngozi Nwosu', '011', '305551234', '730000.00'],
    ['Tunde Bakare', '058', '044556677', '390000.00'],
    ['Aisha Bello', '044', '011223344', '455000.00'],
    ['Emeka Obi', '033', '123123123', '610000.00'],
    ['Kemi Ogunleye', '057', '222333444', '505000.50'],
  ];
  lagos.forEach(([name, bank, serial, amount], i) => {
    rows.push({
      ...base('NGN', 'NGN', 'NGA', 'NIP', amount, name, 'Salary January 2025', payslip(`NG${String(i + 1).padStart(3, '0')}`)),
      accountNumber: nubanCheckDigit(bank, serial),
      bankCode: bank,
    });
  });
  // the founder's own NGN account: a withdrawal, no document needed
  rows.push({
    ...base('NGN', 'NGN', 'NGA', 'NIP', '1500000.00', 'Olumide Adebayo', 'Owner drawing January 2025', undefined, true),
    accountNumber: nubanCheckDigit('011', '998877665'),
    bankCode: '011',
  });
  // Nigerian contractors paid from the USD wallet
  const ngContractors: [string, string, string, string][] = [
    ['Yetunde Afolabi', '058', '076543210', '1200.00'],
    ['Segun Olawale', '044', '087654321', '950.00'],
    ['Halima Sani', '033', '055544433', '1100.00'],
  ];
  ngContractors.forEach(([name, bank, serial, amount], i) => {
    rows.push({
      ...base(
        'USD',
        'NGN',
        'NGA',
        'NIP',
        amount,
        name,
        `Contractor invoice NG-C${i + 1} January 2025`,
        `documents/invoice-ng-c${i + 1}.pdf`,
      ),
      accountNumber: nubanCheckDigit(bank, serial),
      bankCode: bank,
    });
  });
  // US staff, USD wallet, ACH
  const us: [string, string, string, string, string][] = [
    ['James Carter', '021000021', '000123456789', 'checking', '5200.00'],
    ['Emily Davis', '026009593', '4455667788', 'savings', '4800.00'],
    ['Michael Lee', '011000015', '20304050', 'checking', '6100.00'],
    ['Sarah Wilson', '121000358', '998877665544', 'checking', '5750.00'],
    ['David Martinez', '111000025', '31415926', 'savings', '4950.00'],
    ['Laura Thompson', '122105155', '27182818', 'checking', '5300.00'],
  ];
  us.forEach(([name, routing, acc, type, amount], i) => {
    rows.push({
      ...base('USD', 'USD', 'USA', 'ACH', amount, name, 'Salary January 2025', payslip(`US${String(i + 1).padStart(3, '0')}`)),
      routingNumber: routing,
      accountNumber: acc,
      accountType: type,
    });
  });
  // US suppliers by WIRE, and the business's own US account
  rows.push({
    ...base(
      'USD',
      'USD',
      'USA',
      'WIRE',
      '18500.00',
      'Brightline Consulting LLC',
      'Consulting retainer January 2025',
      'documents/invoice-brightline-0125.pdf',
    ),
    routingNumber: '071000013',
    accountNumber: '7654321098',
    bankName: 'JPMorgan Chase',
    address: '233 S Wacker Dr',
    city: 'Chicago',
    postCode: '60606',
  });
  rows.push({
    ...base('USD', 'USD', 'USA', 'WIRE', '25000.00', 'Northwind Holdings Inc', 'Transfer to own US operating account', undefined, true),
    routingNumber: '091000019',
    accountNumber: '1029384756',
    bankName: 'Wells Fargo',
    city: 'Minneapolis',
  });
  // UK staff, GBP wallet, Faster Payments and BACS
  const uk: [string, string, string, string, string, string][] = [
    ['Oliver Brown', 'NWBK', '601613', '31926819', '3900.00', 'FASTER_PAYMENTS'],
    ['Amelia Jones', 'BARC', '200000', '55779911', '4200.00', 'FASTER_PAYMENTS'],
    ['Harry Taylor', 'MIDL', '400515', '12345678', '3650.00', 'FASTER_PAYMENTS'],
    ['Isla Evans', 'LOYD', '309634', '87654321', '4050.00', 'FASTER_PAYMENTS'],
    ['George Walker', 'NWBK', '560003', '24681357', '3875.00', 'FASTER_PAYMENTS'],
    ['Sophie Hughes', 'BARC', '203214', '13572468', '4400.00', 'BACS'],
    ['Jack Roberts', 'MIDL', '401160', '11223344', '3980.00', 'BACS'],
    ['Grace Wright', 'LOYD', '301234', '55667788', '4125.00', 'BACS'],
  ];
  uk.forEach(([name, bank, sort, acc, amount, method], i) => {
    rows.push({
      ...base('GBP', 'GBP', 'GBR', method, amount, name, 'Salary January 2025', payslip(`UK${String(i + 1).padStart(3, '0')}`)),
      sortCode: sort,
      accountNumber: acc,
      iban: ukIban(bank, sort, acc),
    });
  });
  // UK contractors paid from the USD wallet
  rows.push({
    ...base(
      'USD',
      'GBP',
      'GBR',
      'FASTER_PAYMENTS',
      '2600.00',
      'Charlotte Green',
      'Contractor invoice UK-C1 January 2025',
      'documents/invoice-uk-c1.pdf',
    ),
    sortCode: '600001',
    accountNumber: '99887766',
    iban: ukIban('NWBK', '600001', '99887766'),
  });
  rows.push({
    ...base(
      'USD',
      'GBP',
      'GBR',
      'FASTER_PAYMENTS',
      '2350.00',
      'Thomas King',
      'Contractor invoice UK-C2 January 2025',
      'documents/invoice-uk-c2.pdf',
    ),
    sortCode: '204567',
    accountNumber: '44332211',
    iban: ukIban('BARC', '204567', '44332211'),
  });
  // EU staff, EUR wallet, SEPA
  const eu: [string, string, string, string][] = [
    ['Lukas Schneider', 'DEU', 'DE', '370400440532013000'],
    ['Anna Fischer', 'DEU', 'DE', '500105175407324931'],
    ['Daan de Vries', 'NLD', 'NL', 'ABNA0417164300'],
    ['Camille Laurent', 'FRA', 'FR', '20041010050500013M02606'],
    ['Siobhan Murphy', 'IRL', 'IE', 'AIBK93115212345678'],
    ['Felix Gruber', 'AUT', 'AT', '1904300234573201'],
  ];
  const euAmounts = ['4300.00', '4150.00', '3950.00', '4025.00', '3890.00', '4210.00'];
  eu.forEach(([name, country, cc, bban], i) => {
    rows.push({
      ...base('EUR', 'EUR', country, 'SEPA', euAmounts[i]!, name, 'Salary January 2025', payslip(`EU${String(i + 1).padStart(3, '0')}`)),
      iban: ibanOf(cc, bban),
    });
  });
  // EU contractors paid from the USD wallet by SEPA
  rows.push({
    ...base('USD', 'EUR', 'ESP', 'SEPA', '3100.00', 'Lucia Garcia', 'Contractor invoice EU-C1 January 2025', 'documents/invoice-eu-c1.pdf'),
    iban: ibanOf('ES', '21000418450200051332'),
  });
  rows.push({
    ...base(
      'USD',
      'EUR',
      'ITA',
      'SEPA',
      '2950.00',
      'Marco Rossi',
      'Contractor invoice EU-C2 January 2025',
      'documents/invoice-eu-c2.pdf;documents/timesheet-eu-c2.pdf',
    ),
    iban: ibanOf('IT', 'X0542811101000000123456'),
  });
  // GBP → EUR and EUR → GBP by SWIFT
  rows.push({
    ...base('GBP', 'EUR', 'DEU', 'SWIFT', '2750.00', 'Jonas Weber', 'Contractor invoice DE-C1 January 2025', 'documents/invoice-de-c1.pdf'),
    accountNumber: '5407324931',
    iban: ibanOf('DE', '500105175407324931'),
    swiftCode: 'COBADEFFXXX',
    bankName: 'Commerzbank',
    beneficiaryCountry: 'DEU',
    city: 'Frankfurt am Main',
  });
  rows.push({
    ...base('EUR', 'GBP', 'GBR', 'SWIFT', '3300.00', 'Emma Clarke', 'Contractor invoice UK-C3 January 2025', 'documents/invoice-uk-c3.pdf'),
    accountNumber: '31415927',
    iban: ukIban('HBUK', '401276', '31415927'),
    swiftCode: 'HBUKGB4B',
    bankName: 'HSBC UK',
    beneficiaryCountry: 'GBR',
    city: 'London',
    postCode: 'E14 5HQ',
  });
  // Hong Kong: HKD wallet and USD wallet, FPS
  rows.push({
    ...base('HKD', 'HKD', 'HKG', 'HK_FPS', '32000.00', 'Chan Tai Man', 'Salary January 2025', payslip('HK001')),
    fpsId: '1234567',
  });
  rows.push({
    ...base('HKD', 'HKD', 'HKG', 'HK_FPS', '29500.00', 'Wong Mei Ling', 'Salary January 2025', payslip('HK002')),
    phoneNumber: '+85291234567',
  });
  rows.push({
    ...base('HKD', 'HKD', 'HKG', 'HK_FPS', '30500.00', 'Lee Ka Fai', 'Salary January 2025', payslip('HK003')),
    accountNumber: '123456789012',
    bankCode: '004',
  });
  rows.push({
    ...base(
      'USD',
      'HKD',
      'HKG',
      'HK_FPS',
      '1800.00',
      'Ho Wing Sze',
      'Contractor invoice HK-C1 January 2025',
      'documents/invoice-hk-c1.pdf',
    ),
    email: 'wingsze.ho@example.com.hk',
  });
  // China: CNY wallet and USD wallet, CHINA_WIRE
  rows.push({
    ...base('CNY', 'CNY', 'CHN', 'CHINA_WIRE', '21000.00', 'Wang Fang', 'Salary January 2025', payslip('CN001')),
    accountNumber: '6222020200012345678',
    bankName: 'Industrial and Commercial Bank of China',
    swiftCode: 'ICBKCNBJ',
    city: 'Shanghai',
  });
  rows.push({
    ...base('CNY', 'CNY', 'CHN', 'CHINA_WIRE', '19500.00', 'Liu Yang', 'Salary January 2025', payslip('CN002')),
    accountNumber: '6217000010012345678',
    bankName: 'China Construction Bank',
    city: 'Shenzhen',
  });
  rows.push({
    ...base(
      'USD',
      'CNY',
      'CHN',
      'CHINA_WIRE',
      '4200.00',
      'Shenzhen Parts Co Ltd',
      'Supplier invoice SZ-2025-014',
      'documents/invoice-sz-2025-014.pdf',
    ),
    accountNumber: '6013820000123456789',
    bankName: 'Bank of China',
    swiftCode: 'BKCHCNBJ',
    city: 'Shenzhen',
  });
  // India: USD wallet, SWIFT
  const india: [string, string, string, string, string][] = [
    ['Priya Sharma', '123456789012', 'SBININBB', 'State Bank of India', '2400.00'],
    ['Rahul Verma', '004501234567', 'ICICINBB', 'ICICI Bank', '2250.00'],
    ['Ananya Iyer', '50100123456789', 'HDFCINBB', 'HDFC Bank', '2575.00'],
  ];
  india.forEach(([name, acc, bic, bank, amount], i) => {
    rows.push({
      ...base('USD', 'INR', 'IND', 'SWIFT', amount, name, 'Salary January 2025', payslip(`IN${String(i + 1).padStart(3, '0')}`)),
      accountNumber: acc,
      swiftCode: bic,
      bankName: bank,
      beneficiaryCountry: 'IND',
      city: 'Bengaluru',
    });
  });
  // NGN wallet to a US supplier by SWIFT
  rows.push({
    ...base('NGN', 'USD', 'USA', 'SWIFT', '2350000.00', 'Cloudhost Inc', 'Hosting invoice CH-88231', 'documents/invoice-ch-88231.pdf'),
    accountNumber: '4455667788',
    swiftCode: 'CHASUS33',
    bankName: 'JPMorgan Chase',
    beneficiaryCountry: 'USA',
    city: 'New York',
    postCode: '10017',
  });
  return rows;
}

/** Every document the payroll names, with a line of text for its one page. */
function documentsOf(rows: Row[]): Map<string, string> {
  const docs = new Map<string, string>();
  for (const r of rows) {
    for (const d of (r.documents ?? '').split(';').filter(Boolean)) {
      docs.set(
        d,
        `${/payslip/.test(d) ? 'Payslip' : /timesheet/.test(d) ? 'Timesheet' : 'Invoice'} - ${r.accountName} - ${r.sourceCurrency} ${r.sourceAmount} - ${r.narration}`,
      );
    }
  }
  return docs;
}

async function pdf(title: string, line: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([420, 200]);
  page.drawText(title, { x: 24, y: 160, size: 14, font });
  page.drawText(line, { x: 24, y: 130, size: 9, font });
  page.drawText('Sample supporting document generated for payout-batch (not a real record).', { x: 24, y: 30, size: 7, font });
  return doc.save({ useObjectStreams: true });
}

function toCsv(rows: Row[], columns: readonly string[] = CANONICAL_FIELDS): string {
  return stringify([columns, ...rows.map((r) => columns.map((c) => r[c as CanonicalField] ?? ''))], { record_delimiter: '\n' });
}

/** The payroll as a workbook: amounts are numbers (shown with 2 decimals), every other cell text. */
function toXlsx(rows: Row[]): Buffer {
  const columns = [...CANONICAL_FIELDS];
  const aoa = [columns as string[], ...rows.map((r) => columns.map((c) => r[c] ?? ''))];
  const ws = XLSX.utils.aoa_to_sheet(aoa);
  const amountCol = columns.indexOf('sourceAmount');
  for (let r = 0; r < aoa.length; r++) {
    for (let c = 0; c < columns.length; c++) {
      const addr = XLSX.utils.encode_cell({ r, c });
      const cell = ws[addr] as XLSX.CellObject | undefined;
      if (!cell) continue;
      if (r > 0 && c === amountCol) {
        ws[addr] = { t: 'n', v: Number(aoa[r]![c]), z: '#,##0.00' };
      } else {
        cell.t = 's';
        cell.z = '@';
      }
    }
  }
  ws['!cols'] = columns.map((h) => ({ wch: Math.max(10, h.length + 2) }));
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'January 2025');
  wb.Props = { Title: 'Payroll January 2025', Author: 'payout-batch', CreatedDate: new Date('2025-01-25T00:00:00Z') };
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer;
}

// ------------------------------------------------------------------ samples: the broken file

/** A file that exercises most kinds of problem; test/validation/broken-sample.test.ts lists them all. */
export function brokenCsv(): string {
  const good = payrollRows();
  const pick = (i: number, over: Row): Row => ({ ...good[i]!, ...over });
  const nip = good.findIndex((r) => r.method === 'NIP');
  const ach = good.findIndex((r) => r.method === 'ACH');
  const fp = good.findIndex((r) => r.method === 'FASTER_PAYMENTS');
  const sepa = good.findIndex((r) => r.method === 'SEPA');
  const hk = good.findIndex((r) => r.method === 'HK_FPS');
  const swift = good.findIndex((r) => r.method === 'SWIFT' && r.destinationCurrency === 'INR');
  const rows: (Row | 'blank' | string[])[] = [
    pick(nip, { reference: 'BRK-001' }), // valid
    pick(nip, { reference: 'BRK-002', sourceAmount: '1,234', accountNumber: '0123456789', bankCode: '58' }),
    pick(ach, { reference: 'BRK-003', routingNumber: '021000022', accountType: 'current', sourceAmount: '-50.00' }),
    pick(fp, { reference: 'BRK-004', sortCode: '60161', accountNumber: '3192681', method: 'Faster Payments' }),
    pick(sepa, { reference: 'BRK-005', iban: 'DE89370400440532013001', sourceAmount: '100.555' }),
    pick(sepa, { reference: 'BRK-006', sourceCurrency: 'EURO', destinationCountryCode: 'DE', method: 'PAYPAL' }),
    pick(hk, { reference: 'BRK-007', fpsId: '', phoneNumber: '0091234567', email: 'chan.at.example.com' }),
    pick(swift, { reference: 'BRK-008', swiftCode: 'SBINXXBB', bankName: '', sortCode: '601613' }),
    pick(nip, { reference: 'BRK-001', accountName: '', narration: '' }),
    'blank',
    pick(ach, { reference: 'BRK-010' }),
    pick(ach, { reference: 'BRK-011' }), // same account, amount and currency as BRK-010
    pick(sepa, { reference: 'BRK-012', documents: 'documents/missing-invoice.pdf;documents/not-a-pdf.pdf', withdrawal: 'maybe' }),
    pick(sepa, { reference: 'BRK-013', documents: 'a.pdf;b.pdf;c.pdf;d.pdf;e.pdf;f.pdf', iban: ibanOf('NL', 'ABNA0417164300') }),
    pick(nip, { reference: 'BRK-014', documents: '', withdrawal: 'false', sourceCurrency: 'EUR', accountCurrency: 'USD' }),
    {
      reference: 'BRK-015',
      sourceAmount: '500.00',
      sourceCurrency: 'NGN',
      destinationCurrency: 'CNY',
      destinationCountryCode: 'CHN',
      method: 'wechat',
      accountName: 'Zhang Min',
      accountCurrency: 'CNY',
      narration: 'x'.repeat(141),
      documents: 'documents/invoice-ng-c1.pdf',
      withdrawal: 'false',
    },
    pick(fp, { reference: 'BRK-017', sortCode: '200000' }),
    pick(nip, { reference: 'BRK-018', accountNumber: '0123456789' }),
    [...CANONICAL_FIELDS.map((c) => (c === 'sourceAmount' ? '1' : c === 'reference' ? 'BRK-016' : (good[ach]![c] ?? ''))), '234.56'],
    'blank',
    { reference: '', sourceAmount: '123456.78', accountName: 'TOTAL' },
  ];
  const columns = [...CANONICAL_FIELDS];
  const aoa = [
    columns as string[],
    ...rows.map((r) => (r === 'blank' ? columns.map(() => '') : Array.isArray(r) ? r : columns.map((c) => r[c] ?? ''))),
  ];
  return stringify(aoa, { record_delimiter: '\r\n' });
}

// ------------------------------------------------------------------ main

export async function writeSamples(dir = join(root, 'samples')): Promise<void> {
  const rows = payrollRows();
  mkdirSync(join(dir, 'documents'), { recursive: true });
  writeFileSync(join(dir, 'payroll-2025-01.csv'), toCsv(rows));
  writeFileSync(join(dir, 'payroll-2025-01.xlsx'), toXlsx(rows));
  for (const [path, line] of documentsOf(rows)) {
    const name = path
      .split('/')
      .pop()!
      .replace(/\.pdf$/, '');
    writeFileSync(join(dir, path), await pdf(name, line));
  }
  writeFileSync(join(dir, 'documents', 'not-a-pdf.pdf'), 'This is a plain text file with a .pdf name.\n');
  writeFileSync(join(dir, 'payroll-broken.csv'), brokenCsv());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t = writeTemplates();
  await writeSamples();
  console.log(`wrote ${t.length} templates and the samples`);
}
