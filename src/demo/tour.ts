// `npm run demo` (README.md): the sample payroll against the embedded sandbox, run twice, then
// reconciled and reported. It returns facts and emits events; the CLI prints.
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../package-root.ts';
import { plural } from '../text.ts';
import { connect, sandboxSeedKey } from '../client/connect.ts';
import { startSandbox } from '../sandbox/start-sandbox.ts';
import type { ClientEvent } from '../client/http.ts';
import type { PayoutClient } from '../client/client.ts';
import { Dec, formatAmount, fromApi, groupThousands } from '../money.ts';
import type { MoneyTotals } from '../engine/money-totals.ts';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { execute, prepareRun, runBatch, type EngineEvents } from '../engine/pipeline.ts';
import { reconcile } from '../follow-up/reconciliation.ts';
import { ledgerOf } from '../ledger/open.ts';
import { writePlanReport, writeResultsReport } from '../report/write-report.ts';

const SAMPLE = 'payroll-2025-01.csv';
const SAMPLES_DIR = join(packageRoot(), 'samples');

interface DemoOptions {
  say?: (line: string) => void;
  onPlan?: (plan: BatchPlan, environment: string) => void;
  events?: EngineEvents;
  onClientEvent?: (e: ClientEvent) => void;
  /** Requests per second of the sandbox and the client (the spec's limit is 5). */
  rate?: number;
  /** Default: a new temp folder. The folder given is kept. */
  dir?: string;
  /** Keep the temporary folders: `kept` names them. */
  keep?: boolean;
}

/** A --dir that holds what the demo would write over: the user's, never replaced. */
export class DemoRefused extends Error {
  override readonly name = 'DemoRefused';
}

export async function runDemo(options: DemoOptions = {}) {
  const { say = () => {}, rate = 50, onPlan, events, onClientEvent } = options;
  // (a folder given is the user's: an edited copy of the sample, or an earlier demo's, is never written over)
  const taken = options.dir && [SAMPLE, 'documents'].map((n) => join(options.dir!, n)).find((p) => existsSync(p));
  if (taken)
    throw new DemoRefused(`${taken} is there already, and the demo never writes over a file: name a new or empty folder with --dir`);
  const sandbox = await startSandbox({ rateLimitPerSecond: rate });
  // (the throwaway sandbox knows its seed key only: no key, variable or file of the user's is read)
  const conn = await connect({
    env: 'local',
    vars: {},
    stateDir: false,
    sandbox,
    apiKey: sandboxSeedKey(sandbox.keys[0]!.key),
    client: { requestsPerSecond: rate, ...(onClientEvent ? { onEvent: onClientEvent } : {}) },
  });
  const { name: environment, baseUrl } = conn.environment;
  // removed at the end unless kept (not a folder given with --dir: the user's)
  const made: string[] = [];
  try {
    made.push(ledgerOf(conn).where);
    if (!options.dir) made.push(await mkdtemp(join(tmpdir(), 'payout-batch-demo-')));
    const dir = options.dir ?? made[1]!;
    await cp(join(SAMPLES_DIR, SAMPLE), join(dir, SAMPLE));
    await cp(join(SAMPLES_DIR, 'documents'), join(dir, 'documents'), { recursive: true });
    const batchFile = join(dir, SAMPLE);
    say(`Started the embedded sandbox at ${baseUrl} (nothing leaves this machine).`);
    say(`Copied the sample payroll and its documents to ${dir} (the committed samples stay untouched).`);
    if (rate !== 5)
      say(
        `The sandbox and the client run at ${rate} requests per second to keep the demo short; the service allows 5 (run with --rate 5 to see the real pace).`,
      );
    const opening = await balancesOf(conn.client);
    say('Confirmation skipped: the demo runs as with --yes (a person at a terminal is asked once, with the totals).\n');

    const guards = { yes: true, interactive: false, allowPartial: false, enablePairs: false, expectTotals: [], maxTotals: [] };
    const common = { conn, file: batchFile, guards };
    const prepared = await prepareRun({ ...common, settings: { mergeDocuments: false, events } });
    if (prepared.plan) onPlan?.(prepared.plan, environment);
    const first = await execute(prepared);

    const initiates = () => sandbox.requestLog().filter((r) => r.route === 'initiate').length;
    const before = initiates();
    say('\nThe same command again, as after a crash or a second click:');
    const again = await runBatch({ ...common, settings: { mergeDocuments: false, crashWaitMs: 0 } });
    const initiatesSent = initiates() - before;
    say(
      `  found ${again.report.created} payouts already created and sent ${plural(initiatesSent, 'initiate request')}: nothing was paid twice.`,
    );

    const { balances, balancesMatch } = compareBalances(opening, await balancesOf(conn.client), first.summary.money);
    const listed = await conn.client.listPayouts({ limit: 100 });
    say(`  wallets moved by exactly the results file's totalDeductible per currency: ${balancesMatch ? 'yes' : 'NO'}.`);

    return {
      dir,
      batchFile,
      resultsPath: first.resultsPath,
      journalPath: first.journalPath,
      first: { kind: first.kind, summary: first.summary },
      replay: { kind: again.kind, alreadyCreated: again.report.created, initiatesSent },
      payoutsAtSandbox: listed.meta?.total ?? listed.data.length, // after both runs
      balancesMatch,
      balances,
      reconciliation: await reconcileResults(conn.client, first.resultsPath, say),
      reports: {
        plan: prepared.plan && (await writePlanReport(prepared.plan, { environment, baseUrl })),
        results: await writeResultsReport(first.resultsPath, { environment, batchId: first.batchId }),
      },
      kept: options.keep ? made : [],
    };
  } finally {
    await conn.close();
    if (!options.keep) await Promise.all(made.map((d) => rm(d, { recursive: true, force: true })));
  }
}

