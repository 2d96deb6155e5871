// Fuzz: what the file says is what is paid. A batch of valid payouts, typed as users type them, written in a drawn
// way (CSV, XLSX, pain.001), run in-process against the sandbox, judged by the sandbox's own records.
//   npx tsx test/chaos/input-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario: 1 to 12 payouts of the spec's methods (names with accents, quotes, commas, other scripts and outer
// spaces; account numbers with leading zeros and over 15 digits; sort codes 12-34-56; IBANs with spaces; amounts
// typed 1500, 1,500.00, 1.234,56, 0.1, 99999999.99; narrations with a line break or = + - @ first), written as:
//   CSV: , ; tab |, BOM or none, CRLF or LF, UTF-8 / UTF-16LE / Windows-1252 (when the text fits), quoted always or
//        when needed, a sep= line, columns shuffled, header aliases and case, unknown columns, blank rows, a totals row;
//   XLSX (SheetJS): amounts and identifiers as numbers or text (zeros shown by a format or not), a date column, a
//        hidden sheet before it or another after it, the 1904 date system;
//   pain.001 .03 or .09 (the methods it maps: not ALIPAY, WECHAT, HK_FPS by phone or email).
// Then `run FILE --yes --allow-partial` (or `plan --out` then `run --plan`) through main() in this process, and
// `validate FILE --json`. Optionally the CSV "re-saved by Excel", English or German (an XLSX of the typed cells,
// numbers and dates typed as Excel types them), and run again.
// Checked, by the sandbox's records (the key and body that made each payout):
//   (a) no reference has two payouts; no payout under a key of no reference drawn;
//   (b) a payout's body is the drawn payout exactly (method, currencies, country, amount to the cent, narration,
//       and the beneficiary: the method's §4.2 fields, normalised as the service wants them);
//   (c) a payout not made is refused by validate naming the file, the row as written (pain.001: the XPath of its
//       CdtTrfTxInf), the column and what would be valid, by a code the scenario expects (a documented refusal),
//       and its results row says INVALID naming that column;
//   (d) no "unexpected error" nor stack trace.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import iconv from 'iconv-lite';
import * as XLSX from 'xlsx';
import { COLUMN_ALIASES, PAYOUT_COLUMNS, type CanonicalField } from '../../src/input/batch-columns.ts';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runMain, workDir } from '../engine/helpers.ts';
import { pain001 } from '../input/pain001-files.ts';
import { fuzzFlags, leave, parseJson, payoutsByReference, runScenarios, serviceRecords, threw } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

const METHODS = ['NIP', 'SWIFT', 'SEPA', 'FASTER_PAYMENTS', 'BACS', 'ACH', 'WIRE', 'CHINA_WIRE', 'HK_FPS', 'ALIPAY', 'WECHAT'] as const;
type Method = (typeof METHODS)[number];

// prettier-ignore
const NAMES = ['José Ñúñez', "O'Brien, Patrick", 'Anna "Ani" Kowalska', '王芳', 'Мария Иванова', 'محمد علي', '  Leading Space',
  'Trailing Space  ', 'Zoë Müller-Lüdenscheid', 'Ngozi Nwosu', 'Søren Kierkegård', 'Nguyễn Văn An', "D'Angelo & Sons, Ltd."];
// prettier-ignore
const NARRATIONS = ['Salary January 2025', 'Invoice #123, "final"', '=SUM(A1:A2)', '+44 fee refund', '-discount applied', '@home office',
  'Ünïcödé façade', 'Line one\nLine two', '  padded narration  ', 'Réf; 50% | tab\there'];
const AMOUNTS = ['1500', '1234.56', '0.1', '99999999.99', '12.5', '0.01', '250000', '1000000'];
const AMOUNT_FORMS = ['plain', 'fixed2', 'us', 'eu', 'euNoGroup', 'usInt', 'space', 'apostrophe', 'nbsp', 'symbol'] as const;

interface PayoutSpec {
  method: number;
  /** Which of the method's account variants. */
  account: number;
  /** How identifiers are typed (spaces, hyphens, case). */
  typing: number;
  name: number;
  narration: number;
  amount: number;
  form: number;
}
interface Scenario {
  payouts: PayoutSpec[];
  format: 'csv' | 'xlsx' | 'pain';
  csv: { delimiter: number; bom: boolean; crlf: boolean; encoding: number; quoteAll: boolean; sepLine: boolean };
  xlsx: { amountsAsNumbers: boolean; idsAsNumbers: boolean; zeroFormat: boolean; dates: boolean; sheets: number; date1904: boolean };
  pain: { v09: boolean };
  /** Columns shuffled (a seed), headers by alias, header case, unknown columns, blank rows, a totals row. */
  layout: { shuffle: number; aliases: boolean; headerCase: number; extra: boolean; blank: number; totals: boolean; lead?: number };
  resave: boolean;
  /** The Excel that re-saves it: English (1,500.00 a number) or German (1.500,00 a number, 12.5 a date). */
  locale?: 'en' | 'de';
  /** References: text (IN3-01), invoice numbers with leading zeros (00301), or plain numbers (4001). */
  refs: number;
  /** Both runs under `--batch-id in-N`: the re-saved file is the same batch. */
  label: boolean;
  /** The first run as `plan --out` then `run --plan`: what the plan signs is what is sent. */
  viaPlan?: boolean;
}

