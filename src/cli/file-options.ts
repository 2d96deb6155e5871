// The flags of a batch file, apart from options.ts so that `validate` loads none of the engine, the connection or the logger
// that options.ts brings (0.3 MB to compile).
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { flag, str, type ArgsOf } from './command.ts';
import { TEXT_ENCODINGS } from '../input/detect.ts';

export const documentsOption = str('pain.001: folder of supporting documents, named by end-to-end id or RfrdDocInf/Nb');

export const fileReadingOptions = <T>(y: Argv<T>) =>
  y
    .option('encoding', str(`CSV encoding instead of detecting it: ${TEXT_ENCODINGS.join(', ')}`))
    .option('sheet', str('Excel: the sheet to read (default: the first one not hidden)'));

export function batchFileOptions<T>(y: Argv<T>) {
  return fileReadingOptions(y)
    .option('batch-id', str('A label naming the batch (its journal) instead of the content hash; never pays a reference again'))
    .option('documents', documentsOption)
    .option('allow-duplicate-rows', flag('Same account, amount and currency on two rows is intended'));
}

/** (`cwd`: the folder --documents is named from, CliIO.cwd) */
export const batchFileFlags = (args: Omit<ArgsOf<typeof batchFileOptions>, 'batch-id'>, cwd: string) => ({
  encoding: args.encoding,
  sheet: args.sheet,
  documents: args.documents && resolve(cwd, args.documents),
  allowDuplicateRows: args['allow-duplicate-rows'],
});
