// One pain.001 credit transfer (CdtTrfTxInf, with its payment information block) as a payout row:
// the element → column table of README.md "pain.001", and the one method table (methodOf).
import countries from 'i18n-iso-countries/index.js';
import { canonicalMethod, PAYOUT_METHODS, type PayoutMethod } from '../spec/codes.ts';
import { METHOD_RULES } from '../spec/methods.ts';
import type { CanonicalField } from './batch-columns.ts';
import type { RawRow } from './records.ts';
import { atLeastDecimals, minorUnits, xsDecimal } from '../money.ts';

/** The values of one element block by its path inside the block ("CdtrAcct/Id/IBAN", "Amt/InstdAmt@Ccy"). */
export type Elements = Map<string, string[]>;

/** The columns a pain.001 row carries to its results besides the payout columns (iso-contract: kept unchanged). */
export const PAIN001_CARRIED = [
  'ChrgBr',
  'Unsupported',
  'MsgId',
  'MsgNmId',
  'PmtInfId',
  'InstrId',
  'EndToEndId',
  'CcyOfTrf',
  'Amt',
  'AmtCcy',
  'ReqdExctnDt',
  'documentsMatchedBy',
  'UltmtCdtr',
  'UltmtCdtrCtry',
  'UltmtCdtrBIC',
  'UltmtDbtr',
  'UltmtDbtrBIC',
] as const;

/** An organisation's identifiers (BIC .09, .03): an UltmtDbtr without Nm is shown as "Id/OrgId/Othr/Id 12345", never screened as a name. */
const PARTY_IDS = ['Id/OrgId/AnyBIC', 'Id/OrgId/BICOrBEI', 'Id/OrgId/LEI', 'Id/OrgId/Othr/Id'];

/** The name in an UltmtDbtr cell: '' for one shown by its identifier or unnamed ("(no name: Id/PrvtId)"). */
export const payerName = (cell: string): string => (cell.startsWith('(') || PARTY_IDS.some((id) => cell.startsWith(`${id} `)) ? '' : cell);

interface Transaction {
  tx: Elements;
  block: Elements;
  /** XPath of the CdtTrfTxInf and of its PmtInf. */
  txPath: string;
  blockPath: string;
  /** --documents: the files of the folder by name without extension (relative to the batch's folder). */
  documents?: Map<string, string[]>;
}

/** The row's cells, with the element each field was read from (an absolute XPath) and the issues found. */
type MappedRow = Omit<NonNullable<RawRow['xml']>, 'path'> & {
  cells: Partial<Record<CanonicalField | (typeof PAIN001_CARRIED)[number], string>>;
};

export const first = (e: Elements, path: string): string => e.get(path)?.[0] ?? '';
const alpha3 = (a2: string): string => (a2 ? (countries.alpha2ToAlpha3(a2.toUpperCase()) ?? a2) : '');

/** The clearing systems read from ClrSysMmbId (ExternalClearingSystemIdentification1Code; NIBSS is proprietary: the list has no Nigerian scheme). */
const CLEARING: Record<string, CanonicalField> = {
  USABA: 'routingNumber',
  GBDSC: 'sortCode',
  NIBSS: 'bankCode',
  HKNCC: 'bankCode',
  CNAPS: 'bankCode',
};
/** CdtrAcct/Id/Othr/SchmeNm/Prtry naming a wallet identifier instead of an account number. */
const OTHER_SCHEMES: Record<string, CanonicalField> = { FPS: 'fpsId', ALIPAY: 'alipayId', WECHAT: 'wechatUserId', OPENID: 'openId' };
/** The parts of Cdtr/PstlAdr in the address, in the order an address is written (BldgNb follows its street), and the word a bare number needs. */
const ADDRESS_PARTS = ['Dept', 'SubDept', 'BldgNm', 'Flr', 'Room', 'StrtNm', 'BldgNb', 'PstBx', 'AdrLine', 'DstrctNm', 'TwnLctnNm'];
const ADDRESS_WORDS: Record<string, string> = { Flr: 'Floor ', Room: 'Room ', PstBx: 'PO Box ' };
/** Beneficiary fields of context, left out of a row whose method does not take them (an address on a NIP row is not an error of the ERP's); the agent's BIC is kept, to be screened. */
const CONTEXT: readonly CanonicalField[] = ['address', 'city', 'postCode', 'bankName', 'beneficiaryCountry', 'accountType'];