const nat = (n: number) => fc.nat({ max: n });
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  payouts: fc.array(
    fc.record({ method: nat(10), account: nat(5), typing: nat(5), name: nat(50), narration: nat(50), amount: nat(50), form: nat(50) }),
    { minLength: 1, maxLength: 12 },
  ),
  format: fc.constantFrom('csv', 'csv', 'xlsx', 'pain'),
  csv: fc.record({
    delimiter: nat(3),
    bom: fc.boolean(),
    crlf: fc.boolean(),
    encoding: nat(3),
    quoteAll: fc.boolean(),
    sepLine: fc.boolean(),
  }),
  xlsx: fc.record({
    amountsAsNumbers: fc.boolean(),
    idsAsNumbers: fc.boolean(),
    zeroFormat: fc.boolean(),
    dates: fc.boolean(),
    sheets: nat(2),
    date1904: fc.boolean(),
  }),
  pain: fc.record({ v09: fc.boolean() }),
  layout: fc.record({
    shuffle: nat(1000),
    aliases: fc.boolean(),
    headerCase: nat(2),
    extra: fc.boolean(),
    blank: nat(3),
    totals: fc.boolean(),
    lead: nat(2),
  }),
  resave: fc.boolean(),
  locale: fc.constantFrom('en', 'de'),
  refs: nat(2),
  label: fc.boolean(),
  viaPlan: fc.boolean(),
});

/** An IBAN of `country` with its check digits computed (mod 97). */
function ibanOf(country: string, bban: string): string {
  const digits = (s: string) => [...s].map((c) => (/\d/.test(c) ? c : String(c.charCodeAt(0) - 55))).join('');
  const rest = BigInt(digits(bban + country + '00')) % 97n;
  return `${country}${String(98n - rest).padStart(2, '0')}${bban}`;
}
const spaced = (iban: string) => iban.replace(/(.{4})/g, '$1 ').trim();

/** One drawn payout: the cells as typed, what the body must hold, and the refusals the docs give for how it is written. */
interface Drawn {
  reference: string;
  /** The reference as a re-save by Excel wrote it too ("00301" as 301): one payment under either is the same payment. */
  alias?: string;
  method: Method;
  typed: Record<string, string>;
  body: {
    sourceAmount: string;
    sourceCurrency: string;
    destinationCurrency: string;
    destinationCountryCode: string;
    method: Method;
    narration: string;
    beneficiary: Record<string, string>;
  };
  /** Codes a refusal of this row may carry (documented refusals of what it holds, or how it was written). */
  refusals: Set<string>;
  /** Where the row is: the spreadsheet row, or the pain.001 XPath. */
  row?: number;
  xpath?: string;
}

