// The camt.053.001.02 statement of `reconcile --statement FILE`: one Stmt per wallet the batch moved,
// balances as the service gives them (spec §2 Wallet transaction), one Ntry per movement of the
// period, oldest first. What each element holds: src/results/REFERENCE.md.
import { Dec } from '../money.ts';
import { parseEarlierPayouts } from '../engine/money-totals.ts';
import { ENGINE_STATUSES } from '../engine/outcome.ts';
import { isoAmount, isoId, isoMessageId, isoText, longIdRmtInf, writeIsoXml } from '../results/iso-xml.ts';
import { batchColumns } from '../results/read.ts';
import { ResultsError } from '../results/results-errors.ts';
import type { ResultRow, ResultsTable } from '../results/types.ts';
import { payoutIndex, type ReconSwap, type ReconTx, type TieOutReport } from './tie-out.ts';
import { utcTime } from '../text.ts';

type Kind = 'payout' | 'refund' | 'swap' | 'other';

/** ISO bank transaction codes (domain, family, sub-family). */
const DOMAIN: Partial<Record<Kind, [string, string, string]>> = { payout: ['PMNT', 'ICDT', 'XBCT'], refund: ['PMNT', 'ICDT', 'RRTN'] };

/** Each payout (a row's own, and those it replaced) by its payoutRef and its id. */
function ownersOf(table: ResultsTable) {
  const owners = payoutIndex<{ row: ResultRow; fee?: string }>();
  for (const row of table.rows) {
    // (a row already paid by another batch: that batch's payout, never this message's)
    if (row.result.status !== ENGINE_STATUSES.ALREADY_PAID)
      owners.add({ row, fee: row.result.fee }, row.result.payoutId, row.result.payoutRef);
    for (const e of parseEarlierPayouts(row.result.earlierPayouts).payouts) owners.add({ row, fee: e.fee }, e.payoutId, e.payoutRef);
  }
  return owners;
}

const dateTime = (iso: string | undefined): string | undefined => {
  const t = utcTime(iso);
  return t === undefined ? undefined : new Date(t).toISOString();
};

interface StatementInput {
  table: ResultsTable;
  /** In listing order (newest first at the sandbox). */
  transactions: readonly ReconTx[];
  swaps: readonly ReconSwap[];
  period: TieOutReport['period'];
}

