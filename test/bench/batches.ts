// Large batches for the bench scripts: a generated file of N rows, and a journal in which rows of
// it are already created, as `run` would have left it (scale: a resume; throughput: a big batch
// whose last rows are still to send).
import { createWriteStream, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadBatch } from '../../src/engine/prepare.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { FileLedger, ledgerDirFor } from '../../src/ledger/file.ts';
import { accountOf } from '../../src/ledger/account-ledger.ts';
import { openSession, record } from '../../src/engine/session.ts';
import { toApi } from '../../src/money.ts';
import { generateCsv } from '../engine/helpers.ts';

/** The environment name of --base-url alone, as the journal's header records it. */
export const BASE_URL_ENV = 'custom';

/** The sample payroll's same-currency rows, unique references and amounts; written in slices (100,000 rows is ~12 MB). */
export async function writeLargeBatch(path: string, rows: number, prefix = 'S'): Promise<void> {
  const out = createWriteStream(path);
  const step = 10_000;
  for (let from = 0; from < rows; from += step) {
    const n = Math.min(step, rows - from);
    let text = generateCsv({
      rows: n,
      prefix: `${prefix}${from / step}`,
      amount: (i) => `${10 + Math.floor((from + i) / 100)}.${String((from + i) % 100).padStart(2, '0')}`,
    }); // unique per row
    if (from > 0) text = text.slice(text.indexOf('\n') + 1);
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/**
 * Writes the journal of `file`, in the ledger of the account at `baseUrl` under the state folder
 * `stateDir` (where `run FILE --base-url URL` with that state folder finds it), with its valid rows
 * from position `from` on created: the lines a run writes for each (quote, initiating, created)
 * through the engine's own openSession and record, between a `run` and a `run-end`.
 */
export async function writeCreatedJournal(
  file: string,
  o: { from?: number; baseUrl: string; stateDir: string },
): Promise<{ rows: number; batchId: string; journal: string; bytes: number }> {
  const from = o.from ?? 0;
  const batch = await loadBatch(file);
  const account = accountOf(o.baseUrl);
  const ledger = new FileLedger(account, ledgerDirFor(o.stateDir, account));
  mkdirSync(ledger.dir, { recursive: true, mode: 0o700 });
  const session = await openSession({
    identity: batch.identity,
    env: BASE_URL_ENV,
    file: batch.file,
    ledger,
    command: 'run',
    resultsPath: file.replace(/\.csv$/, '.results.csv'),
  });
  const at = new Date().toISOString();
  record(session, { t: 'run', at, command: 'run', pid: process.pid });
  let n = 0;
  for (const r of [...batch.rows].slice(from)) {
    const p = r.payout;
    if (!p) continue;
    const key = idempotencyKey(p.reference, 1);
    const amount = Number(toApi(p.sourceAmount));
    record(session, {
      t: 'quote',
      ref: p.reference,
      attempt: 1,
      rate: 1,
      fee: 1.5,
      totalDeductible: amount + 1.5,
      destinationAmount: amount,
    });
    record(session, {
      t: 'initiating',
      ref: p.reference,
      row: r.rowNumber,
      attempt: 1,
      key,
      body: JSON.stringify(initiateBody(p)),
      at,
    });
    record(session, {
      t: 'created',
      ref: p.reference,
      attempt: 1,
      key,
      requestId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      at,
      payout: {
        id: `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        payoutRef: `PO-${String(n).padStart(10, '0')}`,
        status: 'PENDING',
        sourceAmount: amount,
        sourceCurrency: p.sourceCurrency,
        destinationAmount: amount,
        destinationCurrency: p.destinationCurrency,
        transactionFees: 1.5,
        exchangeRate: 1,
        updatedAt: at,
        documents: 0,
      },
    });
    n++;
  }
  record(session, { t: 'run-end', at, kind: 'ok' }, { sync: true });
  session.writer.close();
  return { rows: n, batchId: batch.identity.batchId, journal: session.journalPath, bytes: statSync(session.journalPath).size };
}