function draw(p: PayoutSpec, i: number, n: number, refs: number): Drawn {
  const method = METHODS[p.method % METHODS.length]!;
  const t = p.typing;
  const name = NAMES[p.name % NAMES.length]!;
  const narration = NARRATIONS[p.narration % NARRATIONS.length]!;
  const refusals = new Set<string>();
  if (/[\n\r]/.test(narration)) refusals.add('INVALID_TEXT');
  const typed: Record<string, string> = {};
  const ben: Record<string, string> = {};
  const set = (f: string, typedValue: string, sent = typedValue) => {
    typed[f] = typedValue;
    ben[f] = sent;
  };
  let [src, dst, country] = ['GBP', 'GBP', 'GBR'];
  const k = p.account;
  switch (method) {
    case 'NIP': {
      [src, dst, country] = [t % 2 ? 'NGN' : 'USD', 'NGN', 'NGA'];
      const [acct, bank] = [
        ['0123456785', '058'],
        ['0691234560', '044'],
        ['2098765434', '033'],
        ['0445566775', '058'],
      ][k % 4]!;
      set('accountNumber', acct!);
      set('bankCode', bank!);
      break;
    }
    case 'ACH':
    case 'WIRE': {
      [src, dst, country] = ['USD', 'USD', 'USA'];
      const routing = ['021000021', '026009593', '011000015', '121000358', '071000013'][k % 5]!;
      const acct = ['000123456789', '4455667788', '12345678901234567', '0000004321', '20304050'][(k + t) % 5]!;
      set('routingNumber', routing);
      set('accountNumber', t % 3 === 2 ? acct.replace(/(\d{4})(?=\d)/g, '$1 ') : acct, acct);
      if (method === 'ACH') set('accountType', ['checking', 'Savings', 'CHECKING'][t % 3]!, ['checking', 'savings', 'checking'][t % 3]);
      else set('bankName', ['JPMorgan Chase & Co.', 'Bank of America, N.A.', 'Wells "Fargo"'][t % 3]!);
      break;
    }
    case 'FASTER_PAYMENTS':
    case 'BACS': {
      const [sort, acct] = [
        ['601613', '31926819'],
        ['040004', '01234567'],
        ['203214', '13572468'],
        ['000001', '00000042'],
      ][k % 4]!;
      const iban = ibanOf('GB', `NWBK${sort}${acct}`);
      set(
        'sortCode',
        [sort!, sort!.replace(/(\d\d)(\d\d)(\d\d)/, '$1-$2-$3'), sort!.replace(/(\d\d)(\d\d)(\d\d)/, '$1 $2 $3')][t % 3]!,
        sort,
      );
      set('accountNumber', acct!);
      set('iban', t % 2 ? spaced(iban) : iban, iban);
      break;
    }
    case 'SEPA': {
      const iban = [
        'DE89370400440532013000',
        'FR1420041010050500013M02606',
        'NL91ABNA0417164300',
        'ES9121000418450200051332',
        'BE68539007547034',
      ][k % 5]!;
      country = { DE: 'DEU', FR: 'FRA', NL: 'NLD', ES: 'ESP', BE: 'BEL' }[iban.slice(0, 2)]!;
      [src, dst] = ['EUR', 'EUR'];
      set('iban', [iban, spaced(iban), spaced(iban).toLowerCase()][t % 3]!, iban);
      break;
    }
    case 'SWIFT': {
      [src, dst, country] = ['GBP', 'EUR', 'DEU'];
      const acct = ['5407324931', '0005407324931', '12345678901234567890123', 'DE44-5001'][k % 4]!;
      set('accountNumber', acct, acct.replace(/-/g, '').toUpperCase());
      set('swiftCode', ['COBADEFFXXX', 'cobadeff', 'COBA DE FF'][t % 3]!, ['COBADEFFXXX', 'COBADEFF', 'COBADEFF'][t % 3]);
      set('bankName', ['Commerzbank AG', 'Commerzbank, Frankfurt', 'Bank "Komm"'][t % 3]!);
      set('beneficiaryCountry', t % 2 ? 'deu' : 'DEU', 'DEU');
      break;
    }
    case 'HK_FPS': {
      [src, dst, country] = ['HKD', 'HKD', 'HKG'];
      if (k % 4 === 0) set('fpsId', ['1234567', '012345678', '98765432'][t % 3]!);
      else if (k % 4 === 1) set('phoneNumber', ['+852 9123 4567', '+85291234567', '+852-9123-4567'][t % 3]!, '+85291234567');
      else if (k % 4 === 2) set('email', 'chan.tm@example.hk');
      else {
        set('accountNumber', ['012345678901', '123456789', '00012345678901234'][t % 3]!);
        set('bankCode', '004');
      }
      break;
    }
    case 'CHINA_WIRE': {
      [src, dst, country] = ['CNY', 'CNY', 'CHN'];
      set('accountNumber', ['6222020200012345678', '0622202020001234', '6222 0202 0001 2345'][k % 3]!);
      ben.accountNumber = ben.accountNumber!.replace(/\s/g, '');
      set('bankName', ['中国工商银行', 'Industrial and Commercial Bank of China', 'Bank of China (Hong Kong), Ltd'][t % 3]!);
      break;
    }
    case 'ALIPAY': {
      [src, dst, country] = ['NGN', 'CNY', 'CHN'];
      set(
        'alipayId',
        ['+86 138 0013 8000', '13800138000', 'li.na@example.cn'][k % 3]!,
        ['+8613800138000', '13800138000', 'li.na@example.cn'][k % 3],
      );
      break;
    }
    case 'WECHAT': {
      [src, dst, country] = ['NGN', 'CNY', 'CHN'];
      if (k % 2) set('wechatUserId', 'wxid_abc123');
      else set('openId', 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o');
      break;
    }
  }
  // (a naira amount into yuan converts to 0 below a few naira: the service's refusal, not the file's)
  const amount = new Dec(src === 'NGN' && dst !== 'NGN' ? '250000' : AMOUNTS[p.amount % AMOUNTS.length]!);
  const form = AMOUNT_FORMS[p.form % AMOUNT_FORMS.length]!;
  const typedAmount = amountText(amount, form);
  if (/^[1-9]\d{0,2},\d{3}$/.test(typedAmount)) refusals.add('AMBIGUOUS_AMOUNT');
  // (a currency symbol is no amount, as documented)
  if (form === 'symbol') refusals.add('INVALID_AMOUNT');
  const reference =
    [`IN${n}-${String(i + 1).padStart(2, '0')}`, `00${n}${String(i + 1).padStart(2, '0')}`, `${n + 1}${String(i + 1).padStart(3, '0')}`][
      refs % 3
    ]! + (i % 3 === 2 ? ' ' : '');
  Object.assign(typed, {
    reference,
    sourceAmount: typedAmount,
    sourceCurrency: t % 4 === 3 ? src.toLowerCase() : src,
    destinationCurrency: dst,
    destinationCountryCode: country,
    method: t % 5 === 4 ? method.toLowerCase() : method,
    accountName: name,
    accountCurrency: dst,
    narration,
    withdrawal: 'true',
  });
  return {
    reference: reference.trim(),
    method,
    typed,
    body: {
      sourceAmount: amount.toFixed(),
      sourceCurrency: src,
      destinationCurrency: dst,
      destinationCountryCode: country,
      method,
      narration: narration.trim(),
      beneficiary: { accountName: name.trim(), accountCurrency: dst, ...ben },
    },
    refusals,
  };
}

function amountText(v: Dec, form: (typeof AMOUNT_FORMS)[number]): string {
  const group = (int: string, sep: string) => int.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  const [int, frac] = v.toFixed(2).split('.') as [string, string];
  switch (form) {
    case 'plain':
      return v.toFixed();
    case 'fixed2':
      return v.toFixed(2);
    case 'us':
      return `${group(int, ',')}.${frac}`;
    case 'eu':
      return `${group(int, '.')},${frac}`;
    case 'euNoGroup':
      return `${int},${frac}`;
    case 'usInt':
      return v.isInteger() ? group(int, ',') : `${group(int, ',')}.${frac}`;
    case 'space':
      return `${group(int, ' ')},${frac}`;
    case 'apostrophe':
      return `${group(int, "'")}.${frac}`;
    case 'nbsp':
      return `${group(int, '\u00a0')},${frac}`;
    case 'symbol':
      return `€${group(int, ',')}.${frac}`;
  }
}

const BASE_COLUMNS: CanonicalField[] = [...PAYOUT_COLUMNS, 'accountName', 'accountCurrency'];

/** The header of each column (by alias and case as drawn), in the drawn order, unknown columns among them. */
function layoutColumns(d: Drawn[], sc: Scenario): { fields: string[]; headers: string[] } {
  const used = new Set<string>();
  for (const x of d) for (const f of Object.keys(x.typed)) used.add(f);
  const fields = [...BASE_COLUMNS, ...[...used].filter((f) => !BASE_COLUMNS.includes(f as CanonicalField)).sort()];
  if (sc.layout.extra) fields.push('Employee ID', 'Notes');
  // a stable shuffle by the drawn seed
  const order = fields.map((f, i) => ({ f, k: ((i + 1) * 7919 * (sc.layout.shuffle + 1)) % 1009 }));
  if (sc.layout.shuffle % 2) order.sort((a, b) => a.k - b.k);
  const headers = order.map(({ f }) => {
    const alias = sc.layout.aliases ? COLUMN_ALIASES[f as CanonicalField]?.split(', ')[0] : undefined;
    const h = alias ?? f;
    return [h, h.toUpperCase(), h.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()][sc.layout.headerCase]!;
  });
  return { fields: order.map((o) => o.f), headers };
}

/** The cells of each payout by column, with blank rows among them and a totals row last when drawn; each payout's row number set. */
function table(d: Drawn[], sc: Scenario, fields: string[], headerRow: number): (string[] | null)[] {
  const out: (string[] | null)[] = [];
  let row = headerRow;
  d.forEach((x, i) => {
    if (sc.layout.blank && i % (sc.layout.blank + 1) === 1) {
      out.push(null);
      row++;
    }
    x.row = ++row;
    out.push(fields.map((f) => (f === 'Employee ID' ? `00${i + 1}` : f === 'Notes' ? `note, ${i}; "q"` : (x.typed[f] ?? ''))));
  });
  if (sc.layout.totals) {
    const sum = d.reduce((s, x) => s.plus(x.body.sourceAmount), new Dec(0));
    out.push(fields.map((f) => (f === 'reference' ? 'Total' : f === 'sourceAmount' ? sum.toFixed(2) : '')));
  }
  return out;
}

const DELIMITERS = [',', ';', '\t', '|'];
const ENCODINGS = ['utf8', 'utf16le', 'windows-1252', 'utf16be'] as const;

async function writeCsv(d: Drawn[], sc: Scenario, path: string): Promise<string[]> {
  const notes: string[] = [];
  const { fields, headers } = layoutColumns(d, sc);
  const delimiter = DELIMITERS[sc.csv.delimiter % 4]!;
  // (blank lines above the header: the header is then row lead + 1, as a spreadsheet numbers it)
  const lead = sc.layout.lead ?? 0;
  const rows = table(d, sc, fields, 1 + lead);
  const text =
    (sc.csv.crlf ? '\r\n' : '\n').repeat(lead) +
    stringify(
      [headers, ...rows.map((r) => r ?? [])].map((r) => (r.length ? r : [''])),
      // (a line break inside a cell is quoted, as Excel does, whichever the record delimiter)
      { delimiter, quoted: sc.csv.quoteAll, quoted_match: /[\r\n]/, record_delimiter: sc.csv.crlf ? 'windows' : 'unix' },
    ).replace(/^(?:""|)\r?$/gm, '');
  const sep = sc.csv.sepLine ? `sep=${delimiter}${sc.csv.crlf ? '\r\n' : '\n'}` : '';
  let encoding: string = ENCODINGS[sc.csv.encoding % 4]!;
  if (encoding === 'windows-1252' && iconv.decode(iconv.encode(text, encoding), encoding) !== text) encoding = 'utf8';
  if (encoding === 'windows-1252') for (const x of d) if (/[^\p{ASCII}]/u.test(Object.values(x.typed).join(''))) x.refusals.add('ENCODING');
  const bom = encoding.startsWith('utf16') || (encoding === 'utf8' && sc.csv.bom && !sep);
  const bytes = Buffer.concat([
    bom ? Buffer.from({ utf16le: [0xff, 0xfe], utf16be: [0xfe, 0xff] }[encoding] ?? [0xef, 0xbb, 0xbf]) : Buffer.alloc(0),
    iconv.encode(sep + text, encoding),
  ]);
  await writeFile(path, bytes);
  notes.push(`csv ${JSON.stringify(delimiter)} ${encoding}${bom ? ' BOM' : ''}${sep ? ' sep=' : ''} ${sc.csv.crlf ? 'CRLF' : 'LF'}`);
  return notes;
}

/** Identifier columns an Excel user may have typed as numbers, with the digits each format has at least (per method). */
const MIN_DIGITS: Record<string, (m: Method) => number | undefined> = {
  accountNumber: (m) => ({ NIP: 10, FASTER_PAYMENTS: 8, BACS: 8 })[m as string],
  sortCode: () => 6,
  routingNumber: () => 9,
  bankCode: () => 3,
  fpsId: () => 7,
};

function writeXlsx(d: Drawn[], sc: Scenario, o: { asExcelOpensCsv?: 'en' | 'de' } = {}): Buffer {
  const { fields, headers } = layoutColumns(d, sc);
  const x = sc.xlsx;
  const lead = sc.layout.lead ?? 0;
  const rows = table(d, sc, fields, 1 + lead);
  const ws = XLSX.utils.aoa_to_sheet([...Array.from({ length: lead }, () => []), headers, ...rows.map((r) => r ?? [])]);
  rows.forEach((r, i) => {
    if (!r) return;
    const p = d.find((y) => y.row === i + 2 + lead);
    fields.forEach((f, c) => {
      const addr = XLSX.utils.encode_cell({ r: i + 1 + lead, c });
      const cell = ws[addr] as XLSX.CellObject | undefined;
      if (!cell || cell.t !== 's') return;
      const v = String(cell.v);
      if (o.asExcelOpensCsv) {
        // Excel opening a CSV: a digit string becomes a number (leading zeros and digits past 15 lost), "1,500.00" too;
        // a German Excel reads "1.500,00" as 1500 and "12.5" as the 12th of May
        const de = o.asExcelOpensCsv === 'de';
        const [group, mark] = de ? ['.', ','] : [',', '.'];
        const number = new RegExp(`^(\\d+|\\d{1,3}(\\${group}\\d{3})+)(\\${mark}\\d+)?$`);
        if (de && /^(0?[1-9]|[12]\d|3[01])\.(0?[1-9]|1[0-2])$/.test(v)) {
          const [day, month] = v.split('.').map(Number) as [number, number];
          ws[addr] = { t: 'n', v: (Date.UTC(2026, month - 1, day) - Date.UTC(1899, 11, 30)) / 86_400_000, z: 'dd.mm.yyyy' };
          if (p && (f === 'sourceAmount' || f === 'reference' || f in MIN_DIGITS)) p.refusals.add('EXCEL_DATE');
        } else if (number.test(v)) {
          const n = Number(v.replaceAll(group, '').replace(mark, '.'));
          ws[addr] = { t: 'n', v: n, ...(v.includes(group) && { z: '#,##0.00' }) };
          if (p) excelRefusals(p, f, String(n) === v.replace(mark, '.') ? v : v.replaceAll(group, '').replace(mark, '.'));
          if (p && f === 'reference' && String(n) !== v) p.alias = String(n);
          // an amount is what the workbook holds now ("1,500", refused as ambiguous, is 1.5 to a German Excel): what the file says
          if (p && f === 'sourceAmount') {
            p.body.sourceAmount = new Dec(n).toFixed();
            p.refusals.delete('AMBIGUOUS_AMOUNT');
          }
        }
        return;
      }
      if (f === 'sourceAmount' && x.amountsAsNumbers && p) ws[addr] = { t: 'n', v: Number(p.body.sourceAmount), z: '#,##0.00' };
      else if (p && x.idsAsNumbers && f in MIN_DIGITS && /^\d+$/.test(v)) {
        ws[addr] = { t: 'n', v: Number(v), z: x.zeroFormat && v.startsWith('0') ? '0'.repeat(v.length) : 'General' };
        excelRefusals(p, f, v, x.zeroFormat);
      } else cell.z = '@';
    });
  });
  if (x.dates) {
    const c = fields.length;
    ws[XLSX.utils.encode_cell({ r: lead, c })] = { t: 's', v: 'Pay Date' };
    rows.forEach(
      (r, i) => r && (ws[XLSX.utils.encode_cell({ r: i + 1 + lead, c })] = { t: 'n', v: 45678 - (x.date1904 ? 1462 : 0), z: 'yyyy-mm-dd' }),
    );
    ws['!ref'] = XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: rows.length + lead, c } });
  }
  const wb = XLSX.utils.book_new();
  if (x.sheets === 1) {
    // a hidden sheet first: another month's payouts, never to be paid
    const old = d.map((y) => ({ ...y.typed, reference: `OLD-${y.reference}` }));
    XLSX.utils.book_append_sheet(wb, XLSX.utils.json_to_sheet(old), 'December');
  }
  XLSX.utils.book_append_sheet(wb, ws, 'Payouts');
  if (x.sheets === 2)
    XLSX.utils.book_append_sheet(
      wb,
      XLSX.utils.aoa_to_sheet([
        ['reference', 'note'],
        ['X-1', 'not a batch'],
      ]),
      'Notes',
    );
  wb.Workbook = { ...(x.sheets === 1 && { Sheets: [{ Hidden: 1 }, { Hidden: 0 }] }), WBProps: { date1904: x.date1904 } };
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

