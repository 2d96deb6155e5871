// `payout-batch plan FILE [--out PLAN]`: the preflight and the plan, nothing sent; --out writes it
// with its quotes for `run --plan`. Exit 0 as planned, 1 rows invalid or left out, 3 would be refused.
import type { Argv } from 'yargs';
import { abortOn, defineCommand, flag, printJson, str, type ArgsOf, type CliIO } from '../command.ts';
import { batchFileFlags, batchFileOptions } from '../file-options.ts';
import { ExitCode } from '../exit-codes.ts';
import { planBatch, type PlanCommandResult } from '../../engine/plan-command.ts';
import {
  duplicateFlags,
  planningFlags,
  planningOptions,
  reportOrNote,
  screeningOf,
  stateRootOf,
  swapFlags,
  swapOptions,
  withConnection,
} from '../options.ts';
import { writePlanReport } from '../../report/write-report.ts';
import { makerSigner } from './approve.ts';
import { accountPolicyOf } from '../send-batch.ts';
import { allowanceLeft } from '../../approvals/account-policy.ts';
import { resolve } from 'node:path';
import { fitText, planJson, planText, preflightText, widthFor } from '../render.ts';
import { shellWord } from '../../text.ts';
import { screeningReasons } from '../../engine/guards.ts';

const builder = (y: Argv) =>
  swapOptions(batchFileOptions(planningOptions(y)))
    .positional('file', { type: 'string', demandOption: true, describe: 'The batch file (CSV, Excel or ISO 20022 pain.001)' })
    .option('out', str('Write the plan file here, for `payout-batch run --plan`'))
    .option('prepared-by', str('Who makes the plan, recorded in it (default the OS user): they cannot approve it'))
    .option('as', str('With --out and --approver-key: you, the maker, sign the plan under this name'))
    .option('approver-key', str('Your private approver key (PEM, `approver-key new`): signs the plan as its maker'))
    .option('quote', { ...flag('With --out: quote each row for exact fees (--no-quote: estimated only)'), default: true });

/** `run --dry-run` gives its own flags, without --out or --prepared-by. */
type PlanFlags = ArgsOf<typeof builder>;
/** (`fund-by-swap`: whether `run --dry-run`'s run would fund the batch by the plan's swap; `plan` counts it) */
type PlanArgs = Omit<PlanFlags, 'out' | 'prepared-by' | 'as' | 'approver-key'> & Partial<PlanFlags> & { 'fund-by-swap'?: boolean };

export default defineCommand(builder, (args, io) => showPlan(args, io));

