// The control routes under /_sandbox, standing in for the service's operations staff and dashboard
// (status changes, top-ups, rates) and exposing state to tests. No x-api-key, no limits.
import * as z from 'zod';
import { PayoutStatus, SwapStatus } from '../../spec/codes.ts';
import { InformationRequest } from '../../spec/schemas.ts';
import { Dec, toApi } from '../../money.ts';
import { control } from '../context.ts';
import { apiError, fieldError, found, ok } from '../http.ts';
import { amountProblem } from '../corridors.ts';
import { pairView, payoutView, swapView, walletView } from '../views.ts';

const decimalInput = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/)]).transform((v) => new Dec(String(v)));
const SwapStatusBody = z.object({ status: SwapStatus, reason: z.string().optional(), changedBy: z.string().optional() });
const PayoutStatusBody = SwapStatusBody.extend({ status: PayoutStatus, informationRequests: z.array(InformationRequest).optional() });
const CreditBody = z.object({ amount: decimalInput, narration: z.string().optional(), reference: z.string().optional() });
const RateBody = z.object({ rate: decimalInput.refine((d) => d.greaterThan(0), 'a rate above 0') });

export const CONTROL_ROUTES = [
  /** One move of the state table; 409 INVALID_TRANSITION otherwise. */
  control('POST', 'payouts/:id/status', PayoutStatusBody, (sb, req, body) => {
    const p = found(sb.store.payouts, req.params.id, 'PAYOUT_NOT_FOUND', 'Payout');
    sb.lifecycle.changePayout(p, body.status, { changedBy: 'sandbox-control', ...body });
    return ok(payoutView(p));
  }),
  control('POST', 'swaps/:id/status', SwapStatusBody, (sb, req, body) => {
    const s = found(sb.store.swaps, req.params.id, 'SWAP_NOT_FOUND', 'Swap');
    sb.lifecycle.changeSwap(s, body.status, { changedBy: 'sandbox-control', ...body });
    return ok(swapView(s));
  }),
  /** A top-up "outside this API" (spec §1.3), with its CREDIT and wallet.credited. */
  control('POST', 'wallets/:walletId/credit', CreditBody, (sb, req, body) => {
    const w = found(sb.store.wallets, req.params.walletId, 'NOT_FOUND', 'Wallet');
    const problem = body.amount.lessThanOrEqualTo(0)
      ? 'must be above 0'
      : (amountProblem(body.amount, w.currency) ?? sb.store.creditProblem(w, body.amount));
    if (problem) return fieldError('amount', problem);
    const tx = sb.store.move(w, body.amount, body.reference ?? '', body.narration ?? 'Wallet top-up', { kind: 'top_up' });
    return ok({ wallet: walletView(w), transactionId: tx.id, balanceAfter: toApi(tx.balanceAfter) });
  }),
  /** Moves the live rate (spec §1.11: rates are not locked). */
  control('PUT', 'pairs/:currencyPairId/rate', RateBody, (sb, req, body) => {
    const pair = found(sb.store.pairs, req.params.currencyPairId, 'CURRENCY_PAIR_NOT_FOUND', 'Currency pair');
    pair.rate = body.rate.toSignificantDigits(12);
    return ok(pairView(pair));
  }),
  control('GET', 'faults', null, (sb) => ok(sb.faults.get())),
  control('PUT', 'faults', null, (sb, req) => {
    try {
      sb.faults.set(req.body ?? {});
    } catch (err) {
      return apiError(400, 'VALIDATION_ERROR', (err as Error).message);
    }
    return ok(sb.faults.get());
  }),
  control('GET', 'requests', null, (sb) => ok({ data: sb.requestLog() })),
  control('GET', 'deliveries', null, (sb) => ok({ data: sb.webhooks.deliveries() })),
  control('POST', 'clock/advance', z.object({ ms: z.number().int().min(0) }), (sb, req, body) => {
    sb.clock.advance(body.ms);
    return ok({ now: sb.clock.iso() });
  }),
];