/**
 * A PstlAdr's street, structured (ADDRESS_PARTS), in lines (AdrLine), or hybrid (both: the lines after the street), and
 * its town with its state (CtrySubDvsn), as "Chicago, IL", each as [text, element: of several parts, the whole PstlAdr];
 * and the whole address in one line, the street, town, post code and country.
 */
function postalAddress(e: Elements, adr: string) {
  const parts = ADDRESS_PARTS.filter((p) => e.has(`${adr}/${p}`));
  const lines: string[] = [];
  for (const p of parts)
    for (const v of e.get(`${adr}/${p}`)!)
      lines.push(p === 'BldgNb' && e.has(`${adr}/StrtNm`) ? `${lines.pop()} ${v}` : (ADDRESS_WORDS[p] ?? '') + v);
  const town = [first(e, `${adr}/TwnNm`), first(e, `${adr}/CtrySubDvsn`)].filter(Boolean);
  const street = [lines.join(', '), parts.length > 1 ? adr : `${adr}/${parts[0] ?? 'AdrLine'}`] as const;
  const townAt = town.length > 1 ? adr : `${adr}/${e.has(`${adr}/CtrySubDvsn`) ? 'CtrySubDvsn' : 'TwnNm'}`;
  const line = [street[0], ...town, first(e, `${adr}/PstCd`), first(e, `${adr}/Ctry`)].filter(Boolean).join(', ');
  return { street, town: [town.join(', '), townAt] as const, line };
}

/** The method of a transaction, by the first line that applies of README.md "pain.001" (**Method**). */
function methodOf(
  t: Record<'lcl' | 'svc' | 'lclCd' | 'ccy' | 'country', string> & { has: (f: CanonicalField) => boolean },
): { method: PayoutMethod } | { problem: string; expected: string } {
  const { lcl, svc, ccy, country, has } = t;
  // (as a batch's method column reads it: HONG_KONG_FPS, the spec's other name of HK_FPS, is that method, never the next line's)
  const named = canonicalMethod(lcl);
  if (named) return { method: named };
  if (svc === 'SEPA') return { method: 'SEPA' };
  if (['CCD', 'PPD', 'CTX', 'IAT'].includes(t.lclCd)) return { method: 'ACH' };
  const uk = ccy === 'GBP' && country === 'GBR';
  if (svc === 'URGP') return { method: country === 'USA' ? 'WIRE' : country === 'CHN' ? 'CHINA_WIRE' : uk ? 'FASTER_PAYMENTS' : 'SWIFT' };
  if (svc === 'NURG' && country === 'USA') return { method: 'ACH' };
  if (svc === 'NURG' && uk) return { method: 'BACS' };
  if (ccy === 'EUR' && METHOD_RULES.SEPA.destinationCountries!.includes(country) && has('iban')) return { method: 'SEPA' };
  if (ccy === 'NGN' && country === 'NGA') return { method: 'NIP' };
  if (uk) return { method: 'FASTER_PAYMENTS' };
  if (ccy === 'HKD' && country === 'HKG') return { method: 'HK_FPS' };
  if (ccy === 'CNY' && country === 'CHN')
    return { method: has('alipayId') ? 'ALIPAY' : has('wechatUserId') || has('openId') ? 'WECHAT' : 'CHINA_WIRE' };
  const types = 'PmtTpInf/SvcLvl/Cd URGP (WIRE) or NURG (ACH), or PmtTpInf/LclInstrm/Prtry naming the method';
  if (ccy === 'USD' && country === 'USA')
    return { problem: 'a USD transfer in the USA may go by ACH or by WIRE: the file does not say which', expected: types };
  if (has('swiftCode')) return { method: 'SWIFT' };
  return {
    problem: `no payout method reaches ${ccy || 'this currency'} in ${country || 'this country'} with the identifiers given`,
    expected: `PmtTpInf/LclInstrm/Prtry naming a method (${PAYOUT_METHODS.join(', ')}), or the creditor agent's BIC for SWIFT`,
  };
}

/** An xs:decimal as a plain decimal (1500. is 1500, .5 0.5), without zeros past the currency's decimals (1.500 EUR, 1500.00 JPY); other text as it is (validation refuses it). */
function isoAmount(text: string, currency: string): string {
  const d = xsDecimal(text);
  const decimals = text.split('.')[1]?.length ?? 0;
  return d ? atLeastDecimals(d, Math.min(decimals, minorUnits(currency) ?? decimals)) : text;
}