/** The refusals the docs give for an identifier held as a number: digits past 15, or leading zeros a format does not show. */
function excelRefusals(p: Drawn, f: string, v: string, zeroFormat = false): void {
  const digits = String(Number(v));
  // (more than 15 digits, or more than 11 shown in General: Excel shows 6.22202E+14, and a CSV saved from it holds that)
  if (v.replace(/^0+/, '').length > 15 || (digits.length > 11 && !(zeroFormat && v.startsWith('0')))) p.refusals.add('EXCEL_DIGITS_LOST');
  else if (v.startsWith('0') && !zeroFormat && f in MIN_DIGITS) {
    const min = MIN_DIGITS[f]!(p.method);
    if (min !== undefined && digits.length < min) p.refusals.add('EXCEL_LEADING_ZEROS_LOST');
    // else: the cell shows the digits without the zeros, and that is what the file says (a warning for accountNumber, bankCode)
    else if (p.body.beneficiary[f] !== undefined) p.body.beneficiary[f] = digits;
  }
}

const PAIN_METHODS = new Set<Method>(['NIP', 'SWIFT', 'SEPA', 'FASTER_PAYMENTS', 'BACS', 'ACH', 'WIRE', 'CHINA_WIRE', 'HK_FPS']);

/** The pain.001 of the payouts it maps (the rest left out of the batch); each payout's XPath set. */
function writePain(d: Drawn[], sc: Scenario): { xml: string; kept: Drawn[] } {
  const kept = d.filter((x) => PAIN_METHODS.has(x.method) && !(x.method === 'HK_FPS' && (x.typed.phoneNumber || x.typed.email)));
  const rows = kept.map((x) => {
    // (an ERP writes the values as the schema has them: an xs:decimal amount, an account type as its code)
    const r: Record<string, string> = { ...x.typed, documents: '', sourceAmount: x.body.sourceAmount, method: x.method };
    if (x.body.beneficiary.accountType) r.accountType = x.body.beneficiary.accountType;
    r.sourceCurrency = x.body.sourceCurrency;
    // (an xs:decimal has no thousands separator; the debit currency in capitals as the schema)
    return r;
  });
  // SWIFT by an account number (an IBAN would be its accountNumber); FPS and UK details as the reader maps them
  for (const [i, x] of kept.entries()) {
    if (x.method === 'SWIFT') delete rows[i]!.iban;
    x.body.beneficiary = Object.fromEntries(Object.entries(x.body.beneficiary).filter(([f]) => f !== 'iban' || x.method !== 'SWIFT'));
    // the beneficiaryCountry of a SWIFT row is Cdtr/PstlAdr/Ctry: alpha-2 in the file, alpha-3 read
    if (x.method === 'SWIFT') rows[i]!.beneficiaryCountry = 'DEU';
    rows[i]!.method = x.method;
  }
  const blocks = new Map<string, Drawn[]>();
  for (const x of kept)
    blocks.set(`${x.method}/${x.body.sourceCurrency}`, [...(blocks.get(`${x.method}/${x.body.sourceCurrency}`) ?? []), x]);
  let n = 0;
  [...blocks.values()].forEach((list, b) =>
    list.forEach((x, j) => {
      x.row = ++n;
      x.xpath = `/Document/CstmrCdtTrfInitn/PmtInf[${b + 1}]/CdtTrfTxInf[${j + 1}]`;
    }),
  );
  return { xml: pain001(rows, sc.pain.v09 ? 'pain.001.001.09' : 'pain.001.001.03'), kept };
}

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;

