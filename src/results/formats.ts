// The results formats: one writer each, in its own file. A new format is that file and one entry
// here (and its name in types.ts ResultsFormat); paths.ts picks the format by extension or batch.
import { csvWriter } from './csv-writer.ts';
import type { ResultsFormat, ResultsWriter } from './types.ts';
import { xlsxWriter } from './xlsx-writer.ts';

/** The writers; the first is the default for a batch no other one claims. */
export const RESULTS_WRITERS: readonly ResultsWriter[] = [csvWriter, xlsxWriter];

export const writerOf = (format: ResultsFormat): ResultsWriter => RESULTS_WRITERS.find((w) => w.format === format)!;
