// `payout-batch template`: a batch template, the header row and one valid example row.
import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, str, UsageError } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { canonicalMethod, PAYOUT_METHODS } from '../../spec/codes.ts';
import { readTemplate, templateFileName } from '../../validation/templates.ts';
import { resolve } from 'node:path';

const builder = (y: Argv) =>
  y
    .option('method', str(`One method's columns only: ${PAYOUT_METHODS.join(', ')} (default: all methods)`))
    .option('format', {
      type: 'string',
      default: 'csv' as const,
      choices: ['csv', 'xlsx', 'pain.001'] as const,
      describe: 'File format (pain.001: an ISO 20022 .09 file, one example transaction)',
    })
    .option('out', str('Write to this file, a new one (default: stdout for CSV, ./payout-template-<method>.xlsx for XLSX)'));

export default defineCommand(builder, async (args, io) => {
  const method = args.method === undefined ? undefined : canonicalMethod(args.method);
  if (args.method !== undefined && !method)
    throw new UsageError(`unknown --method "${args.method}": use one of ${PAYOUT_METHODS.join(', ')}`);
  const content = readTemplate(method, args.format);
  const out = args.out ?? (args.format === 'xlsx' ? templateFileName(method, 'xlsx') : undefined);
  if (out === undefined) {
    io.stdout.write(content);
    return ExitCode.OK;
  }
  try {
    // (never over a file there: the template filled in with payouts under its default name, a batch named by mistake)
    await writeFile(resolve(io.cwd, out), content, { flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new CommandError(`${out} is there already, and a template never replaces a file: name another --out`);
    throw new CommandError(`cannot write ${out}: ${code ?? (e as Error).message}`);
  }
  io.stderr.write(
    `Wrote ${out} (${args.format === 'pain.001' ? 'a pain.001.001.09 with one example transaction' : `${method ?? 'all methods'}; header row and one example row`}).\n`,
  );
  return ExitCode.OK;
});
