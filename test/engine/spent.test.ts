// The rule that lets a refused row's retry take a new key (src/engine/spent.ts, issue 39), branch by
// branch, with the service's answers scripted: only the service's replay of the refusal, once its
// cause is gone or beside a 409 to the edited body, lets attempt n + 1 go.
import { describe, expect, it } from 'vitest';
import type { PayoutClient } from '../../src/client/client.ts';
import type { RowAttempt } from '../../src/engine/send.ts';
import type { BatchSession } from '../../src/engine/session.ts';
import { proveSpent } from '../../src/engine/spent.ts';
import { applyEvent, emptyFold, rowState, type JournalLine, type RowEvent } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import { payoutRow } from './helpers.ts';

/** 'payout', 'conflict', or the code of a refusal. */
type Answer = string;
const REFUSED = '{"sourceAmount":10}';
const EDITED = '{"sourceAmount":10,"edited":true}';

/** A row refused INSUFFICIENT_FUNDS under key 1, then proveSpent with these answers to key 1 and this wallet balance. */
async function prove(
  bodyNow: string,
  answers: Answer[],
  o: { balance?: string; fee?: string; toppedUpAtSend?: boolean; sentBy?: string } = {},
) {
  const lines: JournalLine[] = [];
  const folded = emptyFold();
  const session = {
    folded,
    writer: { append: (e: JournalLine) => void lines.push(e) },
  } as unknown as BatchSession;
  const add = (e: RowEvent) => {
    lines.push(e);
    applyEvent(folded, e);
  };
  const at = '2026-01-01T00:00:00.000Z';
  add({ t: 'initiating', ref: 'R-1', row: 1, attempt: 1, key: 'k1', body: REFUSED, apiKeyFingerprint: o.sentBy, at });
  add({ t: 'rejected', ref: 'R-1', attempt: 1, key: 'k1', error: { status: 400, code: 'INSUFFICIENT_FUNDS', message: 'x' }, at });
  const sent: string[] = [];
  const initiate = async (a: RowAttempt) => {
    sent.push(a.body);
    add({ t: 'initiating', ref: a.ref, row: a.row, attempt: a.attempt, key: a.key, body: a.body, at });
    const answer = answers.shift()!;
    if (answer === 'payout')
      add({
        t: 'created',
        ref: a.ref,
        attempt: a.attempt,
        key: a.key,
        requestId: 'r',
        at,
        payout: { id: 'p', status: 'PENDING', sourceAmount: 10, sourceCurrency: 'GBP', destinationCurrency: 'GBP', documents: 0 },
      });
    else {
      const [status, code] = answer === 'conflict' ? [409, 'IDEMPOTENCY_KEY_CONFLICT'] : [400, answer];
      add({
        t: answer === 'conflict' ? 'conflict' : 'rejected',
        ref: a.ref,
        attempt: a.attempt,
        key: a.key,
        error: { status, code, message: 'x' },
        at,
      });
    }
  };
  const client = {
    apiKey: { fingerprint: 'this-api-key' },
    listWallets: async () => ({
      data: [{ walletId: 'w', currency: 'GBP', balance: o.toppedUpAtSend && !sent.length ? '12.00' : (o.balance ?? '1000') }],
    }),
  } as unknown as PayoutClient;
  const fees = o.fee === undefined ? new Map([[1, new Dec('2')]]) : new Map<number, Dec>();
  const r = await proveSpent(
    { send: { client, session, at: () => at }, state: (ref) => rowState(folded, ref), fees, initiate },
    { rowNumber: 1, payout: payoutRow(1), body: bodyNow },
    rowState(folded, 'R-1'),
  );
  return { ...r, sent, spentLines: lines.filter((l) => l.t === 'key-spent'), phase: rowState(folded, 'R-1').phase };
}

