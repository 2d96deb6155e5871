// `payout-batch ledger init|import|status`: the team ledger on PostgreSQL (src/ledger/README.md).
// The connection string's password is never printed (pg-db.ts redactUrl).
import { attempt } from '../../files/attempt.ts';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, flag, plural, printJson, saying, str, UsageError, type ArgsOf, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { makeLogger, openTeamLedger, serviceOptions } from '../options.ts';
import { resolveEnvironment } from '../../client/environment.ts';
import { importJournals, readFileLedgers, type FileJournal, type ImportPlan } from '../../ledger/import.ts';
import { accountOf, BatchRefused } from '../../ledger/account-ledger.ts';
import { unsafeStateFolder } from '../../ledger/file.ts';
import { TeamLedgerError, type TeamDb } from '../../ledger/pg-db.ts';
import { migrate, schemaVersionOf } from '../../ledger/schema.ts';
import { packageJson } from '../../package-root.ts';

const builder = (y: Argv) =>
  serviceOptions(y)
    .positional('action', {
      type: 'string',
      choices: ['init', 'import', 'status'] as const,
      demandOption: true,
      describe:
        '`init`: create or migrate the schema; `import`: copy a file ledger in (--base-url or --env: its service, when its journals do not name it); `status`: what the ledger holds',
    })
    .option('from-state-dir', str('import: the state folder whose file ledgers to copy (its ledgers/ folder)'))
    .option('json', flag('Print the outcome as JSON'));

type Args = ArgsOf<typeof builder>;

async function init(db: TeamDb, args: Args, io: CliIO): Promise<ExitCode> {
  const { from, to } = await migrate(db, `payout-batch ${packageJson().version}`);
  if (args.json) printJson(io, { ledger: db.where, from, to });
  else io.stdout.write(`${db.where}: schema version ${from} -> ${to}${from === to ? ' (already up to date)' : ''}\n`);
  return ExitCode.OK;
}

/** The accounts a file ledger's folder may be (named by a hash of its account: recognised, not read). */
function candidateAccounts(args: Args, io: CliIO): string[] {
  const gatewayHost = args['gateway-host'];
  const noUrl = { ...io.env, PAYOUT_BASE_URL: undefined };
  // (an environment not configured here, or without a URL, names no account)
  const accounts = [
    { env: args.env, baseUrl: args['base-url'], gatewayHost, vars: io.env },
    { env: 'sandbox' as const, gatewayHost, vars: noUrl },
    { env: 'production' as const, gatewayHost, vars: noUrl },
  ].map((o) => attempt(() => accountOf(resolveEnvironment(o).baseUrl ?? '')));
  return [...new Set(accounts.filter((a) => a !== undefined))];
}

/** What `ledger import` prints: what went in, and each batch left out and why. */
export function describePlan(plan: ImportPlan): string {
  const refused = [
    ...plan.conflicts.map(
      (c) =>
        `  ${c.account}: reference ${c.ref} sent by batch ${c.batch.batchId.slice(0, 16)} (${c.batch.file}) and, in the ledger, ` +
        (c.other.batchId === c.batch.batchId
          ? 'by a run of that same batch, sending it now: import again once that run ends'
          : `by batch ${c.other.batchId.slice(0, 16)} (${c.other.file}, ${c.other.phase})`),
    ),
    ...plan.differing.map((j) => `  ${j.account}: batch ${j.batchId.slice(0, 16)} (${j.path}) is in the ledger with other lines`),
  ];
  const lines = plan.insert.reduce((n, j) => n + j.lines.length, 0);
  const left = refused.length ? `${plural(refused.length, 'conflict')}, whose batches were not imported:\n${refused.join('\n')}\n` : '';
  return `Imported ${plural(plan.insert.length, 'batch')} (${plural(lines, 'line')}); ${plural(plan.same.length, 'batch')} already there\n${left}`;
}