/** The payout row of one transaction (README.md "pain.001" table), with the element of each field and the issues found. */
export function mapTransaction({ tx, block, txPath, blockPath, documents }: Transaction): MappedRow {
  const cells: MappedRow['cells'] = {};
  const elements: MappedRow['elements'] = {};
  const issues: MappedRow['issues'] = [];
  const set = (field: CanonicalField, value: string, element: string, base = txPath) => {
    if (!value) return void (elements[field] ??= `${base}/${element}`); // (a missing value: the element that would hold it)
    cells[field] = value;
    elements[field] = `${base}/${element}`;
  };
  const txOr = (path: string) => first(tx, path) || first(block, path);

  set('reference', first(tx, 'PmtId/EndToEndId'), 'PmtId/EndToEndId');
  // who bears the charges (the transaction's, else its block's): checked with the row (validation/row.ts checkOrdered)
  cells.ChrgBr = first(tx, 'ChrgBr') || first(block, 'ChrgBr');
  elements.ChrgBr = `${tx.has('ChrgBr') ? txPath : blockPath}/ChrgBr`;
  // what no payout does as ordered, as "element value"s (checked with the row too): a cheque, money held for the payee, a
  // second intermediary (one is sent), a rate of the payer's (agreed, booked, of no type; SPOT or SALE is the service's)
  const [mtd, rate] = [first(block, 'PmtMtd'), tx.has('XchgRateInf/CtrctId') ? 'XchgRateInf/CtrctId' : 'XchgRateInf/RateTp'];
  const via2 = [...tx.keys()].find((k) => /^IntrmyAgt[23]\//.test(k));
  const unsupported = [
    ...(mtd && mtd !== 'TRF' && mtd !== 'TRA' ? [[blockPath, 'PmtMtd', mtd]] : []),
    ...([...tx.keys()].some((k) => k.startsWith('XchgRateInf/')) && !/^(SPOT|SALE)$/.test(first(tx, rate))
      ? [[txPath, rate, first(tx, rate) || '(none)']]
      : []),
    ...(tx.get('InstrForCdtrAgt/Cd') ?? []).filter((cd) => cd === 'CHQB' || cd === 'HOLD').map((cd) => [txPath, 'InstrForCdtrAgt/Cd', cd]),
    ...(via2 ? [[txPath, via2, first(tx, via2)]] : []),
  ];
  cells.Unsupported = unsupported.map(([, at, value]) => `${at} ${value}`).join('; ');
  if (unsupported[0]) elements.Unsupported = `${unsupported[0][0]}/${unsupported[0][1]}`;
  // The amount: instructed in the debit wallet's currency, or an equivalent amount (debited) and the currency of transfer.
  const debitCcy = first(block, 'DbtrAcct/Ccy');
  const eqvt = first(tx, 'Amt/EqvtAmt/Amt');
  const [amount, amountCcy, amountPath] = eqvt
    ? [eqvt, first(tx, 'Amt/EqvtAmt/Amt@Ccy'), 'Amt/EqvtAmt/Amt']
    : [first(tx, 'Amt/InstdAmt'), first(tx, 'Amt/InstdAmt@Ccy'), 'Amt/InstdAmt'];
  set('sourceAmount', isoAmount(amount, debitCcy || amountCcy), amountPath);
  Object.assign(cells, { Amt: amount, AmtCcy: amountCcy }); // (as sent, for the status report: a retry may edit sourceAmount)
  elements.AmtCcy = `${txPath}/${amountPath}/@Ccy`;
  set('sourceCurrency', debitCcy || amountCcy, debitCcy ? 'DbtrAcct/Ccy' : `${amountPath}/@Ccy`, debitCcy ? blockPath : txPath);
  const creditCcy = first(tx, 'CdtrAcct/Ccy');
  const transferAt = eqvt ? 'Amt/EqvtAmt/CcyOfTrf' : creditCcy ? 'CdtrAcct/Ccy' : 'Amt/InstdAmt/@Ccy';
  set('destinationCurrency', eqvt ? first(tx, transferAt) : creditCcy || amountCcy, transferAt);
  set('accountCurrency', creditCcy || (cells.destinationCurrency ?? ''), creditCcy ? 'CdtrAcct/Ccy' : transferAt);

  set('accountName', first(tx, 'Cdtr/Nm'), 'Cdtr/Nm');
  set('iban', first(tx, 'CdtrAcct/Id/IBAN'), 'CdtrAcct/Id/IBAN');
  const scheme = OTHER_SCHEMES[first(tx, 'CdtrAcct/Id/Othr/SchmeNm/Prtry').toUpperCase()] ?? 'accountNumber';
  set(scheme, first(tx, 'CdtrAcct/Id/Othr/Id'), 'CdtrAcct/Id/Othr/Id');
  set('accountType', { CACC: 'checking', SVGS: 'savings' }[first(tx, 'CdtrAcct/Tp/Cd')] ?? first(tx, 'CdtrAcct/Tp/Cd'), 'CdtrAcct/Tp/Cd');
  const agent = 'CdtrAgt/FinInstnId';
  const bicAt = tx.has(`${agent}/BICFI`) ? `${agent}/BICFI` : `${agent}/BIC`;
  set('swiftCode', first(tx, bicAt), bicAt);
  set('bankName', first(tx, `${agent}/Nm`), `${agent}/Nm`);
  const via = tx.has('IntrmyAgt1/FinInstnId/BICFI') ? 'IntrmyAgt1/FinInstnId/BICFI' : 'IntrmyAgt1/FinInstnId/BIC';
  set('intermediarySwift', first(tx, via), via);
  const clearing = CLEARING[first(tx, `${agent}/ClrSysMmbId/ClrSysId/Cd`) || first(tx, `${agent}/ClrSysMmbId/ClrSysId/Prtry`)];
  if (clearing) set(clearing, first(tx, `${agent}/ClrSysMmbId/MmbId`), `${agent}/ClrSysMmbId/MmbId`);
  for (const f of new Set(Object.values(CLEARING))) set(f, '', `${agent}/ClrSysMmbId/MmbId`); // (the element a missing one would be in)
  set('phoneNumber', first(tx, 'Cdtr/CtctDtls/MobNb').replace(/[-()]/g, ''), 'Cdtr/CtctDtls/MobNb'); // ISO writes +852-91234567
  set('email', first(tx, 'Cdtr/CtctDtls/EmailAdr'), 'Cdtr/CtctDtls/EmailAdr');
  // whom the money is for, behind the creditor: never sent, screened as the payee is (engine/screen-batch.ts)
  Object.assign(cells, { UltmtCdtr: first(tx, 'UltmtCdtr/Nm'), UltmtCdtrCtry: alpha3(first(tx, 'UltmtCdtr/PstlAdr/Ctry')) });
  cells.UltmtCdtrBIC = first(tx, 'UltmtCdtr/Id/OrgId/AnyBIC') || first(tx, 'UltmtCdtr/Id/OrgId/BICOrBEI'); // (.09, .03)

  const adr = 'Cdtr/PstlAdr';
  const cdtr = postalAddress(tx, adr);
  set('address', ...cdtr.street);
  set('city', ...cdtr.town);
  set('postCode', first(tx, `${adr}/PstCd`), `${adr}/PstCd`);
  // The payer the transfer is made on behalf of (the transaction's, else its block's): its address is the remitter's
  // (spec §2: else the business's is shown); one with none is refused (validation/row.ts checkOrdered).
  const ultmt = (e: Elements) => [...e].find(([k]) => k.startsWith('UltmtDbtr/'));
  const [payer, payerAt] = ultmt(tx) ? [tx, txPath] : [block, blockPath];
  set('remitterAddress', postalAddress(payer, 'UltmtDbtr/PstlAdr').line, 'UltmtDbtr/PstlAdr', payerAt);
  // named by its Nm, else by its identifier shown as such (PARTY_IDS; its BIC is screened), never by a part of its address;
  // none when it is the debtor itself (an ERP may name it so)
  const by = ['Nm', ...PARTY_IDS].find((p) => payer.has(`UltmtDbtr/${p}`));
  const itself = !!by && first(payer, `UltmtDbtr/${by}`).toLowerCase() === first(block, `Dbtr/${by}`).toLowerCase();
  // (one with neither nor an address, a person's id say, is still another payer: shown by the element, never its value)
  const other = ultmt(payer)?.[0].split('/').slice(1, 3).join('/');
  const unnamed = other && !other.startsWith('PstlAdr') ? `(no name: ${other})` : '';
  cells.UltmtDbtr = itself ? '' : by ? `${by === 'Nm' ? '' : `${by} `}${first(payer, `UltmtDbtr/${by}`)}` : unnamed;
  cells.UltmtDbtrBIC = itself ? '' : first(payer, 'UltmtDbtr/Id/OrgId/AnyBIC') || first(payer, 'UltmtDbtr/Id/OrgId/BICOrBEI');
  // The country the money goes to: the account's (IBAN), else the agent's (BIC), else the creditor's address (either
  // written in groups, as their checks read them).
  const [country, countryAt] = cells.iban
    ? [cells.iban.replace(/\s+/g, '').slice(0, 2), 'CdtrAcct/Id/IBAN']
    : cells.swiftCode
      ? [cells.swiftCode.replace(/\s+/g, '').slice(4, 6), bicAt]
      : [first(tx, `${adr}/Ctry`), `${adr}/Ctry`];
  set('destinationCountryCode', alpha3(country), countryAt);
  set('beneficiaryCountry', alpha3(first(tx, `${adr}/Ctry`) || country), first(tx, `${adr}/Ctry`) ? `${adr}/Ctry` : countryAt);
  // unstructured remittance, else the structured: a creditor reference (RF...), else the documents referred to
  const rmtInf = ['RmtInf/Ustrd', 'RmtInf/Strd/CdtrRefInf/Ref', 'RmtInf/Strd/RfrdDocInf/Nb'].find((p) => tx.has(p)) ?? 'RmtInf/Ustrd';
  set('narration', (tx.get(rmtInf) ?? []).join(' '), rmtInf);
  // A withdrawal (no document needed) is to an own account: AccountManagement (ACCT) is between accounts of the same
  // holder; an intra-company payment (INTC) goes to another company of the group, a cash management one (CASH) names no holder.
  set('withdrawal', first(tx, 'Purp/Cd') === 'ACCT' ? 'true' : 'false', 'Purp/Cd');

  // The method (methodOf), from the transaction's payment type, else its block's.
  const svcAt = tx.has('PmtTpInf/SvcLvl/Cd') ? txPath : blockPath;
  const found = methodOf({
    lcl: txOr('PmtTpInf/LclInstrm/Prtry').toUpperCase(),
    lclCd: txOr('PmtTpInf/LclInstrm/Cd').toUpperCase(),
    svc: txOr('PmtTpInf/SvcLvl/Cd').toUpperCase(),
    ccy: cells.destinationCurrency ?? '',
    country: cells.destinationCountryCode ?? '',
    has: (f) => !!cells[f],
  });
  if ('method' in found) {
    set('method', found.method, 'PmtTpInf', svcAt);
    // A UK IBAN holds the sort code and the account number (FASTER_PAYMENTS and BACS send all three);
    // for SWIFT the IBAN is the account number.
    // (written as the IBAN check reads it: in groups or small letters too)
    const gb = /^GB\d\d[A-Z]{4}(\d{6})(\d{8})$/i.exec((cells.iban ?? '').replace(/\s+/g, ''));
    if (gb && (found.method === 'FASTER_PAYMENTS' || found.method === 'BACS')) {
      if (!cells.sortCode) set('sortCode', gb[1]!, 'CdtrAcct/Id/IBAN');
      if (!cells.accountNumber) set('accountNumber', gb[2]!, 'CdtrAcct/Id/IBAN');
    }
    if (found.method === 'SWIFT' && !cells.accountNumber) set('accountNumber', cells.iban ?? '', 'CdtrAcct/Id/IBAN');
    const rule = METHOD_RULES[found.method];
    const takes = new Set<string>([...rule.required, ...rule.optional, ...(rule.oneOf?.flat() ?? [])]);
    for (const f of CONTEXT) if (!takes.has(f)) delete cells[f];
  } else {
    elements.method = `${svcAt}/PmtTpInf`;
    issues.push({ field: 'method', message: found.problem, expected: found.expected });
  }

  // Supporting documents (--documents): by end-to-end id, else by a referred document's number.
  if (documents) {
    const byRef = (tx.get('RmtInf/Strd/RfrdDocInf/Nb') ?? []).flatMap((nb) => documents.get(nb.toLowerCase()) ?? []);
    const byId = documents.get((cells.reference ?? '').toLowerCase()) ?? [];
    const [files, by] = byId.length ? [byId, 'EndToEndId'] : [byRef, 'RfrdDocInf/Nb'];
    if (files.length) {
      set('documents', files.join('; '), by === 'EndToEndId' ? 'PmtId/EndToEndId' : 'RmtInf/Strd/RfrdDocInf/Nb');
      cells.documentsMatchedBy = by;
    }
  }
  return { cells, elements, issues };
}
