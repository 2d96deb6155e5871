// Every command's usage line and description, in `--help` order; its module is loaded only when
// it runs, so `--help` and `watch --once` start without the others' modules.
import type { CliCommand } from '../command.ts';

const USAGE = {
  demo: 'Rehearse on the embedded sandbox: the sample payroll through plan, run, results and a replay that pays nothing twice',
  sandbox: 'Run a local simulator of the payout service (127.0.0.1 only) until Ctrl+C',
  'validate <file>': 'Check every row of a batch file (CSV or Excel) offline: no API key, no network',
  template: 'Write a batch template (header row and one valid example row) as CSV or XLSX',
  account: "Show the business's wallets, enabled currency pairs and this key's monthly quota as counted here",
  'run [file]': 'Send a batch: preflight, approval, then each valid row once (resumable, idempotent)',
  'retry <results>': 'Send again the rows of a results file that have no payout yet (after fixing them); created rows stay as they are',
  'screen [file]': 'Screen every payee against sanctions lists offline (exit 1: a row held); --clear a false positive',
  'plan <file>': 'Preflight a batch and show (or write, --out) its plan and quotes; nothing is sent',
  'approve <plan>': 'Show a plan file, ask, and sign it as an approver (Ed25519) into PLAN.approvals.json, for `run --require-approvals`',
  'approver-key <action>': "`approver-key new --as NAME`: make an approver's key pair (private key 0600, public key for the list)",
  'approvers <action> <files..>': '`approvers add NAME.approver.pub.json... --out approvers.json`: create or extend the approvers list',
  'policy <action> [proposal]': "`policy set|remove|apply|show`: the account's approval policy, needed by every run, retry and watch",
  'status <results>': 'Refresh the status of every payout of a results file that is not final (GET payout), forward only',
  'reconcile <results>': "Tie a results file to the wallet's transactions, no debit unexplained; writes <results>.reconciliation.csv",
  'report <input>': 'Write the HTML report of a plan file, a results file or a batch file, offline; nothing is sent',
  'attach <payout> <files..>': "Upload documents to a payout named by its id, payoutRef or row's reference",
  listen: "Receive the service's webhooks: verify, drop replays, apply status changes to results files and journals",
  'ledger <action>': 'The team ledger on PostgreSQL (--ledger URL): `ledger init`, `ledger import --from-state-dir DIR`, `ledger status`',
  'watch <dir>': 'Process the batch files dropped into DIR/inbox, unattended, within the guards of DIR/payout-batch.json',
};

// The module is the file named by the command's first word; esbuild makes one chunk per file (vite is told not to analyse it).
export const commands = Object.entries(USAGE).map(([command, describe]) => {
  const word = command.split(' ')[0]!;
  return { command, describe, word, load: () => import(/* @vite-ignore */ `./${word}.ts`) as Promise<{ default: CliCommand<unknown> }> };
});
