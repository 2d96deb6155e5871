// The input's size limits: they bound the memory a hostile or broken file can take, whatever the
// heap flags (SheetJS unpacks a workbook outside the V8 heap; csv-parse holds a whole record).

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
/** A CSV record of more cells than Excel has columns is refused: a line of delimiters is an array of empty cells. */
export const MAX_RECORD_CELLS = 16_384;

/** "200 MB", as messages say it. */
export const mb = (bytes: number): string => `${Math.round(bytes / MB)} MB`;