const balancesOf = async (client: PayoutClient) =>
  new Map((await client.listWallets()).data.flatMap((w) => (w.balance === undefined ? [] : [[w.currency, fromApi(w.balance)]])));

/** Per currency: did the wallet move by what the run's payouts debited (amount plus fee)? */
function compareBalances(opening: Map<string, Dec>, closing: Map<string, Dec>, money: Record<string, MoneyTotals>) {
  let balancesMatch = true;
  const balances: Record<string, { opening: string; closing: string; debited: string }> = {};
  for (const [c, open] of opening) {
    const close = closing.get(c) ?? new Dec(0);
    const debited = new Dec(money[c]?.debited ?? 0);
    if (!open.minus(close).equals(debited)) balancesMatch = false;
    balances[c] = { opening: formatAmount(open, c), closing: formatAmount(close, c), debited: formatAmount(debited, c) };
  }
  return { balances, balancesMatch };
}

async function reconcileResults(client: PayoutClient, resultsFile: string, say: (line: string) => void) {
  const { report, ...rec } = await reconcile({ client, resultsFile });
  const reconciliation = {
    tiesOut: report?.ok ?? false,
    file: rec.reconciliationPath,
    requests: rec.requests.total,
    problems: report?.problems ?? [rec.halted ?? 'not reconciled'],
    totals: (report?.totals ?? []).map((t) => ({ currency: t.currency, net: t.net })),
  };
  say('\nReconcile, as at month-end (payout-batch reconcile RESULTS):');
  say(
    `  ${report?.counts.tiedOut ?? 0} of ${report?.counts.created ?? 0} payouts found with their debit in the wallet transactions; ` +
      `${report?.unexplained.length ?? 0} debits no batch explains; ${rec.requests.total} requests.`,
  );
  say(`  net per currency: ${reconciliation.totals.map((t) => `${t.currency} ${groupThousands(t.net)}`).join(', ')}.`);
  say(reconciliation.tiesOut ? '  Everything ties out.' : `  Does NOT tie out: ${reconciliation.problems.slice(0, 5).join('; ')}`);
  return reconciliation;
}
