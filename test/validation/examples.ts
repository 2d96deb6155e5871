// The batch templates, from one source: the columns come from the method schemas
// (src/validation/row-schemas.ts) and each method has one valid example row here.
// generate-files.ts writes the committed copies under templates/, which `payout-batch template`
// copies; the tests build valid rows from the examples.
import * as XLSX from 'xlsx';
import { stringify } from 'csv-stringify/sync';
import { PAYOUT_METHODS, type PayoutMethod } from '../../src/spec/codes.ts';
import {
  BENEFICIARY_COLUMNS,
  CANONICAL_FIELDS,
  PAYOUT_COLUMNS,
  TRAILING_COLUMNS,
  type CanonicalField,
} from '../../src/input/batch-columns.ts';
import { methodFields } from '../../src/validation/row-schemas.ts';
import { nubanCheckDigitOk } from '../../src/validation/fields.ts';

/** A NUBAN: the 9-digit serial at a 3-digit bank code and the check digit that makes it valid. */
export function nubanCheckDigit(bankCode3: string, serial9: string): string {
  for (let d = 0; d <= 9; d++) if (nubanCheckDigitOk(bankCode3, serial9 + d)) return serial9 + d;
  throw new Error('unreachable');
}

type Example = Partial<Record<CanonicalField, string>>;

const common = (method: PayoutMethod, reference: string, narration: string) => ({ method, reference, narration, withdrawal: 'false' });

/** One valid example per method (valid IBANs, BICs, ABA routing numbers and NUBANs). */
export const EXAMPLES: Record<PayoutMethod, Example> = {
  ALIPAY: {
    ...common('ALIPAY', 'PAY-2025-0001', 'Invoice INV-1001'),
    sourceAmount: '150000.00',
    sourceCurrency: 'NGN',
    destinationCurrency: 'CNY',
    destinationCountryCode: 'CHN',
    accountName: 'Li Wei',
    accountCurrency: 'CNY',
    alipayId: '+8613800138000',
  },
  WECHAT: {
    ...common('WECHAT', 'PAY-2025-0002', 'Invoice INV-1002'),
    sourceAmount: '98000.00',
    sourceCurrency: 'NGN',
    destinationCurrency: 'CNY',
    destinationCountryCode: 'CHN',
    accountName: 'Zhang Min',
    accountCurrency: 'CNY',
    openId: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
  },
  SEPA: {
    ...common('SEPA', 'PAY-2025-0003', 'Invoice INV-1003'),
    sourceAmount: '1250.00',
    sourceCurrency: 'EUR',
    destinationCurrency: 'EUR',
    destinationCountryCode: 'DEU',
    accountName: 'Muster GmbH',
    accountCurrency: 'EUR',
    iban: 'DE89370400440532013000',
    swiftCode: 'COBADEFFXXX',
  },
  SWIFT: {
    ...common('SWIFT', 'PAY-2025-0004', 'Invoice INV-1004'),
    sourceAmount: '2400.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'INR',
    destinationCountryCode: 'IND',
    accountName: 'Priya Sharma',
    accountCurrency: 'INR',
    accountNumber: '123456789012',
    swiftCode: 'SBININBB',
    bankName: 'State Bank of India',
    beneficiaryCountry: 'IND',
    address: '12 Marine Drive',
    city: 'Mumbai',
    postCode: '400020',
  },
  ACH: {
    ...common('ACH', 'PAY-2025-0005', 'Invoice INV-1005'),
    sourceAmount: '850.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    accountName: 'John Smith',
    accountCurrency: 'USD',
    routingNumber: '021000021',
    accountNumber: '000123456789',
    accountType: 'checking',
    bankName: 'JPMorgan Chase',
  },
  WIRE: {
    ...common('WIRE', 'PAY-2025-0006', 'Invoice INV-1006'),
    sourceAmount: '12000.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    accountName: 'Acme Supplies LLC',
    accountCurrency: 'USD',
    routingNumber: '026009593',
    accountNumber: '4567890123',
    bankName: 'Bank of America',
    address: '100 Main Street',
    city: 'New York',
    postCode: '10001',
  },
  NIP: {
    ...common('NIP', 'PAY-2025-0007', 'Invoice INV-1007'),
    sourceAmount: '450000.00',
    sourceCurrency: 'NGN',
    destinationCurrency: 'NGN',
    destinationCountryCode: 'NGA',
    accountName: 'Adaeze Okafor',
    accountCurrency: 'NGN',
    accountNumber: '0123456785',
    bankCode: '058',
  },
  CHINA_WIRE: {
    ...common('CHINA_WIRE', 'PAY-2025-0008', 'Invoice INV-1008'),
    sourceAmount: '3000.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'CNY',
    destinationCountryCode: 'CHN',
    accountName: 'Shenzhen Parts Co Ltd',
    accountCurrency: 'CNY',
    accountNumber: '6222020200012345678',
    bankName: 'Industrial and Commercial Bank of China',
    swiftCode: 'ICBKCNBJ',
    city: 'Shenzhen',
  },
  HK_FPS: {
    ...common('HK_FPS', 'PAY-2025-0009', 'Invoice INV-1009'),
    sourceAmount: '5000.00',
    sourceCurrency: 'HKD',
    destinationCurrency: 'HKD',
    destinationCountryCode: 'HKG',
    accountName: 'Chan Tai Man',
    accountCurrency: 'HKD',
    fpsId: '1234567',
  },
  FASTER_PAYMENTS: {
    ...common('FASTER_PAYMENTS', 'PAY-2025-0010', 'Invoice INV-1010'),
    sourceAmount: '640.00',
    sourceCurrency: 'GBP',
    destinationCurrency: 'GBP',
    destinationCountryCode: 'GBR',
    accountName: 'Oliver Brown',
    accountCurrency: 'GBP',
    sortCode: '601613',
    accountNumber: '31926819',
    iban: 'GB29NWBK60161331926819',
  },
  BACS: {
    ...common('BACS', 'PAY-2025-0011', 'Invoice INV-1011'),
    sourceAmount: '2100.00',
    sourceCurrency: 'GBP',
    destinationCurrency: 'GBP',
    destinationCountryCode: 'GBR',
    accountName: 'Amelia Jones',
    accountCurrency: 'GBP',
    sortCode: '200000',
    accountNumber: '55779911',
    iban: 'GB60BARC20000055779911',
  },
};

