// pain.001 files for the samples, the template and the tests, from payout rows (the sample payroll's CSV
// rows): one PmtInf per method, debit currency and execution date, written with xmlbuilder2.
//   npx tsx test/input/pain001-files.ts     rewrites samples/payroll-2025-01-pain001-v03.xml and -v09.xml
// test/input/pain001-samples.test.ts checks the committed samples equal what this produces.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import countries from 'i18n-iso-countries/index.js';
import { create } from 'xmlbuilder2';
import { Dec } from '../../src/money.ts';
import { isoNamespace, type Pain001Version } from '../../src/spec/iso20022.ts';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
type Row = Record<string, string>;
type Obj = Record<string, unknown>;

/** The payment type a block of a method says (the method table of src/input/README.md gives the method back). */
const PAYMENT_TYPE: Record<string, Obj> = {
  SEPA: { SvcLvl: { Cd: 'SEPA' } },
  ACH: { SvcLvl: { Cd: 'NURG' } },
  BACS: { SvcLvl: { Cd: 'NURG' } },
  WIRE: { SvcLvl: { Cd: 'URGP' } },
  FASTER_PAYMENTS: { SvcLvl: { Cd: 'URGP' } },
};
const CLEARING: Record<string, [string, string]> = { NIP: ['Prtry', 'NIBSS'], HK_FPS: ['Cd', 'HKNCC'], CHINA_WIRE: ['Cd', 'CNAPS'] };
/** ISO 20022 writes a phone number +CC-NUMBER. */
const phone = (e164: string) => e164.replace(/^\+(852|1|44|86|234)/, '+$1-');
const a2 = (a3: string) => countries.alpha3ToAlpha2(a3) ?? a3;
const sum = (rows: Row[]) => rows.reduce((s, r) => s.plus(r.sourceAmount!), new Dec(0)).toFixed(2);

export interface Pain001Options {
  msgId?: string;
  /** Execution date of every block (default 2025-01-31). */
  date?: string;
  /** Replaces a block's payment type (undefined: none), by method. */
  paymentType?: Record<string, Obj | undefined>;
  /** Overrides the declared control sum of the group header. */
  ctrlSum?: string;
  /** Text put before the Document element (a DOCTYPE in tests). */
  prolog?: string;
}

/** One credit transfer of a payout row. */
function transaction(r: Row, v: Pain001Version, n: number): Obj {
  const v09 = v === 'pain.001.001.09';
  const same = r.sourceCurrency === r.destinationCurrency;
  const amount = same
    ? { InstdAmt: { '@Ccy': r.sourceCurrency, '#': r.sourceAmount } }
    : { EqvtAmt: { Amt: { '@Ccy': r.sourceCurrency, '#': r.sourceAmount }, CcyOfTrf: r.destinationCurrency } };
  const clearing = r.routingNumber ? ['Cd', 'USABA', r.routingNumber] : r.bankCode ? [...CLEARING[r.method!]!, r.bankCode] : undefined;
  const agent: Obj = {
    ...(r.swiftCode && { [v09 ? 'BICFI' : 'BIC']: r.swiftCode }),
    ...(clearing && { ClrSysMmbId: { ClrSysId: { [clearing[0]!]: clearing[1] }, MmbId: clearing[2] } }),
    ...(r.bankName && { Nm: r.bankName }),
  };
  const address: Obj = {
    ...(r.address && { StrtNm: r.address }),
    ...(r.postCode && { PstCd: r.postCode }),
    ...(r.city && { TwnNm: r.city }),
    Ctry: a2(r.beneficiaryCountry || r.destinationCountryCode!),
  };
  const id = r.iban ? { IBAN: r.iban } : { Othr: { Id: r.fpsId || r.accountNumber, ...(r.fpsId && { SchmeNm: { Prtry: 'FPS' } }) } };
  const documents = r.documents!.split(/\s*;\s*/).filter(Boolean);
  const referred = documents.map((d) => ({ ...(v09 ? { Tp: { CdOrPrtry: { Cd: 'CINV' } } } : {}), Nb: basename(d, extname(d)) }));
  return {
    PmtId: { InstrId: `INSTR-${String(n).padStart(4, '0')}`, EndToEndId: r.reference },
    Amt: amount,
    ...(Object.keys(agent).length && { CdtrAgt: { FinInstnId: agent } }),
    Cdtr: {
      Nm: r.accountName,
      PstlAdr: address,
      ...((r.phoneNumber || r.email) && {
        CtctDtls: { ...(r.phoneNumber && { MobNb: phone(r.phoneNumber) }), ...(r.email && { EmailAdr: r.email }) },
      }),
    },
    CdtrAcct: { Id: id, ...(r.accountType && { Tp: { Cd: r.accountType === 'savings' ? 'SVGS' : 'CACC' } }), Ccy: r.accountCurrency },
    ...(r.withdrawal === 'true' && { Purp: { Cd: 'ACCT' } }),
    RmtInf: {
      Ustrd: r.narration,
      ...(referred.length && { Strd: { RfrdDocInf: referred } }),
    },
  };
}

