// Sanctions screening of a batch's payees before any money moves, offline: a row with a
// hit or in the review band is held unless approved clearances cover every hit.
import { loadScreener, ScreeningError, type Hit, type ListInfo, type Payee } from '../screening/screening.ts';
import { maskAccount } from '../mask.ts';
import { zonedTime } from '../text.ts';
import { payerName } from '../input/pain001-map.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { BatchUnusable } from './engine-errors.ts';
import { sha256Hex } from './identity.ts';
import type { EngineRow } from './prepare.ts';

/** A false positive cleared by approvers (approvals/clearance.ts): reference, payee digest and one entry as read, nothing else. */
export interface Clearance {
  id: string;
  reference: string;
  payee: string;
  list: string;
  entryId: string;
  entryName: string;
  entryDigest: string;
  reason: string;
  expiresAt: string;
  signedBy: string[];
}

export interface ScreeningOptions {
  lists: string[];
  /** The account's policy: a list older than this refuses the run, and so does no list at all. */
  maxAgeMs?: number;
  /** Verified clearances. */
  clearances?: readonly Clearance[];
}

export interface Screened {
  lists: ListInfo[];
  screened: number;
  /** HELD_SCREENING, never sent: the hits no clearance covers. */
  held: Map<number, { reference: string; hits: Hit[] }>;
  /** Every hit covered: sent, the results name the clearance. */
  cleared: Map<number, Clearance[]>;
  /** Why nothing may be sent: a list too old for the policy, or none. */
  refused: string[];
}

/** The beneficiary's fields as screening reads them, the creditor agent's BIC as its swiftCode. */
const beneficiaryOf = (p: PayoutRow) => ({ swiftCode: p.creditorAgentBic, ...p.beneficiary }) as Partial<Record<string, string>>;

export function payeeOf(p: PayoutRow): Payee {
  const b = beneficiaryOf(p);
  return {
    reference: p.reference,
    row: p.rowNumber,
    name: b.accountName ?? '',
    country: b.beneficiaryCountry ?? p.destinationCountryCode,
    ...(b.swiftCode ? { bic: b.swiftCode } : {}),
    ...(b.intermediarySwift ? { intermediaryBic: b.intermediarySwift } : {}),
    ...(b.iban ? { iban: b.iban } : {}),
    ...(b.accountNumber ? { accountNumber: b.accountNumber } : {}),
    otherAccounts: OTHER_ACCOUNTS.flatMap((k) => (b[k] ? [[k, b[k]] as [string, string]] : [])),
  };
}

/** The fields besides an IBAN and account number that name where a payout goes, screened as accounts. */
const OTHER_ACCOUNTS = ['alipayId', 'openId', 'wechatUserId', 'fpsId', 'phoneNumber', 'email'] as const;

/** The beneficiary's fields, besides its name, that say where the money goes. */
const WHERE =
  'iban accountNumber swiftCode intermediarySwift routingNumber bankCode sortCode fpsId phoneNumber email alipayId openId wechatUserId'.split(
    ' ',
  );

/** A digest of the payee's name, every field of WHERE and the ultimate parties' names: no account number in a clearance file. */
export const payeeDigest = (row: PayoutRow): string => {
  const b = beneficiaryOf(row);
  const u = row.ultimateCreditor;
  const ultimate = u ? [u.name, ...(u.bic ? [u.bic] : [])] : []; // (none: the digest of clearances made before)
  const [name, bic] = [row.ultimateDebtor, row.ultimateDebtorBic];
  const payer = name || bic ? [{ UltmtDbtr: name, bic }] : []; // (an object: never read as a creditor's BIC; no bic: as before it)
  return sha256Hex(JSON.stringify([b.accountName ?? '', ...WHERE.map((k) => b[k] ?? ''), ...ultimate, ...payer]));
};

const covers = (c: Clearance, row: PayoutRow, h: Hit, now: number) =>
  c.reference === row.reference &&
  c.payee === payeeDigest(row) &&
  c.list === h.list &&
  c.entryId === h.entryId &&
  c.entryName === h.entryName &&
  c.entryDigest === h.entryDigest &&
  (zonedTime(c.expiresAt) ?? NaN) > now;

export const hitText = (h: Hit): string =>
  `${h.list} ${h.entryId} "${h.entryName}"${h.programme ? ` (${h.programme})` : ''}: ${h.on} "${h.on === 'iban' || h.on === 'account' ? maskAccount(h.matched) : h.matched}", score ${h.score} (${h.band}): ${h.why}`;

export const listText = (l: ListInfo): string =>
  `${l.path} (${l.format}, ${l.entries} entries, of ${l.date}${l.dateFrom === 'mtime' ? ' by its modification time' : ''}, sha256 ${l.digest.slice(0, 16)}…)`;

/** Screens every valid row of `rows`; a list that cannot be read is BatchUnusable (exit 2), never an empty list. */
export async function screenRows(rows: Iterable<EngineRow>, o: ScreeningOptions): Promise<Screened> {
  const out: Screened = { lists: [], screened: 0, held: new Map(), cleared: new Map(), refused: [] };
  const age = o.maxAgeMs === undefined ? undefined : `${Math.round(o.maxAgeMs / 3_600_000)}h`;
  if (!o.lists.length) {
    if (age)
      out.refused.push(
        `this account's policy needs every payee screened against sanctions lists at most ${age} old: give --sanctions-list`,
      );
    return out;
  }
  const screener = await loadScreener(o.lists).catch((e: unknown) => {
    throw e instanceof ScreeningError ? new BatchUnusable('SANCTIONS_LIST', e.message) : e;
  });
  const now = Date.now();
  out.lists = screener.lists;
  for (const l of screener.lists)
    if (o.maxAgeMs !== undefined && now - Date.parse(l.date) > o.maxAgeMs)
      out.refused.push(`the sanctions list ${listText(l)} is older than the ${age} this account's policy allows: download it again`);
  for (const r of rows) {
    if (!r.payout) continue;
    out.screened++;
    const payee = payeeOf(r.payout);
    const { ultimateCreditor: ultimate, ultimateDebtor: payer = '', ultimateDebtorBic: bic } = r.payout;
    const name = payerName(payer);
    const party = (who: string, p: Omit<Payee, 'reference' | 'row'>) =>
      screener.screen({ reference: payee.reference, row: payee.row, ...p }).map((h) => ({ ...h, why: `${who}: ${h.why}` }));
    const hits = [
      ...screener.screen(payee),
      ...(ultimate
        ? party(`the ultimate creditor (UltmtCdtr) "${ultimate.name || ultimate.bic}"`, { ...ultimate, party: 'ultimate creditor' })
        : []),
      ...(name || bic ? party(`the payer it is sent on behalf of (UltmtDbtr) "${payer || bic}"`, { name, bic, party: 'payer' }) : []),
    ];
    if (!hits.length) continue;
    const used = new Set<Clearance>();
    const open = hits.filter((h) => {
      const c = o.clearances?.find((x) => covers(x, r.payout!, h, now));
      if (c) used.add(c);
      return !c;
    });
    if (open.length) out.held.set(r.rowNumber, { reference: payee.reference, hits: open });
    else out.cleared.set(r.rowNumber, [...used]);
  }
  return out;
}
