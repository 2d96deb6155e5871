// `payout-batch validate FILE`: every row checked offline (no key, no network). Exit 0: all valid; 1: some invalid;
// 2: the file cannot be used, or Ctrl-C / SIGTERM stopped the check.
import { createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { stringify } from 'csv-stringify';
import type { Argv } from 'yargs';
import { batchFileFlags, documentsOption, fileReadingOptions } from '../file-options.ts';
import { CommandError, defineCommand, flag, num, plural } from '../command.ts';
import { groupThousands } from '../../money.ts';
import { ExitCode } from '../exit-codes.ts';
import { InputError } from '../../input/read-batch.ts';
import { neutralise } from '../../input/neutralise.ts';
import { attempt } from '../../files/attempt.ts';
import { validateBatch, formatProblem, type BatchSummary, type BatchValidation, type Problem } from '../../validation/validation.ts';

/** Writes and waits when the stream asks to: a million problems never pile up in memory (a closed pipe: bin.ts). */
async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain').catch(() => undefined);
}

const REPORT_COLUMNS = ['severity', 'code', 'file', 'row', 'column', 'value', 'message', 'expected'] as const;

function describeSource(v: BatchValidation): string {
  const s = v.source;
  if (s.format === 'csv') {
    const delim = s.delimiter === '\t' ? 'tab' : `"${s.delimiter}"`;
    return `CSV, ${s.encoding?.toUpperCase()} (${s.encodingDetectedBy}), delimiter ${delim}, header on row ${s.headerRow}`;
  }
  if (s.message) return `ISO 20022 ${s.message.version}, message ${s.message.id}`;
  return `${s.format.toUpperCase()} workbook, sheet "${s.sheet}"${s.sheets && s.sheets.length > 1 ? ` of ${s.sheets.length}` : ''}, header on row ${s.headerRow}`;
}

