// Every command of the CLI: its usage line and description here, its module loaded only when
// that command runs, so `--help`, `--version` and a cron job's `watch --once` start without the
// modules of the other commands (the engine, the sandbox, SheetJS...).
import type { CliCommand } from '../command.ts';

export interface CommandEntry {
  command: string;
  describe: string;
  load: () => Promise<{ default: CliCommand<unknown> }>;
}

export const commands: CommandEntry[] = [
  {
    command: 'demo',
    describe: 'Rehearse on the embedded sandbox: the sample payroll through plan, run, results and a replay that pays nothing twice',
    load: () => import('./demo.ts'),
  },
  {
    command: 'sandbox',
    describe: 'Run a local simulator of the payout service (127.0.0.1 only) until Ctrl+C',
    load: () => import('./sandbox.ts'),
  },
  {
    command: 'validate <file>',
    describe: 'Check every row of a batch file (CSV or Excel) offline: no API key, no network',
    load: () => import('./validate.ts'),
  },
  {
    command: 'template',
    describe: 'Write a batch template (header row and one valid example row) as CSV or XLSX',
    load: () => import('./template.ts'),
  },
  {
    command: 'account',
    describe: "Show the business's wallets, enabled currency pairs and this key's monthly quota as counted here",
    load: () => import('./account.ts'),
  },
  {
    command: 'run [file]',
    describe: 'Send a batch: preflight, approval, then each valid row once (resumable, idempotent)',
    load: () => import('./run.ts'),
  },
  {
    command: 'retry <results>',
    describe: 'Send again the rows of a results file that have no payout yet (after fixing them); created rows stay as they are',
    load: () => import('./retry.ts'),
  },
  {
    command: 'plan <file>',
    describe: 'Preflight a batch and show (or write, --out) its plan and quotes; nothing is sent',
    load: () => import('./plan.ts'),
  },
  {
    command: 'approve <plan>',
    describe: 'Sign a plan file as an approver (Ed25519): PLAN.approvals.json beside it, for `run --plan PLAN --require-approvals N`',
    load: () => import('./approve.ts'),
  },
  {
    command: 'approver-key <action>',
    describe: "`approver-key new --as NAME`: make an approver's key pair (private key mode 0600, public key for the approvers list)",
    load: () => import('./approver-key.ts'),
  },
  {
    command: 'status <results>',
    describe: 'Refresh the status of every payout of a results file that is not final (GET payout), forward only',
    load: () => import('./status.ts'),
  },
  {
    command: 'reconcile <results>',
    describe:
      "Tie a results file to the wallet's transactions: each payout's debit, each failed one's refund, no debit unexplained; writes <results>.reconciliation.csv/.xlsx",
    load: () => import('./reconcile.ts'),
  },
  {
    command: 'report <input>',
    describe:
      'Write the HTML report of a plan file, a results file or a batch file (offline): one page to look at, print or attach; nothing is sent',
    load: () => import('./report.ts'),
  },
  {
    command: 'attach <payoutId> <files..>',
    describe: 'Upload documents and attach them to a payout (e.g. one in ADDITIONAL_INFO_REQUIRED)',
    load: () => import('./attach.ts'),
  },
  {
    command: 'listen',
    describe: "Receive the service's webhooks: verify, drop replays, apply status changes to results files and journals",
    load: () => import('./listen.ts'),
  },
  {
    command: 'watch <dir>',
    describe: 'Process the batch files dropped into DIR/inbox, unattended, within the guards of DIR/payout-batch.json',
    load: () => import('./watch.ts'),
  },
];