/** `plan`, and `run --dry-run`, whose `controlTotals` refusals make it exit 3 as `run` would. */
export async function showPlan(
  args: PlanArgs,
  io: CliIO,
  controlTotals?: (r: PlanCommandResult) => { refused: string[]; notes: string[] },
): Promise<ExitCode> {
  const policy = await accountPolicyOf(args, io);
  const maker = makerSigner(args.as, args['approver-key'], io.cwd, typeof policy === 'object' ? policy.approvers : undefined);
  const stateDir = stateRootOf(args, io);
  const out = args.out && resolve(io.cwd, args.out);
  return withConnection(
    args,
    io,
    'plan',
    async (conn) => {
      const r = await planBatch({
        file: resolve(io.cwd, args.file),
        conn,
        out,
        preparedBy: maker?.name ?? args['prepared-by'],
        stateDir,
        batchId: args['batch-id'],
        quote: args.quote,
        mergeDocuments: args['merge-documents'],
        ...planningFlags(args),
        ...batchFileFlags(args, io.cwd),
        ...duplicateFlags(args),
        ...swapFlags(args),
        fundBySwap: args['fund-by-swap'] ?? true,
        // a line as each slow step starts, terminal or not; --json's stderr stays quiet
        onEvent: args.json
          ? undefined
          : (e) => {
              if (e.type === 'preflight' && (e.step.step !== 'methods' || e.step.done === 0)) io.stderr.write(`${preflightText(e.step)}\n`);
            },
        screening: screeningOf(args, io, typeof policy === 'object' ? policy : undefined),
        stop: abortOn(io.stopSignal),
      });
      const p = r.plan;
      if (maker && r.planFile && out) await maker.sign(out);
      const totals = controlTotals?.(r);
      const refused = [...(r.refused ?? []), ...(totals?.refused ?? [])];
      const notes = totals?.notes ?? [];
      const code =
        p.shortfall || (p.corridorBlocked && !args['allow-partial']) || refused.length
          ? ExitCode.REFUSED
          : p.invalid > 0 || p.notSent.size > 0 || r.quoteErrors.size > 0
            ? ExitCode.ROWS_FAILED
            : ExitCode.OK;
      const report = args.report
        ? await reportOrNote(io, () =>
            writePlanReport(p, {
              environment: conn.environment.name,
              baseUrl: conn.environment.baseUrl,
              planFile: r.planFile,
              planPath: out,
              batchOptions: batchFileFlags(args, io.cwd),
            }),
          )
        : undefined;
      if (args.json) {
        printJson(io, {
          exitCode: code,
          environment: conn.environment.name,
          batchId: p.batchId,
          ...planJson(p, true),
          planFile: args.out,
          ...(report ? { report } : {}),
          ...(r.planFile?.preparedBy !== undefined ? { preparedBy: r.planFile.preparedBy } : {}),
          quoteErrors: Object.fromEntries(r.quoteErrors),
          ...(refused.length ? { refused } : {}),
          ...(notes.length ? { notes } : {}),
        });
      } else {
        const width = widthFor(io.stdout, io.env);
        io.stdout.write(planText(p, conn.environment.name, conn.environment.baseUrl, width));
        const say = (text: string) => io.stdout.write(width ? fitText(text, width.columns) : text);
        const left = typeof policy === 'object' ? allowanceLeft(policy) : policy; // (a string: why it was not read)
        if (left) say(`Approval policy: ${left}.\n`);
        for (const [n, m] of r.quoteErrors) say(`  quote failed on row ${n}: ${m}\n`);
        for (const note of notes) say(`Control totals: ${note}.\n`);
        // (`run --dry-run` too: a preview that spends no quote; its requests are the run's own)
        if (!args.out && p.currencies.some((c) => c.feesEstimated))
          say(
            `Nothing was quoted, fees are estimated: \`payout-batch plan ${shellWord(args.file)} --out PLAN\` quotes the rows (exact fees, its quotes counted in its requests) and writes the plan to approve.\n`,
          );
        if (r.refused) say(`Refused${args.out ? ', no plan file written' : ''}:\n${r.refused.map((x) => `  - ${x}\n`).join('')}`);
        const held = screeningReasons(p, args['allow-partial']);
        if (held.length) say(`Sanctions screening: ${held[0]}.\n`);
        if (p.swaps.length && !refused.length)
          say(
            `The batch is paid after ${p.swaps.length === 1 ? 'this swap' : 'these swaps'}: \`payout-batch run ${shellWord(args.file)} --fund-by-swap\`${args.out ? `, or \`run --plan ${shellWord(args.out)}\` (approvers sign the swap)` : ''}; \`run\` without either refuses the shortfall.\n`,
          );
        if (r.planFile)
          say(
            `\nPlan written to ${args.out}${r.planFile?.preparedBy ? ` (prepared by ${r.planFile.preparedBy})` : ''}: run it with \`payout-batch run --plan ${shellWord(args.out!)}${conn.environment.name === 'production' ? ' --env production' : ''} --yes\` (the plan's service; refused if the batch file changes).\n`,
          );
        if (report) say(`Report: ${report}\n`);
        if (refused.length) io.stderr.write(`payout-batch: refused: ${refused.join('; ')}. Nothing was sent.\n`);
        if (code === ExitCode.REFUSED) say('As it stands, `run` would refuse this batch (see above).\n');
      }
      return code;
    },
    { stateRoot: stateDir },
  );
}