describe('a new key only when the old one is proven spent', () => {
  it('the same refusal to the same body once the wallet covers the row: a stored refusal, key-spent, n + 1 may go', async () => {
    const r = await prove(REFUSED, ['INSUFFICIENT_FUNDS'], { balance: '1000' });
    expect([r.go, r.proof.verdict, r.spentLines.length]).toEqual([true, 'spent', 1]);
    expect(r.proof.steps).toEqual([
      { read: 'wallets', causeGone: true },
      { send: 'now', answer: 'refused', code: 'INSUFFICIENT_FUNDS' },
      { read: 'wallets', causeGone: true },
    ]);
  });

  it('the same refusal, the wallet short before the resend and covered after (a top-up landing just after it): no new key', async () => {
    // (the refusal may be the service's own, fresh: where refusals store nothing, key 1 can still pay the row later)
    const r = await prove(REFUSED, ['INSUFFICIENT_FUNDS'], { toppedUpAtSend: true });
    expect([r.go, r.proof.verdict, r.spentLines.length]).toEqual([false, 'refused', 0]);
  });

  it('the same refusal while the wallet is still short, or its fee unknown: refused as before, no new key', async () => {
    for (const o of [{ balance: '12.00' }, { fee: 'unknown' }]) {
      const r = await prove(REFUSED, ['INSUFFICIENT_FUNDS'], o);
      expect([r.go, r.proof.verdict, r.spentLines.length]).toEqual([false, 'refused', 0]);
    }
  });

  it("another refusal, or a refusal of an edited body: processed afresh, key 1 holds nothing and stays the row's", async () => {
    for (const [body, code] of [
      [REFUSED, 'CORRIDOR_NOT_ENABLED'],
      [EDITED, 'INSUFFICIENT_FUNDS'],
    ] as const) {
      const r = await prove(body, [code]);
      expect([r.go, r.spentLines.length, r.proof.steps.filter((x) => 'send' in x).length]).toEqual([false, 0, 1]);
    }
  });

  it('key 1 refused under another API key: nothing sent, no new key (a key kept per API key proves nothing here)', async () => {
    const r = await prove(REFUSED, ['INSUFFICIENT_FUNDS'], { sentBy: 'other-api-key' });
    expect([r.go, r.proof.verdict, r.proof.steps, r.sent, r.spentLines.length]).toEqual([
      false,
      'refused',
      [{ sentBy: 'other-api-key' }],
      [],
      0,
    ]);
    // under the API key that sent it, the proof goes on as ever
    const same = await prove(REFUSED, ['INSUFFICIENT_FUNDS'], { sentBy: 'this-api-key' });
    expect([same.go, same.proof.verdict]).toEqual([true, 'spent']);
  });

  it('a payout under key 1: paid, nothing more sent', async () => {
    const r = await prove(EDITED, ['payout']);
    expect([r.go, r.proof.verdict, r.phase, r.sent]).toEqual([false, 'paid', 'created', [EDITED]]);
  });

  it('409 to the edited body, then the refused body: its refusal spends key 1; a payout is paid elsewhere; 409 is a conflict', async () => {
    const spent = await prove(EDITED, ['conflict', 'INSUFFICIENT_FUNDS']);
    expect([spent.go, spent.proof.verdict, spent.sent, spent.spentLines.length]).toEqual([true, 'spent', [EDITED, REFUSED], 1]);
    const paid = await prove(EDITED, ['conflict', 'payout']);
    expect([paid.go, paid.proof.verdict, paid.phase, paid.spentLines.length]).toEqual([false, 'paid', 'created', 0]);
    const conflict = await prove(EDITED, ['conflict', 'conflict']);
    expect([conflict.go, conflict.proof.verdict, conflict.phase]).toEqual([false, 'conflict', 'conflict']);
    const other = await prove(EDITED, ['conflict', 'VALIDATION_ERROR']);
    expect([other.go, other.spentLines.length]).toEqual([false, 0]);
  });

  it('409 to the unchanged body: another body holds key 1, CONFLICT, never sent again', async () => {
    const r = await prove(REFUSED, ['conflict']);
    expect([r.go, r.proof.verdict, r.phase, r.sent]).toEqual([false, 'conflict', 'conflict', [REFUSED]]);
  });
});