export async function writeStatement(path: string, o: StatementInput): Promise<{ statements: number; entries: number }> {
  const owners = ownersOf(o.table);
  const swapRefs = new Set(o.swaps.map((w) => w.reference));
  const from = utcTime(o.period.from);
  const to = utcTime(o.period.to);
  const kindOf = (tx: ReconTx): Kind => {
    if (owners.of(tx)) return tx.amount.isNegative() ? 'payout' : 'refund';
    return tx.reference && swapRefs.has(tx.reference) ? 'swap' : 'other';
  };
  const wallets = new Map<string, { tx: ReconTx; kind: Kind; at: number }[]>();
  o.transactions.forEach((tx, index) => {
    const t = utcTime(tx.createdAt);
    if (t !== undefined && ((from !== undefined && t < from) || (to !== undefined && t > to))) return;
    const key = tx.walletId ?? tx.currency ?? '';
    if (!wallets.has(key)) wallets.set(key, []);
    wallets.get(key)!.push({ tx, kind: kindOf(tx), at: -index }); // (a copy per transaction was quadratic: 22 s for 50,000)
  });
  const moved = [...wallets].filter(([, txs]) => txs.some((m) => m.kind !== 'other'));
  const cut = (what: string) => new ResultsError('WRITE_FAILED', path, `${path}: no statement written: ${what}.`);
  if (!moved.length) throw cut('no wallet transaction of the period is one of this batch');
  const reference = batchColumns(o.table).reference ?? 'reference';
  const msgId = isoMessageId();
  const now = new Date().toISOString();
  let entries = 0;

  await writeIsoXml(path, 'camt.053.001.02', 'BkToCstmrStmt', function* (xml) {
    xml.ele({ GrpHdr: { MsgId: msgId, CreDtTm: now } });
    for (const [n, [walletId, txs]] of moved.entries()) {
      txs.sort((a, b) => (utcTime(a.tx.createdAt) ?? 0) - (utcTime(b.tx.createdAt) ?? 0) || a.at - b.at);
      const currency = txs.find((m) => m.tx.currency)?.tx.currency;
      const amount = (d: Dec | string) => {
        const a = isoAmount(d, currency);
        if (!a) throw cut(`${String(d)} ${currency ?? '(no currency)'} in wallet ${walletId} is not an ISO amount`);
        return a;
      };
      const [first, last] = [txs[0]!.tx, txs.at(-1)!.tx];
      const sum = txs.reduce((a, m) => a.plus(m.tx.amount), new Dec(0));
      const closing = last.balanceAfter ?? first.balanceAfter?.minus(first.amount).plus(sum);
      if (closing === undefined) throw cut(`the transactions of wallet ${walletId} carry no balance (balanceAfter, spec §2)`);
      const opening = first.balanceAfter?.minus(first.amount) ?? closing.minus(sum);
      const balance = (code: string, d: Dec, at: string) => ({
        Tp: { CdOrPrtry: { Cd: code } },
        Amt: amount(d),
        CdtDbtInd: d.isNegative() ? 'DBIT' : 'CRDT',
        Dt: { DtTm: at },
      });
      const start = dateTime(o.period.from) ?? dateTime(first.createdAt) ?? now;
      const end = dateTime(o.period.to) ?? now;
      xml.ele('Stmt').ele({
        Id: isoText(`${msgId}-${n + 1}`),
        CreDtTm: now,
        FrToDt: { FrDtTm: start, ToDtTm: end },
        Acct: { Id: { Othr: { Id: isoText(walletId.replace(/-/g, ''), 34) } }, Ccy: currency, Nm: isoText(`wallet ${walletId}`, 70) },
        Bal: [balance('OPBD', opening, start), balance('CLBD', closing, end)],
      });
      for (const { tx, kind } of txs) {
        const owner = owners.of(tx);
        const cell = (name: string | undefined) => (owner && name ? owner.row.cells[name]?.trim() || undefined : undefined);
        const endToEndId = kind === 'swap' ? tx.reference : (cell('EndToEndId') ?? cell(reference));
        const domain = DOMAIN[kind];
        const at = dateTime(tx.createdAt);
        xml.ele({
          Ntry: {
            Amt: amount(tx.amount),
            CdtDbtInd: tx.amount.isNegative() ? 'DBIT' : 'CRDT',
            Sts: 'BOOK',
            BookgDt: at && { DtTm: at },
            ValDt: at && { DtTm: at },
            AcctSvcrRef: isoId(tx.reference),
            BkTxCd: {
              Domn: domain && { Cd: domain[0], Fmly: { Cd: domain[1], SubFmlyCd: domain[2] } },
              Prtry: { Cd: kind.toUpperCase(), Issr: 'payout-batch' },
            },
            Chrgs: kind === 'payout' && owner?.fee ? { Amt: amount(owner.fee), CdtDbtInd: 'DBIT' } : undefined,
            NtryDtls:
              kind === 'other'
                ? undefined
                : {
                    TxDtls: {
                      Refs: {
                        MsgId: isoId(cell('MsgId')),
                        AcctSvcrRef: isoId(tx.reference),
                        PmtInfId: isoId(cell('PmtInfId')),
                        InstrId: isoId(cell('InstrId')),
                        EndToEndId: isoId(endToEndId),
                      },
                      RmtInf: longIdRmtInf(endToEndId),
                    },
                  },
            AddtlNtryInf: isoText(`${kind} ${tx.id ? `(wallet transaction ${tx.id})` : ''}`.trim(), 500),
          },
        });
        entries++;
        yield;
      }
      xml.up();
    }
  });
  return { statements: moved.length, entries };
}
