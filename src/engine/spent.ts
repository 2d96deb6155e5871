// A new key only when the old one is proven spent (issue 39; the table of README.md, "A new key
// only when the old one is proven spent"). Another ledger running an older copy of the file sends
// a reference's key 1 with the original body, so a refused row's attempt n + 1 may go only when no
// payout can ever exist under key n, in either reading of a refused key (the spec does not say
// whether a refusal binds its key). So key n goes again first, with the row as it is now: where
// refusals store nothing that pays the row under key n, which every older copy then finds; where
// they are stored, only the service's replay of the refusal (once its cause is gone, or beside a
// 409 to the edited body) spends key n, journalled as a `key-spent` line.
import type { PayoutClient } from '../client/client.ts';
import type { RowState } from '../journal/lines.ts';
import { Dec, fromApi, minorUnits, type Dec as DecT } from '../money.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import type { Attempt, SendContext } from './send.ts';
import { record } from './session.ts';

/** One step of a proof: a send of key n (with the row's body now, or the journalled one), or the cheap read. */
export type ProofStep =
  | { send: 'now' | 'journalled'; answer: 'payout' | 'refused' | 'conflict' | 'unknown'; code?: string }
  | { read: 'wallets' | 'pairs'; causeGone: boolean };

/** What the retry of a refused row showed of its key n: the steps and the verdict (in `--json`). */
export interface KeyProof {
  rowNumber: number;
  reference: string;
  attempt: number;
  key: string;
  steps: ProofStep[];
  /** spent: n + 1 may go; paid, refused, conflict, unknown: the row's state under key n. */
  verdict: 'spent' | 'paid' | 'refused' | 'conflict' | 'unknown';
}

export interface ProofContext {
  send: SendContext;
  /**
   * The send step (execute.ts sendInitiate, through the row loop: it throws when the run halts or
   * stops), given so that this file does not import it back.
   */
  initiate: (a: Attempt & { ref: string; row: number }) => Promise<unknown>;
  state: (ref: string) => RowState;
  /** The plan's fee of each row (estimated or quoted), for the wallet read. */
  fees?: ReadonlyMap<number, DecT>;
}

/**
 * Key n of a refused row (`s`), sent again as the rule above says. `go`: key n is proven spent and
 * journalled so (`key-spent`): attempt n + 1 may go.
 */
export async function proveSpent(
  ctx: ProofContext,
  row: { rowNumber: number; payout: PayoutRow; body: string },
  s: RowState,
): Promise<{ go: boolean; proof: KeyProof }> {
  const { ref, attempt } = s;
  const key = s.key!;
  const refusedBody = s.body!;
  const refusal = s.error?.code;
  const proof: KeyProof = { rowNumber: row.rowNumber, reference: ref, attempt, key, steps: [], verdict: 'unknown' };
  const send = async (body: string, which: 'now' | 'journalled') => {
    await ctx.initiate({ ref, row: row.rowNumber, attempt, key, body, resend: false });
    const t = ctx.state(ref);
    const answer = t.phase === 'created' ? 'payout' : t.phase === 'rejected' ? 'refused' : t.phase === 'conflict' ? 'conflict' : 'unknown';
    proof.steps.push({ send: which, answer, ...(t.error?.code && answer !== 'payout' ? { code: t.error.code } : {}) });
    proof.verdict = answer === 'payout' ? 'paid' : answer;
    return { answer, code: t.error?.code };
  };
  const spent = (why: string) => {
    record(ctx.send.session, { t: 'key-spent', ref, attempt, key, proof: why, at: ctx.send.at() }, { sync: true });
    proof.verdict = 'spent';
    return { go: true, proof };
  };

  const first = await send(row.body, 'now');
  const same = row.body === refusedBody;
  if (first.answer === 'refused') {
    // (a refusal of an edited body, or another refusal: processed afresh, so key n holds nothing)
    if (!same || first.code !== refusal) return { go: false, proof };
    const read = await causeGone(ctx.send.client, first.code, row.payout, ctx.fees?.get(row.rowNumber));
    if (read) proof.steps.push(read);
    if (read?.causeGone) return spent(`the same ${refusal} to the same body once its cause was gone: a stored refusal`);
    proof.verdict = 'refused';
    return { go: false, proof };
  }
  if (first.answer !== 'conflict' || same) return { go: false, proof };
  const second = await send(refusedBody, 'journalled');
  if (second.answer === 'refused' && second.code === refusal)
    return spent(`409 to the edited body, then the same ${refusal} to the refused one: a stored refusal`);
  return { go: false, proof };
}

/**
 * Whether the cause of a refusal is gone now, by one read, or undefined when the refusal's cause
 * cannot be read (the answer then proves nothing). Certain or false: a read that fails, a fee not
 * known, a balance short of the amount, the fee and a margin on it, is "not gone".
 */
async function causeGone(
  client: PayoutClient,
  code: string | undefined,
  p: PayoutRow,
  fee: DecT | undefined,
): Promise<Extract<ProofStep, { read: string }> | undefined> {
  try {
    if (code === 'INSUFFICIENT_FUNDS') {
      const w = (await client.listWallets()).data.find((x) => x.currency === p.sourceCurrency);
      const unit = new Dec(10).pow(-(minorUnits(p.sourceCurrency) ?? 2));
      const need = fee && p.sourceAmount.plus(fee.times('1.02')).plus(unit);
      return { read: 'wallets', causeGone: !!need && w?.balance !== undefined && fromApi(w.balance).gte(need) };
    }
    if (code === 'CORRIDOR_NOT_ENABLED') {
      const pairs = (await client.listPairs()).data;
      const cur = [p.sourceCurrency, p.destinationCurrency];
      const on = pairs.some(
        (x) => x.enabled && cur.includes(x.baseCurrency) && cur.includes(x.quoteCurrency) && x.baseCurrency !== x.quoteCurrency,
      );
      return { read: 'pairs', causeGone: on };
    }
  } catch {
    return { read: code === 'INSUFFICIENT_FUNDS' ? 'wallets' : 'pairs', causeGone: false };
  }
  return undefined;
}