async function importLedger(db: TeamDb, args: Args, io: CliIO): Promise<ExitCode> {
  if (!args['from-state-dir']) throw new UsageError('ledger import needs --from-state-dir DIR, the state folder to copy');
  const dir = resolve(io.cwd, args['from-state-dir']);
  // (first: a folder that cannot be read is refused, naming the error; then only a missing ledgers/ is none)
  const unsafe = unsafeStateFolder(dir);
  if (unsafe) throw new CommandError(`refused: ${unsafe}. Nothing was imported`, ExitCode.REFUSED);
  if (!existsSync(join(dir, 'ledgers'))) throw new UsageError(`${dir} holds no file ledger (no ledgers/ folder): nothing was imported`);
  const { journals, unknown, damaged } = saying(
    () => readFileLedgers(dir, candidateAccounts(args, io)),
    BatchRefused,
    (e) => new CommandError(`refused: ${e.message}. Nothing was imported`, ExitCode.REFUSED),
  );
  if (unknown.length)
    throw new UsageError(
      `the account of ${unknown.map((f) => join(dir, 'ledgers', f)).join(', ')} is not known (their journals do not name it): ` +
        'name its service with --base-url URL, or --env with --gateway-host. Nothing was imported.',
    );
  const plan = await importJournals(db, journals, `import ${db.holder} ${hostname()}:${dir}`);
  const refused = plan.conflicts.length > 0 || plan.differing.length > 0;
  const batchesOf = (js: FileJournal[]) => js.map((j) => ({ account: j.account, batchId: j.batchId, path: j.path, lines: j.lines.length }));
  if (args.json)
    printJson(io, {
      ledger: db.where,
      from: dir,
      imported: batchesOf(plan.insert),
      alreadyThere: batchesOf(plan.same),
      differing: batchesOf(plan.differing),
      conflicts: plan.conflicts,
      damaged,
    });
  else
    io.stdout.write(
      `${db.where} from ${dir}: ${describePlan(plan)}` +
        damaged.map((d) => `  ${d.path} line ${d.line} is damaged: left out, as every command reads the journal\n`).join(''),
    );
  return refused ? ExitCode.REFUSED : ExitCode.OK;
}

async function status(db: TeamDb, args: Args, io: CliIO): Promise<ExitCode> {
  const version = await schemaVersionOf(db);
  const holders = await db.query<{ holder: string; host: string; pid: number; command: string }>(
    'SELECT holder, host, pid, command FROM payout_batch.holders WHERE holder <> $1 ORDER BY started_at',
    [db.holder],
  );
  const alive = [];
  for (const h of holders.rows) if (await db.holderAlive(h.holder)) alive.push(h);
  const accounts = await db.query<{ account: string; batches: string }>(
    'SELECT account, count(DISTINCT batch_id) AS batches FROM payout_batch.journal_lines GROUP BY account ORDER BY account',
  );
  const out = { ledger: db.where, version, holders: alive, accounts: accounts.rows.map((a) => ({ ...a, batches: Number(a.batches) })) };
  if (args.json) printJson(io, out);
  else
    io.stdout.write(
      `${db.where}: schema version ${version}\n` +
        `${plural(alive.length, 'other process')} connected${alive.map((h) => `\n  ${h.command || '?'} on ${h.host}, pid ${h.pid}`).join('')}\n` +
        (out.accounts.length ? out.accounts.map((a) => `${a.account}: ${plural(a.batches, 'batch')}\n`).join('') : 'no batches yet\n'),
    );
  return ExitCode.OK;
}

export default defineCommand(builder, async (args, io) => {
  const team = await openTeamLedger(args, io, makeLogger(args, io, `ledger ${args.action}`), { init: args.action === 'init' });
  if (!team) throw new UsageError(`ledger ${args.action} needs --ledger postgres://user@host/db or $PAYOUT_BATCH_LEDGER_URL`);
  try {
    return await { init, import: importLedger, status }[args.action](team.db, args, io);
  } catch (e) {
    if (e instanceof TeamLedgerError) throw new CommandError(e.message, ExitCode.SERVICE_UNAVAILABLE);
    throw e;
  } finally {
    await team.db.close();
  }
});