/** The columns of a template: one method's, or every column for all methods. */
export function templateColumns(method?: PayoutMethod): CanonicalField[] {
  if (!method) return [...CANONICAL_FIELDS];
  const used = new Set<string>(methodFields(method));
  return [...PAYOUT_COLUMNS, ...BENEFICIARY_COLUMNS.filter((f) => used.has(f)), ...TRAILING_COLUMNS];
}

/** Header row and one example row. The all-methods template's example is the SEPA one. */
export function templateRows(method?: PayoutMethod): string[][] {
  const columns = templateColumns(method);
  const example = EXAMPLES[method ?? 'SEPA'];
  return [columns, columns.map((c) => example[c] ?? '')];
}

export function templateCsv(method?: PayoutMethod): string {
  return stringify(templateRows(method), { record_delimiter: '\n' });
}

/**
 * The XLSX template: every cell is text with the Text number format (@), so identifiers keep
 * their leading zeros. Fixed document properties keep the file byte-identical between runs.
 */
export function templateXlsx(method?: PayoutMethod): Buffer {
  const rows = templateRows(method);
  const ws = XLSX.utils.aoa_to_sheet(rows);
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < rows[0]!.length; c++) {
      const cell = ws[XLSX.utils.encode_cell({ r, c })] as XLSX.CellObject | undefined;
      if (cell) {
        cell.t = 's';
        cell.z = '@';
      }
    }
  }
  ws['!cols'] = rows[0]!.map((h, c) => ({ wch: Math.max(h.length, (rows[1]![c] ?? '').length, 8) + 2 }));
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, method ? method : 'Payouts');
  wb.Props = {
    Title: `Payout batch template${method ? ` (${method})` : ''}`,
    Author: 'payout-batch',
    CreatedDate: new Date('2025-01-01T00:00:00Z'),
  };
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer;
}

export const TEMPLATE_METHODS: (PayoutMethod | undefined)[] = [undefined, ...PAYOUT_METHODS];
