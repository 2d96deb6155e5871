// The demo tour of `npm run demo`: the embedded sandbox and one payout, end to end, through the
// same client the batch pipeline uses. It returns what happened as lines and facts; it prints
// nothing itself (the CLI does). Until the batch engine exists this is the product's first run.
import { createHash } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { connect } from '../client/connect.ts';
import { Dec, formatAmount, fromApi, toApi } from '../money.ts';
import type { Payout } from '../spec/schemas.ts';

export interface TourOutcome {
  payout: Payout;
  /** The same initiate resent with the same Idempotency-Key answered the same payout. */
  replayedSameId: boolean;
  walletBefore: string;
  walletAfter: string;
  /** walletBefore - walletAfter equals the quote's totalDeductible, to the cent. */
  balanceMatches: boolean;
}

/** The corridor the tour shows: US dollars to a Nigerian bank account over NIP. */
const CORRIDOR = { sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA' } as const;

/** A one-page invoice made on the spot, so the tour needs no file on disk. */
async function invoicePdf(reference: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([420, 200]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText(`Invoice ${reference}`, { x: 30, y: 150, size: 18, font });
  page.drawText('Consulting services, November 2026: USD 1,250.00', { x: 30, y: 110, size: 11, font });
  doc.setCreationDate(new Date('2026-11-01T00:00:00Z'));
  doc.setModificationDate(new Date('2026-11-01T00:00:00Z'));
  return doc.save();
}

export async function runTour(say: (line: string) => void): Promise<TourOutcome> {
  const conn = await connect({ env: 'local', stateDir: false, sandbox: { rateLimitPerSecond: 5 } });
  const { client } = conn;
  try {
    say(`Started the embedded sandbox at ${conn.environment.baseUrl} (nothing leaves this machine).`);

    const wallets = (await client.listWallets()).data;
    say('\nWallets of the business:');
    for (const w of wallets) say(`  ${w.currency}  ${formatAmount(fromApi(w.balance), w.currency).padStart(18)}  (${w.walletId})`);

    const pairs = (await client.listPairs()).data;
    say('\nEnabled currency pairs:');
    say(`  ${pairs.map((p) => `${p.baseCurrency}/${p.quoteCurrency} ${p.rate}`).join(', ')}`);

    const methods = await client.listMethods(CORRIDOR);
    say(`\nMethods from ${CORRIDOR.sourceCurrency} to ${CORRIDOR.destinationCurrency} in ${CORRIDOR.destinationCountryCode} (rate ${methods.rate.rate}):`);
    for (const m of methods.methods) {
      const fields = m.requiredFields.map((f) => ('oneOf' in f ? `one of (${f.oneOf.map((g) => g.map((d) => d.name).join('+')).join(' | ')})` : f.name));
      say(`  ${m.code.padEnd(10)} fee ${m.fee.amount} ${m.fee.currency}, ${m.settlement}; needs ${fields.join(', ')}`);
    }

    const amount = new Dec('1250.00');
    const quote = await client.quote({ ...CORRIDOR, sourceAmount: toApi(amount), method: 'NIP' });
    say(`\nQuote for ${formatAmount(amount, 'USD')} USD by NIP: rate ${quote.exchangeRate}, fee ${quote.fee.amount} ${quote.fee.currency}, ` +
      `total debited ${formatAmount(fromApi(quote.totalDeductible), 'USD')} USD, beneficiary receives ${formatAmount(fromApi(quote.destinationAmount), 'NGN')} NGN.`);

    const reference = 'DEMO-INV-2026-11-001';
    const bytes = await invoicePdf(reference);
    const doc = await client.uploadDocument({ bytes, filename: `${reference}.pdf`, contentType: 'application/pdf' });
    say(`\nUploaded the supporting invoice (${bytes.byteLength} bytes): ${doc.documentUrl}`);

    const usd = wallets.find((w) => w.currency === 'USD')!;
    const body = {
      ...CORRIDOR,
      sourceAmount: toApi(amount),
      method: 'NIP',
      narration: `Invoice ${reference}`,
      supportingDocument: doc.documentUrl,
      beneficiary: { accountName: 'Adaeze Okafor', accountCurrency: 'NGN', accountNumber: '0123456789', bankCode: '058' },
    };
    // Deterministic, as the batch engine's keys are: the same payout always gets the same key.
    const idempotencyKey = createHash('sha256').update(`payout-batch/demo/${reference}`).digest('hex').slice(0, 32);
    const created = await client.initiate(body, { idempotencyKey });
    const payout = created.payout;
    say(`\nInitiated payout ${payout.id} (${payout.payoutRef}): ${payout.status}, applied rate ${payout.exchangeRate}, ` +
      `fees ${payout.transactionFees} USD, ${payout.supportingDocuments.length} document attached. Idempotency-Key ${idempotencyKey}.`);

    const replay = await client.initiate(created.body, { idempotencyKey });
    say(`Sent the same request again with the same key: ${replay.payout.id === payout.id ? 'the same payout came back, none was added' : 'A SECOND PAYOUT WAS CREATED'}.`);

    const after = (await client.listWallets()).data.find((w) => w.walletId === usd.walletId)!;
    const debited = fromApi(usd.balance).minus(fromApi(after.balance));
    const balanceMatches = debited.equals(fromApi(quote.totalDeductible));
    say(`USD wallet: ${formatAmount(fromApi(usd.balance), 'USD')} -> ${formatAmount(fromApi(after.balance), 'USD')} ` +
      `(debited ${formatAmount(debited, 'USD')}, ${balanceMatches ? 'equal to' : 'DIFFERENT FROM'} the quoted total).`);

    // The service's operations staff approve and complete it; in the sandbox a control route stands in.
    for (const status of ['PROCESSING', 'SUCCESSFUL'] as const) {
      const r = await fetch(`${conn.environment.baseUrl}/_sandbox/payouts/${payout.id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status, reason: status === 'PROCESSING' ? 'approved and processing' : 'funds sent' }),
      });
      if (!r.ok) throw new Error(`the sandbox refused the move to ${status}: HTTP ${r.status}`);
    }
    const final = await client.getPayout(payout.id);
    say(`Operations approved it: ${payout.status} -> PROCESSING -> ${final.status}.`);

    const txs = (await client.listTransactions({ payoutRef: payout.payoutRef })).data;
    for (const t of txs) say(`Wallet transaction ${t.type} ${t.amount} ${t.currency}: balance ${t.balanceBefore} -> ${t.balanceAfter}, reference ${t.reference}.`);

    return {
      payout: final,
      replayedSameId: replay.payout.id === payout.id,
      walletBefore: formatAmount(fromApi(usd.balance), 'USD'),
      walletAfter: formatAmount(fromApi(after.balance), 'USD'),
      balanceMatches,
    };
  } finally {
    await conn.close();
  }
}
