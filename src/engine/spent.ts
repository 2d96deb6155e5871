// A new key only when the old one is proven spent: the spec does not say whether a refusal
// binds its key, and an older copy elsewhere sends key 1. So key n goes again first: where refusals
// store nothing it pays the row; where stored, only the replayed refusal (cause gone, or beside a
// 409 to the edited body) spends key n, journalled `key-spent`.
import type { PayoutClient } from '../client/client.ts';
import type { RowState } from '../journal/lines.ts';
import { Dec, fromApi, minorUnits, type Dec as DecT } from '../money.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import type { RowAttempt, SendContext } from './send.ts';
import { record } from './session.ts';

/** A send of key n (with the row's body now, or the journalled one), or the cheap read. */
type ProofStep =
  | { send: 'now' | 'journalled'; answer: 'payout' | 'refused' | 'conflict' | 'unknown'; code?: string }
  | { read: 'wallets' | 'pairs'; causeGone: boolean }
  | { sentBy: string };

/** What the retry of a refused row showed of its key n (in `--json`). */
export interface KeyProof {
  rowNumber: number;
  reference: string;
  attempt: number;
  key: string;
  steps: ProofStep[];
  /** spent: n + 1 may go; paid, refused, conflict, unknown: the row's state under key n. */
  verdict: 'spent' | 'paid' | 'refused' | 'conflict' | 'unknown';
}

interface ProofContext {
  send: SendContext;
  /** execute.ts sendInitiate (throws when the run halts or stops), given so this file does not import it back. */
  initiate: (a: RowAttempt) => Promise<unknown>;
  state: (ref: string) => RowState;
  /** The plan's fee of each row, for the wallet read. */
  fees?: ReadonlyMap<number, DecT>;
}

/** Key n of a refused row sent again; `go`: proven spent and journalled `key-spent`, attempt n + 1 may go. */
export async function proveSpent(
  ctx: ProofContext,
  row: { rowNumber: number; payout: PayoutRow; body: string },
  s: RowState,
): Promise<{ go: boolean; proof: KeyProof }> {
  const { ref, attempt } = s;
  const key = s.key!;
  const refusedBody = s.body!;
  const refusal = s.error?.code;
  const proof: KeyProof = { rowNumber: row.rowNumber, reference: ref, attempt, key, steps: [], verdict: 'refused' };
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

  // (key n refused under another API key: where the service keeps keys per API key, sends here prove nothing: send.ts I2)
  const sentBy = s.apiKeyFingerprint;
  if (sentBy && sentBy !== ctx.send.client.apiKey.fingerprint) return { go: false, proof: { ...proof, steps: [{ sentBy }] } };
  const same = row.body === refusedBody;
  const cause = () => causeGone(ctx.send.client, refusal, row.payout, ctx.fees?.get(row.rowNumber));
  // read before the resend too: a refusal between two reads that find its cause gone is a replay, not a fresh one
  // followed by a top-up (or a pair enabled) before the read, which would leave key n free to pay elsewhere
  const before = same ? await cause() : undefined;
  if (before) proof.steps.push(before);
  const first = await send(row.body, 'now');
  if (first.answer === 'refused') {
    // (a refusal of an edited body, or another refusal: processed afresh, so key n holds nothing)
    const read = same && first.code === refusal && before?.causeGone ? await cause() : undefined;
    if (read) proof.steps.push(read);
    return read?.causeGone ? spent(`the same ${refusal} to the same body once its cause was gone: a stored refusal`) : { go: false, proof };
  }
  if (first.answer !== 'conflict' || same) return { go: false, proof };
  const second = await send(refusedBody, 'journalled');
  if (second.answer === 'refused' && second.code === refusal)
    return spent(`409 to the edited body, then the same ${refusal} to the refused one: a stored refusal`);
  return { go: false, proof };
}

/** Whether a refusal's cause is gone, by one read (undefined: not readable); a failed read or unknown fee is "not gone". */
async function causeGone(
  client: PayoutClient,
  code: string | undefined,
  p: PayoutRow,
  fee: DecT | undefined,
): Promise<Extract<ProofStep, { read: string }> | undefined> {
  if (code === 'INSUFFICIENT_FUNDS') {
    const w = (await client.listWallets().catch(() => undefined))?.data.find((x) => x.currency === p.sourceCurrency);
    const unit = new Dec(10).pow(-(minorUnits(p.sourceCurrency) ?? 2));
    const need = fee && p.sourceAmount.plus(fee.times('1.02')).plus(unit);
    return { read: 'wallets', causeGone: !!need && w?.balance !== undefined && fromApi(w.balance).gte(need) };
  }
  if (code === 'CORRIDOR_NOT_ENABLED') {
    const pairs = (await client.listPairs().catch(() => undefined))?.data ?? [];
    const cur = [p.sourceCurrency, p.destinationCurrency];
    // (the listing holds the enabled pairs, spec §4.9: one that does not say is on)
    const on = pairs.some(
      (x) => x.enabled !== false && cur.includes(x.baseCurrency) && cur.includes(x.quoteCurrency) && x.baseCurrency !== x.quoteCurrency,
    );
    return { read: 'pairs', causeGone: on };
  }
  return undefined;
}
