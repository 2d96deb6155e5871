// `payout-batch screen FILE --sanctions-list PATH...` (engine/screen-batch.ts), offline; --clear writes a clearance to sign,
// --clearances lists them. A clearance counts as the account's policy counts it (as run does), when a service is named.
import { osUserName } from '../../os-user.ts';
import { plural, shellWord } from '../../text.ts';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, durationFlag, flag, printJson, str, UsageError, type ArgsOf, type CliIO } from '../command.ts';
import { fileReadingOptions } from '../file-options.ts';
import { ExitCode } from '../exit-codes.ts';
import { loadBatch, type LoadedBatch } from '../../engine/prepare.ts';
import { hitText, listText, payeeDigest, payeeOf, screenRows, type Screened } from '../../engine/screen-batch.ts';
import {
  CLEARANCE_KIND,
  clearancePayload,
  clearancesCounted,
  clearanceText,
  loadClearance,
  writeClearance,
} from '../../approvals/clearance.ts';
import { makerSigner } from './approve.ts';
import { maskAccount } from '../../mask.ts';
import { connectionOptions, screeningOf, screeningOptions } from '../options.ts';
import { accountPolicyOf } from '../send-batch.ts';
import type { AccountPolicy } from '../../approvals/account-policy.ts';
import { handleEngineError, screeningJson } from '../render.ts';

const builder = (y: Argv) =>
  connectionOptions(fileReadingOptions(screeningOptions(y)))
    .positional('file', str('The batch file (CSV, Excel or ISO 20022 pain.001)'))
    .option(
      'approvers',
      str("The approvers list whose signatures clear a hit (default $PAYOUT_BATCH_APPROVERS); the account's policy's, when it has one"),
    )
    .option('clear', str('Clear a false positive of the row of this reference (with --entry, --reason, --expires)'))
    .option('entry', str('--clear: the list entry cleared, LIST:ID as the hit names it (ofac-sdn:12345)'))
    .option('reason', str('--clear: why the hit is not the payee'))
    .option('expires', { type: 'string', default: '90d', describe: '--clear: how long the clearance holds (90d)' })
    .option('as', str('--clear: who makes it (default the OS user): their signature never counts'))
    .option('approver-key', str("--clear: the maker's private approver key: it signs the clearance, and then counts for nobody on it"))
    .option('clearances', flag('List the clearances of --clearances-dir: who signed each, when it expires, whether it counts'))
    .option('json', flag('Print {"held", "screened", "lists"} as JSON'));

type Args = ArgsOf<typeof builder>;

export default defineCommand(builder, async (args, io) => {
  try {
    // (the policy run would count clearances by: read offline, from the host's or team ledger's record)
    const policy = await accountPolicyOf(args, io);
    if (typeof policy === 'string') throw new CommandError(policy);
    if (args.clearances) return listClearances(args, io, policy);
    if (!args.file) throw new UsageError('name the batch file to screen');
    const screening = screeningOf(args, io, policy);
    if (!screening) throw new UsageError('give the lists to screen against: --sanctions-list PATH (repeatable)');
    const batch = await loadBatch(resolve(io.cwd, args.file), { sheet: args.sheet, encoding: args.encoding });
    const s = await screenRows(batch.rows, screening);
    // (as run refuses: a list too old for the account's policy, or none, screens nobody)
    if (s.refused.length) throw new CommandError(`refused: ${s.refused.join('; ')}`, ExitCode.REFUSED);
    if (args.clear !== undefined) return await clear(args, io, batch.rows, s);
    if (args.json) printJson(io, screeningJson(s));
    else {
      io.stdout.write(
        `Screened ${plural(s.screened, 'payee')} of ${args.file} against:\n${s.lists.map((l) => `  ${listText(l)}\n`).join('')}`,
      );
      for (const [row, h] of s.held) for (const hit of h.hits) io.stdout.write(`  HELD row ${row} ${h.reference}: ${hitText(hit)}\n`);
      for (const [row, cs] of s.cleared) io.stdout.write(`  cleared row ${row}: ${cs.map((c) => c.id).join(', ')}\n`);
      io.stdout.write(s.held.size ? `${plural(s.held.size, 'row')} held: never sent until cleared.\n` : 'No payee held.\n');
    }
    return s.held.size ? ExitCode.ROWS_FAILED : ExitCode.OK;
  } catch (e) {
    return handleEngineError(e, io, args.json);
  }
});

async function clear(args: Args, io: CliIO, rows: LoadedBatch['rows'], s: Screened) {
  const [list, id] = (args.entry ?? '').split(/:(.*)/s);
  if (!list || !id || !args.reason?.trim()) throw new UsageError('--clear REF needs --entry LIST:ID and --reason TEXT');
  const held = [...s.held.values()].find((h) => h.reference === args.clear);
  const hit = held?.hits.find((h) => h.list === list && h.entryId === id);
  if (!held || !hit) throw new UsageError(`${args.clear} has no hit of ${args.entry} to clear (see \`payout-batch screen\`)`);
  const p = rows.find((r) => r.payout?.reference === args.clear)!.payout!;
  const expires = durationFlag('expires', args.expires);
  const payee = payeeOf(p);
  const payer = p.ultimateDebtor || p.ultimateDebtorBic; // (one known only by its BIC too, as the hit names it)
  const madeBy = args.as?.trim() || osUserName(io.env);
  const maker = args['approver-key'] === undefined ? undefined : makerSigner(madeBy, args['approver-key'], io.cwd);
  const now = new Date();
  const path = await writeClearance(resolve(io.cwd, args['clearances-dir']), {
    kind: CLEARANCE_KIND,
    v: 1,
    reference: payee.reference,
    payee: payeeDigest(p),
    payeeText: `${payee.name}${p.ultimateCreditor ? ` for ${p.ultimateCreditor.name || p.ultimateCreditor.bic}` : ''}, ${maskAccount(payee.iban ?? payee.accountNumber ?? payee.bic ?? '')}${payer ? `, on behalf of ${payer}` : ''}`,
    list,
    entryId: id,
    entryName: hit.entryName,
    entryDigest: hit.entryDigest,
    reason: args.reason.trim(),
    expiresAt: new Date(now.getTime() + expires).toISOString(),
    madeAt: now.toISOString(),
    madeBy,
  });
  if (maker) await maker.sign(path, clearancePayload(loadClearance(path)));
  io.stdout.write(
    `Clearance written to ${path}, not in force until approved: \`payout-batch approve ${shellWord(path)} --as NAME --key-file KEY\`.\n`,
  );
  return ExitCode.OK;
}

function listClearances(args: Args, io: CliIO, policy: AccountPolicy | undefined): ExitCode {
  const approvers = args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS;
  const all = clearancesCounted(io.cwd, { clearances: args['clearances-dir'], approvers }, policy);
  if (policy && !args.json)
    io.stdout.write(
      `Counted as the account's policy counts them: ${policy.requireApprovals} of ${policy.approvers.map((a) => a.name).join(', ')}.\n`,
    );
  if (args.json)
    printJson(
      io,
      all.map((c) => ({ path: c.loaded.path, ...c.loaded.clearance, signedBy: c.signedBy, ...(c.problem ? { problem: c.problem } : {}) })),
    );
  else
    for (const c of all)
      io.stdout.write(
        `${c.loaded.path}: ${clearanceText(c.loaded.clearance)}\n  signed by ${c.signedBy.join(', ') || 'nobody'}: ${c.problem ? `does not count (${c.problem})` : 'counts'}\n`,
      );
  if (!all.length && !args.json) io.stdout.write(`No clearance in ${args['clearances-dir']}.\n`);
  return ExitCode.OK;
}