function batchSummaryText(s: BatchSummary): string {
  const lines = [
    '',
    `Summary of ${s.file}`,
    `  rows       ${s.rows} read: ${s.valid} valid, ${s.invalid} invalid${s.skipped ? `; ${s.skipped} skipped (blank or totals)` : ''}`,
    `  problems   ${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')}`,
  ];
  const codes = Object.entries(s.problemsByCode).sort((a, b) => b[1] - a[1]);
  if (codes.length) lines.push(`  by code    ${codes.map(([c, n]) => `${c} ${n}`).join(', ')}`);
  const totals = Object.entries(s.totalsBySourceCurrency);
  if (totals.length) {
    lines.push('  totals of the valid rows by source currency (before fees)');
    for (const [ccy, t] of totals) lines.push(`    ${ccy}  ${groupThousands(t.amount).padStart(18)}  ${plural(t.rows, 'row')}`);
    lines.push('  by method');
    for (const [m, v] of Object.entries(s.byMethod)) {
      lines.push(
        `    ${m.padEnd(16)} ${String(v.rows).padStart(5)} row${v.rows === 1 ? ' ' : 's'}  ${Object.entries(v.totals)
          .map(([c, a]) => `${c} ${groupThousands(a)}`)
          .join(', ')}`,
      );
    }
    lines.push('  corridors used');
    for (const c of s.corridors) {
      lines.push(
        `    ${c.sourceCurrency} -> ${c.destinationCurrency} ${c.destinationCountryCode}  ${c.method.padEnd(16)} ${String(c.rows).padStart(5)} row${c.rows === 1 ? ' ' : 's'}  ${c.sourceCurrency} ${groupThousands(c.amount)}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

async function openReport(path: string, named: string): Promise<{ add: (p: Problem) => Promise<void>; end: () => Promise<void> }> {
  const out = createWriteStream(path);
  await once(out, 'open').catch((e: NodeJS.ErrnoException) => {
    throw new CommandError(`cannot write the report ${named}: ${e.code ?? e.message}`);
  });
  const csv = stringify({ header: true, columns: [...REPORT_COLUMNS], bom: true });
  csv.pipe(out);
  return {
    add: async (p) => {
      // A cell a spreadsheet would run as a formula gets a leading quote, as in the results file.
      const text = [p.column, p.value, p.message, p.expected].map((v) => neutralise(v ?? ''));
      if (!csv.write([p.severity, p.code, p.file, p.row ?? '', ...text])) await once(csv, 'drain');
    },
    end: async () => {
      csv.end();
      await once(out, 'finish');
    },
  };
}

/** The same file: one path, or two naming one file (a link, a folder named twice). */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  const [x, y] = [a, b].map((p) => attempt(() => statSync(p)));
  return !!x && !!y && x.dev === y.dev && x.ino === y.ino;
}

/** The --json document, printed once at the end: one problem a line (a script can grep them). */
function jsonDocument(doc: Record<string, unknown>): string {
  const value = (v: unknown) =>
    Array.isArray(v) && v.length ? `[\n${v.map((x) => `    ${JSON.stringify(x)}`).join(',\n')}\n  ]` : JSON.stringify(v);
  return `{\n${Object.entries(doc)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${value(v)}`)
    .join(',\n')}\n}\n`;
}

const builder = (y: Argv) =>
  fileReadingOptions(y)
    .positional('file', { type: 'string', demandOption: true, describe: 'The batch file (.csv, .txt, .xlsx, .xls, pain.001 .xml)' })
    .option('documents', documentsOption)
    .option('report', { type: 'string', describe: 'Write every problem to this CSV file (a sheet)' })
    .option('json', flag('Print the problems and summary as JSON'))
    .option('allow-duplicate-rows', flag('Rows with the same account, amount and currency are a warning, not an error'))
    .option('max-problems', { ...num('Problems printed on screen (0: all); the report and --json have all'), default: 100 });

export default defineCommand(builder, async (args, io) => {
  const maxShown = args['max-problems'] > 0 ? args['max-problems'] : Infinity;
  // --json: the fields in the order they are learnt; the problems are kept only for it.
  const doc: Record<string, unknown> = { file: args.file };
  const problems: Problem[] = [];
  let total = 0;
  let v: BatchValidation | undefined;
  let report: Awaited<ReturnType<typeof openReport>> | undefined;
  // Ctrl-C or SIGTERM: the rows stop at the next one read (the readers give the event loop a turn
  // at least every few thousand rows, which is when the signal is heard)
  let stopped = false;
  void io.stopSignal.then(() => (stopped = true));
  const unusable = async (error: { code: string; message: string; row?: number }) => {
    if (args.json) await write(io.stdout, jsonDocument({ ...doc, error, exitCode: ExitCode.UNUSABLE_INPUT }));
    await write(io.stderr, `payout-batch: ${error.message} [${error.code}]\n`);
    return ExitCode.UNUSABLE_INPUT;
  };
  try {
    if (args.report && sameFile(resolve(io.cwd, args.report), resolve(io.cwd, args.file)))
      return await unusable({
        code: 'REPORT_IS_BATCH',
        message: `--report ${args.report}: that is the batch file itself; name another file, so that the batch is not written over`,
      });
    v = await validateBatch(args.file, { ...batchFileFlags(args, io.cwd), dir: io.cwd });
    if (args.report) report = await openReport(resolve(io.cwd, args.report), args.report);
    Object.assign(doc, { source: v.source, problems });
    const emit = async (p: Problem) => {
      total++;
      if (report) await report.add(p);
      if (args.json) problems.push(p);
      else if (total <= maxShown) await write(io.stdout, `  ${formatProblem(p)}\n`);
    };
    if (!args.json) await write(io.stdout, `Reading ${args.file}: ${describeSource(v)}\n`);
    let fileIdx = 0;
    const flushFileProblems = async () => {
      for (; fileIdx < v!.fileProblems.length; fileIdx++) await emit(v!.fileProblems[fileIdx]!);
    };
    let lastRow: number | undefined;
    for await (const row of v.rows) {
      if (stopped) break;
      lastRow = row.rowNumber;
      await flushFileProblems();
      for (const p of row.problems) await emit(p);
    }
    if (stopped) {
      if (report) await report.end();
      const message = `${args.file}: stopped (Ctrl-C or SIGTERM) ${lastRow === undefined ? 'before the first row' : `after row ${lastRow}`}: the rest of the file was not checked.`;
      return await unusable({ code: 'STOPPED', message, row: lastRow });
    }
    await flushFileProblems();
    if (report) await report.end();
    const s = v.summary;
    const code = s.invalid > 0 ? ExitCode.ROWS_FAILED : ExitCode.OK;
    if (args.json) {
      await write(io.stdout, jsonDocument({ ...doc, summary: s, exitCode: code }));
      return code;
    }
    if (total > maxShown)
      await write(
        io.stdout,
        `  ... ${plural(total - maxShown, 'more problem')} not shown (--max-problems 0 shows all${args.report ? '; all are in the report' : '; --report FILE.csv writes all'})\n`,
      );
    await write(io.stdout, batchSummaryText(s));
    if (args.report) await write(io.stdout, `  report     ${plural(total, 'problem')} written to ${args.report}\n`);
    await write(
      io.stdout,
      s.invalid > 0
        ? `\n${s.invalid} of ${plural(s.rows, 'row')} ${s.invalid === 1 ? 'is' : 'are'} invalid: ${s.invalid === 1 ? 'it' : 'they'} would not be sent. Fix ${s.invalid === 1 ? 'it' : 'them'} and validate again.\n`
        : `\n${s.rows === 1 ? 'The row is' : `All ${s.rows} rows are`} valid${s.warnings ? ' (see the warnings)' : ''}.\n`,
    );
    return code;
  } catch (e) {
    if (report) await report.end().catch(() => {});
    if (e instanceof InputError) return await unusable({ code: e.code, message: e.message, row: e.row });
    throw e;
  } finally {
    await v?.close();
  }
});
