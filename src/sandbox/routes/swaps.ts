// Spec §4.7 and §4.8: swaps between two wallets of the business.
import { INVALID_PAYOUT_AMOUNT_MESSAGE } from '../../spec/codes.ts';
import { SwapRequest } from '../../spec/schemas.ts';
import { Dec } from '../../money.ts';
import { amountProblem, convert, corridorOf, reportedRate, usableCorridor } from '../corridors.ts';
import { PAYOUTS_PREFIX as P } from '../../spec/endpoints.ts';
import { creating, route, type Sandbox } from '../context.ts';
import { apiError, ApiError, checkFields, found, ok, type Reply, type Request } from '../http.ts';
import { newId, newRef } from '../ids.ts';
import type { SwapRec } from '../store.ts';
import { pageOf, swapCreatedView, swapListItem, swapView } from '../views.ts';

/**
 * Spec §4.7. Checks in order (the spec lists the errors, not their order): key, replay or conflict, body,
 * wallets differ, exist, hold the currencies, the pair (UNSUPPORTED_CURRENCY_PAIR when none either way,
 * CORRIDOR_NOT_ENABLED when disabled), the amount, funds. Reading: amountToBeSent is swapAmount at the
 * live rate, half-up to the cent; a mismatch is {400, 'Invalid payout amount', 'Bad Request'}, no code.
 */
function swap(sb: Sandbox, req: Request, body: SwapRequest): Reply {
  const business = req.business;
  if (body.sourceWalletId === body.destinationWalletId) {
    return apiError(400, 'SWAP_WALLETS_MUST_DIFFER', 'sourceWalletId and destinationWalletId must be different wallets');
  }
  const source = found(sb.store.wallets, body.sourceWalletId, 'SOURCE_WALLET_NOT_FOUND', 'Source wallet', business.id);
  const destination = found(sb.store.wallets, body.destinationWalletId, 'DESTINATION_WALLET_NOT_FOUND', 'Destination wallet', business.id);
  if (source.currency !== body.swapCurrency) {
    return apiError(400, 'INVALID_SOURCE_CURRENCY', `The source wallet holds ${source.currency}, not swapCurrency ${body.swapCurrency}`);
  }
  if (destination.currency !== body.currencyToBeSent) {
    return apiError(
      400,
      'INVALID_DESTINATION_CURRENCY',
      `The destination wallet holds ${destination.currency}, not currencyToBeSent ${body.currencyToBeSent}`,
    );
  }
  const known = corridorOf(sb.store, business.id, body.swapCurrency, body.currencyToBeSent);
  if (known.kind === 'none' || known.kind === 'same') {
    return apiError(400, 'UNSUPPORTED_CURRENCY_PAIR', `${body.swapCurrency}/${body.currencyToBeSent} is not an active currency pair`);
  }
  const corridor = usableCorridor(sb.store, business.id, body.swapCurrency, body.currencyToBeSent);

  const swapAmount = new Dec(String(body.swapAmount));
  const amountToBeSent = new Dec(String(body.amountToBeSent));
  checkFields({
    swapAmount: amountProblem(swapAmount, body.swapCurrency),
    amountToBeSent: amountProblem(amountToBeSent, body.currencyToBeSent),
  });
  const move = sb.faults.takeRateMove();
  if (move !== undefined && corridor.kind !== 'same')
    corridor.pair.rate = corridor.pair.rate.times(new Dec(100).plus(move)).div(100).toSignificantDigits(12);
  if (!convert(corridor, swapAmount, body.currencyToBeSent).equals(amountToBeSent)) {
    return new ApiError(400, { statusCode: 400, message: INVALID_PAYOUT_AMOUNT_MESSAGE, error: 'Bad Request' });
  }
  if (source.balance.lessThan(swapAmount)) {
    return apiError(
      400,
      'INSUFFICIENT_FUNDS',
      `The ${source.currency} wallet holds ${source.balance.toFixed()}; the swap needs ${swapAmount.toFixed()}`,
    );
  }
  checkFields({ amountToBeSent: sb.store.creditProblem(destination, amountToBeSent) });

  const now = sb.clock.iso();
  const s: SwapRec = {
    id: newId(),
    payoutRef: body.reference ?? newRef('SW', now),
    businessId: business.id,
    sourceWalletId: source.walletId,
    destinationWalletId: destination.walletId,
    sourceAmount: swapAmount,
    sourceCurrency: source.currency,
    destinationAmount: amountToBeSent,
    destinationCurrency: destination.currency,
    exchangeRate: reportedRate(corridor),
    status: 'PROCESSING',
    createdAt: now,
    updatedAt: now,
  };
  sb.store.swaps.set(s.id, s);
  sb.lifecycle.publishSwap(s, 'PENDING');
  const narration = `Swap ${s.payoutRef}: ${source.currency} to ${destination.currency}`;
  sb.store.move(source, swapAmount.negated(), s.payoutRef, narration, { kind: 'swap', swapId: s.id });
  sb.store.move(destination, amountToBeSent, s.payoutRef, narration, { kind: 'swap', swapId: s.id });
  const answer = swapCreatedView(s);
  // fault rejectNextSwaps: reversed at once (spec §3); the answer still says PROCESSING (§4.7)
  if (sb.faults.takeSwapRejection()) sb.lifecycle.changeSwap(s, 'REJECTED', { changedBy: 'sandbox-fault', reason: 'Swap reversed' });
  return { status: 201, body: answer, created: s.id };
}

export const SWAP_ROUTES = [
  creating('swap', `${P}/swap`, SwapRequest, (sb, id) => swapCreatedView(sb.store.swaps.get(id)!), swap),
  route('listSwaps', 'GET', `${P}/swaps`, null, (sb, req) => ok(pageOf(sb.store.swaps.values(), req, swapListItem))),
  route('getSwap', 'GET', `${P}/swaps/:id`, null, (sb, req) =>
    ok(swapView(found(sb.store.swaps, req.params.id, 'SWAP_NOT_FOUND', 'Swap', req.business.id))),
  ),
];