interface Outcome {
  violations: string[];
  notes: string[];
  payouts: number;
  paid: number;
  refused: number;
  runs: number;
}
/** Every documented refusal met (code: count), for the report. */
const REFUSALS = new Map<string, number>();

type Problem = {
  severity: string;
  code: string;
  file: string;
  row: number;
  column?: string;
  value?: string;
  expected?: string;
  message: string;
};

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], payouts: 0, paid: 0, refused: 0, runs: 0 };
  const dir = await workDir('pb-input-fuzz-');
  const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null, randomSeed: SEED + n });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), PAYOUT_BATCH_RATE: '1000' });
  try {
    await fund(sb);
    let drawn = sc.payouts.map((p, i) => draw(p, i, n, sc.refs ?? 0));
    let file: string;
    if (sc.format === 'pain') {
      const { xml, kept } = writePain(drawn, sc);
      if (kept.length) {
        drawn = kept;
        file = join(dir, 'batch.xml');
        await writeFile(file, xml);
        out.notes.push(`pain.001 ${sc.pain.v09 ? '.09' : '.03'}`);
      } else {
        file = join(dir, 'batch.csv');
        out.notes.push(...(await writeCsv(drawn, sc, file)));
      }
    } else if (sc.format === 'xlsx') {
      file = join(dir, 'batch.xlsx');
      await writeFile(file, writeXlsx(drawn, sc));
      out.notes.push(`xlsx ${JSON.stringify(sc.xlsx)}`);
    } else {
      file = join(dir, 'batch.csv');
      out.notes.push(...(await writeCsv(drawn, sc, file)));
    }
    out.payouts += drawn.length;
    for (const x of drawn)
      out.notes.push(
        `${x.reference} row ${x.xpath ?? x.row} ${x.method}: ${JSON.stringify(x.typed)}${x.refusals.size ? ` (may be refused: ${[...x.refusals].join(', ')})` : ''}`,
      );
    const label = sc.label ? ['--batch-id', `in-${n}`] : [];
    const first = await runAndJudge(sb, dir, env, file, drawn, out, sc.viaPlan ? 'plan, run --plan' : 'run', label, sc.viaPlan);
    // (a CSV opened in Excel: a workbook or pain.001 is no text for Excel to read again)
    if (sc.resave && sc.format === 'csv') {
      // the CSV's typed cells re-saved by "Excel": numbers typed; rows paid stay paid once, a changed value is refused
      const again = drawn.map((x) => ({
        ...x,
        refusals: new Set(x.refusals),
        body: { ...x.body, beneficiary: { ...x.body.beneficiary } },
      }));
      const resaved = join(dir, 'batch-resaved.xlsx');
      await writeFile(
        resaved,
        writeXlsx(again, { ...sc, xlsx: { ...sc.xlsx, sheets: 0, dates: false } }, { asExcelOpensCsv: sc.locale ?? 'en' }),
      );
      for (const x of again) {
        // a row paid before stays paid by its first body; a row not paid is judged by what the re-saved file says
        if (first.has(x.reference)) x.body = drawn.find((y) => y.reference === x.reference)!.body;
      }
      await runAndJudge(sb, dir, env, resaved, again, out, 're-saved by Excel', label);
    }
  } catch (e) {
    out.violations.push(threw('d', e));
  } finally {
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

/** Credits every wallet far beyond any batch: a refusal is then the file's, not the balance's. */
async function fund(sb: LocalSandbox): Promise<void> {
  for (const w of sb.snapshot().wallets as { walletId: string }[])
    await fetch(`${sb.url}/_sandbox/wallets/${w.walletId}/credit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '900000000' }), // (a credit is at most 1e9)
    });
}

/** Runs the file, validates it, and judges each payout by the sandbox's records; the references paid. */
async function runAndJudge(
  sb: LocalSandbox,
  dir: string,
  env: Record<string, string>,
  file: string,
  drawn: Drawn[],
  out: Outcome,
  what: string,
  label: string[],
  plan = false,
): Promise<Set<string>> {
  out.runs++;
  const common = ['--base-url', sb.url, '--allow-partial', '--allow-duplicate-rows'];
  let args = ['run', file, ...label, ...common, '--yes', '--json'];
  if (plan) {
    const planPath = join(dir, 'batch.plan.json');
    const p = await runMain(['plan', file, ...label, ...common, '--out', planPath], { cwd: dir, env });
    out.notes.push(`plan: exit ${p.code} ${p.stderr.trim().split('\n').at(-1)?.slice(0, 300) ?? ''}`);
    if (STACK.test(p.stderr + p.stdout)) out.violations.push(`(d) plan: ${(p.stderr + p.stdout).slice(0, 800)}`);
    args = ['run', '--plan', planPath, '--base-url', sb.url, '--allow-partial', '--yes', '--json'];
  }
  const r = await runMain(args, { cwd: dir, env });
  out.notes.push(`${what}: exit ${r.code} ${r.stderr.trim().split('\n').at(-1)?.slice(0, 300) ?? ''}`);
  if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(d) ${what}: ${(r.stderr + r.stdout).slice(0, 800)}`);
  // refused whole (exit 2 or 3, nothing sent): the re-save of a file already paid is another batch naming references paid
  const whole = r.code === 2 || r.code === 3;
  if (whole && what !== 're-saved by Excel') out.violations.push(`(c) ${what}: refused whole: ${r.stderr.slice(0, 600)}`);
  const v = await runMain(['validate', file, '--json', '--allow-duplicate-rows'], { cwd: dir, env });
  if (STACK.test(v.stderr + v.stdout)) out.violations.push(`(d) validate: ${(v.stderr + v.stdout).slice(0, 800)}`);
  const problems = ((parseJson(v.stdout)?.problems ?? []) as Problem[]).filter((p) => p.severity === 'error');
  const json = parseJson(r.stdout);
  const resultsPath = typeof json?.results === 'string' ? json.results : undefined;
  const results = resultsPath ? (await readResults(resultsPath)).rows : [];
  const { byRef, strays } = payoutsByReference(
    serviceRecords(sb),
    drawn.flatMap((x) => [x.reference, ...(x.alias ? [x.alias] : [])]),
  );
  for (const p of strays)
    out.violations.push(`(a) ${what}: payout ${p.id} under key ${p.made?.key} of no reference drawn: ${JSON.stringify(p.made?.body)}`);
  const paid = new Set<string>();
  for (const x of drawn) {
    // no row lost: each is in the results file (paid or not), its cells as written
    const shown = results.find((y) => Object.values(y.cells).some((c) => c.trim() === x.reference || c.trim() === x.alias));
    if (resultsPath && !shown) out.violations.push(`(c) ${what}: ${x.reference} (row ${x.xpath ?? x.row}) missing from ${resultsPath}`);
    const ps = [...(byRef.get(x.reference) ?? []), ...((x.alias && byRef.get(x.alias)) || [])];
    if (ps.length > 1) out.violations.push(`(a) ${what}: ${x.reference} has ${ps.length} payouts`);
    if (ps.length) {
      paid.add(x.reference);
      const diff = bodyDiff(x.body, ps[0]!.made!.body);
      if (diff.length) out.violations.push(`(b) ${what}: ${x.reference} (row ${x.xpath ?? x.row}) paid ${diff.join('; ')}`);
      continue;
    }
    if (whole) continue;
    // not paid: validate names it, by a documented code
    const mine = problems.filter((p) => (x.xpath ? p.column?.startsWith(x.xpath) : p.row === x.row));
    const at = `${x.reference} (row ${x.xpath ?? x.row}, ${x.method})`;
    const dup = results.find((y) => Object.values(y.cells).some((c) => c.trim() === x.reference || c.trim() === x.alias));
    if (
      !mine.length &&
      dup?.result.errorCode === 'PROBABLE_DUPLICATE' &&
      /paid at this account as payout|sent at this account/.test(dup.result.errorMessage ?? '')
    ) {
      // refused at send time, naming the earlier payout (duplicates.ts): a documented refusal
      out.refused++;
      REFUSALS.set('PROBABLE_DUPLICATE', (REFUSALS.get('PROBABLE_DUPLICATE') ?? 0) + 1);
      continue;
    }
    if (!mine.length) {
      const res = results.find((y) => Object.values(y.cells).some((c) => c.trim() === x.reference || c.trim() === x.alias));
      out.violations.push(
        `(c) ${what}: ${at} neither paid nor refused by validate at its row (results: ${res ? `${res.result.status} ${res.result.errorCode} ${res.result.errorMessage}` : 'no row'}; validate: ${problems.map((p) => `row ${p.row} ${p.column} ${p.code}`).join(', ') || v.stdout.slice(0, 300)})`,
      );
      continue;
    }
    out.refused++;
    for (const p of mine) {
      REFUSALS.set(p.code, (REFUSALS.get(p.code) ?? 0) + 1);
      if (p.file !== file || !p.column || !p.expected)
        out.violations.push(`(c) ${what}: ${at} refused without file, column or expected: ${JSON.stringify(p)}`);
      if (!x.refusals.has(p.code))
        out.violations.push(`(c) ${what}: ${at} refused by ${p.code} not expected: ${p.column}: ${p.message} (value ${p.value ?? ''})`);
    }
    const res = results.find((y) => Object.values(y.cells).some((c) => c.trim() === x.reference || c.trim() === x.alias));
    if (json?.results && (!res || res.result.status !== 'INVALID' || !res.result.errorMessage?.includes(mine[0]!.column!)))
      out.notes.push(`${at}: results row ${res ? `${res.result.status} ${res.result.errorMessage}` : 'missing'}`);
  }
  out.paid += paid.size;
  return paid;
}

/** What differs between the body drawn and the body sent. */
function bodyDiff(want: Drawn['body'], got: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const f of ['sourceCurrency', 'destinationCurrency', 'destinationCountryCode', 'method', 'narration'] as const)
    if (got[f] !== want[f]) out.push(`${f} ${JSON.stringify(got[f])} for ${JSON.stringify(want[f])}`);
  if (!new Dec(String(got.sourceAmount)).eq(want.sourceAmount))
    out.push(`sourceAmount ${String(got.sourceAmount)} for ${want.sourceAmount}`);
  const b = (got.beneficiary ?? {}) as Record<string, unknown>;
  for (const f of new Set([...Object.keys(b), ...Object.keys(want.beneficiary)]))
    if (b[f] !== want.beneficiary[f]) out.push(`beneficiary.${f} ${JSON.stringify(b[f])} for ${JSON.stringify(want.beneficiary[f])}`);
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { payouts: 0, paid: 0, refused: 0, runs: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.payouts} payouts drawn, ${totals.runs} runs, ${totals.paid} paid, ${totals.refused} refused ` +
    `(${[...REFUSALS].map(([c, k]) => `${c} ${k}`).join(', ') || 'none'}), ${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
