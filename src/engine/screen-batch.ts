// Sanctions screening of a batch's payees before any money moves (issue 42): each valid row's
// payee through the screener of the lists given (src/screening), a row with a hit (or in the
// review band) held unless approved clearances cover every one of its hits; the lists' age
// checked against the account's policy. Offline: not one request.
import { loadScreener, ScreeningError, type Hit, type ListInfo, type Payee } from '../screening/screening.ts';
import { maskAccount } from '../mask.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { BatchUnusable } from './engine-errors.ts';
import { sha256Hex } from './identity.ts';
import type { EngineRow } from './prepare.ts';

/**
 * A false positive cleared by approvers (src/approvals/clearance.ts signs and verifies it): it
 * binds the row's reference, its payee (name and account identifiers, by payeeDigest) and one list
 * entry as it read then, so a changed account, a changed entry or a new one is not covered.
 */
export interface Clearance {
  id: string;
  reference: string;
  payee: string;
  list: string;
  entryId: string;
  entryName: string;
  reason: string;
  expiresAt: string;
  signedBy: string[];
}

export interface ScreeningOptions {
  /** --sanctions-list, as given. */
  lists: string[];
  /** The account's policy: a list older than this refuses the run, and so does no list at all. */
  maxAgeMs?: number;
  /** Clearances whose signatures were verified (approvals/clearance.ts). */
  clearances?: readonly Clearance[];
  now?: Date;
}

export interface Screened {
  lists: ListInfo[];
  /** Valid rows screened. */
  screened: number;
  /** Rows held (row number → its reference and the hits no clearance covers): HELD_SCREENING, never sent. */
  held: Map<number, { reference: string; hits: Hit[] }>;
  /** Rows whose every hit an approved clearance covers: sent like any other, the results name the clearance. */
  cleared: Map<number, Clearance[]>;
  /** Why nothing may be sent whatever the rows: a list too old for the account's policy, or none. */
  refused: string[];
}

/** The payee of a valid row, as the screener reads it: the account name and the identifiers lists carry. */
export function payeeOf(p: PayoutRow): Payee {
  const b = p.beneficiary as Partial<Record<'accountName' | 'swiftCode' | 'iban' | 'accountNumber' | 'beneficiaryCountry', string>>;
  return {
    reference: p.reference,
    row: p.rowNumber,
    name: b.accountName ?? '',
    country: b.beneficiaryCountry ?? p.destinationCountryCode,
    ...(b.swiftCode ? { bic: b.swiftCode } : {}),
    ...(b.iban ? { iban: b.iban } : {}),
    ...(b.accountNumber ? { accountNumber: b.accountNumber } : {}),
  };
}

/** What a clearance binds of a payee: its name and every account identifier (a digest: no account number in the file). */
export const payeeDigest = (p: Payee): string => sha256Hex(JSON.stringify([p.name, p.bic ?? '', p.iban ?? '', p.accountNumber ?? '']));

const covers = (c: Clearance, p: Payee, h: Hit, now: number) =>
  c.reference === p.reference &&
  c.payee === payeeDigest(p) &&
  c.list === h.list &&
  c.entryId === h.entryId &&
  c.entryName === h.entryName &&
  Date.parse(c.expiresAt) > now;

/** One hit for a person: the entry, what matched, the score and why. */
export const hitText = (h: Hit): string =>
  `${h.list} ${h.entryId} "${h.entryName}"${h.programme ? ` (${h.programme})` : ''}: ${h.on} "${h.on === 'iban' || h.on === 'account' ? maskAccount(h.matched) : h.matched}", score ${h.score} (${h.band}): ${h.why}`;

export const listText = (l: ListInfo): string =>
  `${l.path} (${l.format}, ${l.entries} entries, of ${l.date}${l.dateFrom === 'mtime' ? ' by its modification time' : ''}, sha256 ${l.digest.slice(0, 16)}…)`;

/** Screens every valid row of `rows`; a list that cannot be read is BatchUnusable (exit 2), never an empty list. */
export async function screenRows(rows: readonly EngineRow[], o: ScreeningOptions): Promise<Screened> {
  const out: Screened = { lists: [], screened: 0, held: new Map(), cleared: new Map(), refused: [] };
  const age = o.maxAgeMs === undefined ? undefined : `${Math.round(o.maxAgeMs / 3_600_000)}h`;
  if (!o.lists.length) {
    if (age)
      out.refused.push(
        `this account's policy needs every payee screened against sanctions lists at most ${age} old: give --sanctions-list`,
      );
    return out;
  }
  let screener;
  try {
    screener = await loadScreener(o.lists);
  } catch (e) {
    if (e instanceof ScreeningError) throw new BatchUnusable('SANCTIONS_LIST', e.message);
    throw e;
  }
  const now = (o.now ?? new Date()).getTime();
  out.lists = screener.lists;
  for (const l of screener.lists)
    if (o.maxAgeMs !== undefined && now - Date.parse(l.date) > o.maxAgeMs)
      out.refused.push(`the sanctions list ${listText(l)} is older than the ${age} this account's policy allows: download it again`);
  for (const r of rows) {
    if (!r.payout) continue;
    out.screened++;
    const payee = payeeOf(r.payout);
    const hits = screener.screen(payee);
    if (!hits.length) continue;
    const used = new Set<Clearance>();
    const open = hits.filter((h) => {
      const c = o.clearances?.find((x) => covers(x, payee, h, now));
      if (c) used.add(c);
      return !c;
    });
    if (open.length) out.held.set(r.rowNumber, { reference: payee.reference, hits: open });
    else out.cleared.set(r.rowNumber, [...used]);
  }
  return out;
}
