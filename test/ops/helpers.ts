// Shared pieces of the ops tests: a sandbox with limits off, an in-process connection, a batch run
// by the engine to get real payouts and a results file, the sandbox's control route, the CLI.
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import type { Connection } from '../../src/client/connect.ts';
import type { GuardOptions } from '../../src/engine/guards.ts';
import type { RunningListener } from '../../src/follow-up/webhook-receiver.ts';
import { statusApplier, type ApplyResult, type StatusUpdate } from '../../src/follow-up/apply-status.ts';
import { batchColumns } from '../../src/results/read.ts';
import { runBatch, type RunSettings } from '../../src/engine/pipeline.ts';
import { readResults, writeResults, type ResultsTable } from '../../src/results/results.ts';
import { startSandbox, type LocalSandbox, type SandboxOptions } from '../../src/sandbox/start-sandbox.ts';
import { KEY, ROOT, tempDirs, workDir, writeBatch, type GenOptions } from '../engine/helpers.ts';
import { TEST_SHAPES } from '../shapes.ts';

/** sha256=<hex HMAC-SHA256 of the raw body>, as the service signs a delivery (spec §6). */
export const signPayload = (rawBody: Uint8Array | string, secret: string): string =>
  `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;

export { KEY, ROOT, workDir, writeBatch, cleanEnv, runCli, runMain, allPayouts, ledgerJournals } from '../engine/helpers.ts';

/** What applyStatus does to a results file, on a table held whole: what its streamed rewrite must equal. */
export function applyToTable(table: ResultsTable, file: string, updates: StatusUpdate[]): ApplyResult {
  const apply = statusApplier(file, updates);
  const column = batchColumns(table).reference;
  table.rows.forEach((r) => apply.row(r, column));
  return apply.done().out;
}

export const startSb = (o: SandboxOptions = {}): Promise<LocalSandbox> =>
  startSandbox({ rateLimitPerSecond: null, shapes: TEST_SHAPES, ...o });

/** A listen test's sandbox and listener (`t.sb`, `t.listener`): closed after each test, the listener first; its folders removed. */
export function listenTeardown(prefix: string) {
  const t = { dirs: tempDirs(prefix), sb: undefined as LocalSandbox | undefined, listener: undefined as RunningListener | undefined };
  afterEach(async () => {
    await t.listener?.close();
    t.listener = undefined;
    await t.sb?.close();
    t.sb = undefined;
    await t.dirs.remove();
  });
  return t;
}

export function connectionTo(sb: { url: string }, fetchImpl?: typeof fetch): Connection {
  const client = new PayoutClient({
    baseUrl: sb.url,
    apiKey: KEY,
    requestsPerSecond: 500,
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  return {
    client,
    environment: { name: 'custom', keyClass: 'sandbox', baseUrl: sb.url },
    usage: undefined,
    sandbox: undefined,
    close: async () => {},
  };
}

/** runBatch's options for a run nobody watches (no prompt, no quotes, no crash wait), with these settings and guards. */
export const unattended = (settings: Partial<RunSettings> = {}, guards: Partial<GuardOptions> = {}) => ({
  guards: { yes: true, interactive: false, allowPartial: false, enablePairs: false, expectTotals: [], maxTotals: [], ...guards },
  settings: { mergeDocuments: false, crashWaitMs: 0, ...settings },
});
export const UNATTENDED = unattended();

/** Runs a generated batch through the engine: its results file and payout ids in row order. */
export async function paidBatch(
  sb: LocalSandbox,
  o: Partial<GenOptions> & { dir?: string; name?: string } = {},
): Promise<{ dir: string; file: string; results: string; ids: string[] }> {
  const dir = o.dir ?? (await workDir('pb-ops-'));
  const file = await writeBatch(dir, o.name ?? 'batch.csv', { rows: 3, currencies: ['GBP'], ...o });
  const r = await runBatch({
    file,
    conn: connectionTo(sb),
    ...unattended({ settleDelayMs: 10 }),
  });
  if (r.kind !== 'ok') throw new Error(`batch not paid: ${r.kind} ${JSON.stringify(r.summary)}`);
  const table = await readResults(r.resultsPath);
  return { dir, file, results: r.resultsPath, ids: table.rows.map((x) => x.result.payoutId!) };
}

/** A two-row results file whose batch columns were sorted apart from its result columns (each row's cells now the other's). */
export async function sortApart(results: string): Promise<void> {
  const table = await readResults(results);
  const cells = table.rows.map((r) => r.cells);
  await writeResults(results, { ...table, rows: table.rows.map((r, i) => ({ ...r, cells: cells[1 - i]! })) });
}

/** A results file's first row copied in a spreadsheet, its result cells with it, `cells` edited, put below the last row or above the first. */
export async function copyFirstRow(results: string, where: 'below' | 'above', cells: Record<string, string>): Promise<void> {
  const table = await readResults(results);
  const copy = structuredClone(table.rows[0]!);
  Object.assign(copy.cells, cells);
  if (where === 'below') table.rows.push(copy);
  else table.rows.unshift(copy);
  table.rows.forEach((r, i) => (r.rowNumber = i + 2));
  await writeResults(results, table);
}

/** The sandbox's operations staff: one move of the state table. */

export async function setStatus(sb: { url: string }, payoutId: string, status: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await fetch(`${sb.url}/_sandbox/payouts/${payoutId}/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status, ...extra }),
  });
  if (r.status !== 200) throw new Error(`control ${status}: ${r.status} ${await r.text()}`);
}

export const sampleDoc = (name = 'invoice-de-c1.pdf') => join(ROOT, 'samples/documents', name);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` is true (or throws after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Posts one signed payout.status.changed delivery (spec §6) to a listener, changed a second from now. */
export function postStatusChange(url: string, secret: string, payoutId: string, [oldStatus, newStatus]: [string, string]) {
  const changedAt = new Date(Date.now() + 1000).toISOString();
  const body = JSON.stringify({
    eventType: 'payout.status.changed',
    deliveryId: randomUUID(),
    occurredAt: changedAt,
    data: { payoutId, businessId: 'biz_acme', oldStatus, newStatus, changedAt },
  });
  const signature = signPayload(body, secret);
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-delivery-id': randomUUID(), 'x-service-signature': signature },
    body,
  });
}

/** A swap of 1,000 EUR into GBP between the business's wallets (spec §4.12's body), under `reference`. */
export async function eurToGbpSwap(client: PayoutClient, reference: string) {
  const wallets = Object.fromEntries((await client.listWallets()).data.map((w) => [w.currency, w.walletId]));
  return {
    sourceWalletId: wallets.EUR!,
    destinationWalletId: wallets.GBP!,
    swapAmount: 1000,
    swapCurrency: 'EUR',
    amountToBeSent: 851.8,
    currencyToBeSent: 'GBP',
    reference,
  };
}
