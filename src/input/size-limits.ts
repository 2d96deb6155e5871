// The size limits of the input boundary, in one place (src/input/README.md "Size limits" lists them).
// They bound the memory a hostile or broken file can make the reader take, whatever the heap
// flags: SheetJS unpacks a workbook into Buffers outside the V8 heap, and csv-parse holds a whole
// record until its end.

const MB = 1024 * 1024;

/** An Excel file bigger than this on disk is refused before it is read (SheetJS reads it whole). */
export const MAX_EXCEL_FILE_BYTES = 50 * MB;
/** A zip workbook (.xlsx) whose parts unpack to more than this in all is refused. */
export const MAX_UNPACKED_BYTES = 200 * MB;
/** A zip part that unpacks to more than this many times its packed size... */
export const MAX_PART_RATIO = 200;
/** ...and to more than this is refused (a zip bomb): small parts may compress very well. */
export const RATIO_MIN_BYTES = 10 * MB;
/** A CSV record (one row, all its cells) longer than this is refused (csv-parse max_record_size). */
export const MAX_RECORD_BYTES = 1 * MB;
/**
 * A CSV record of more cells than a spreadsheet has columns (Excel: 16,384) is refused. The size
 * limit above counts the cells' characters only, so a line of millions of delimiters passed it,
 * and became an array of millions of empty cells (30 MB of commas took 1.5 GB).
 */
export const MAX_RECORD_CELLS = 16_384;

/** "200 MB", as messages say it. */
export const mb = (bytes: number): string => `${Math.round(bytes / MB)} MB`;