/** A pain.001 of the given version from payout rows. */
export function pain001(rows: Row[], v: Pain001Version, o: Pain001Options = {}): string {
  const v09 = v === 'pain.001.001.09';
  const date = o.date ?? '2025-01-31';
  const blocks = new Map<string, Row[]>();
  for (const r of rows) blocks.set(`${r.method}/${r.sourceCurrency}`, [...(blocks.get(`${r.method}/${r.sourceCurrency}`) ?? []), r]);
  let n = 0;
  const pmtInf = [...blocks].map(([key, list], i) => {
    const method = list[0]!.method!;
    const type =
      o.paymentType && method in o.paymentType ? o.paymentType[method] : (PAYMENT_TYPE[method] ?? { LclInstrm: { Prtry: method } });
    return {
      PmtInfId: `PMT-${String(i + 1).padStart(3, '0')}-${key.replace('/', '-')}`,
      PmtMtd: 'TRF',
      NbOfTxs: String(list.length),
      CtrlSum: sum(list),
      ...(type && { PmtTpInf: type }),
      ReqdExctnDt: v09 ? { Dt: date } : date,
      Dbtr: { Nm: 'Acme Payroll Ltd' },
      DbtrAcct: { Id: { Othr: { Id: `WALLET-${list[0]!.sourceCurrency}` } }, Ccy: list[0]!.sourceCurrency },
      DbtrAgt: { FinInstnId: v09 ? { BICFI: 'ACMEGB2LXXX' } : { BIC: 'ACMEGB2LXXX' } },
      ChrgBr: 'SLEV',
      CdtTrfTxInf: list.map((r) => transaction(r, v, ++n)),
    };
  });
  const doc = {
    Document: {
      '@xmlns': isoNamespace(v),
      CstmrCdtTrfInitn: {
        GrpHdr: {
          MsgId: o.msgId ?? 'ACME-PAYROLL-2025-01',
          CreDtTm: '2025-01-30T09:00:00',
          NbOfTxs: String(rows.length),
          CtrlSum: o.ctrlSum ?? sum(rows),
          InitgPty: { Nm: 'Acme Payroll Ltd' },
        },
        PmtInf: pmtInf,
      },
    },
  };
  const xml = create({ version: '1.0', encoding: 'UTF-8' }, doc).end({ prettyPrint: true });
  return o.prolog ? xml.replace('<Document', `${o.prolog}\n<Document`) : `${xml}\n`;
}

/** The sample payroll's rows (samples/payroll-2025-01.csv). */
export const sampleRows = (): Row[] => parse<Row>(readFileSync(join(root, 'samples', 'payroll-2025-01.csv')), { columns: true, bom: true });

export const SAMPLES: Record<Pain001Version, string> = {
  'pain.001.001.03': 'samples/payroll-2025-01-pain001-v03.xml',
  'pain.001.001.09': 'samples/payroll-2025-01-pain001-v09.xml',
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [v, path] of Object.entries(SAMPLES)) writeFileSync(join(root, path), pain001(sampleRows(), v as Pain001Version));
}
