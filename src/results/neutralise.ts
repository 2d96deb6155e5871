// Formula neutralising ("CSV injection"): a text cell that a spreadsheet would run as a formula
// gets a leading single quote, and reading undoes it exactly.
//
// The mapping is a bijection on all strings, so write → read is lossless:
//   neutralise(t) = "'" + t  when t starts with = + - @ tab or CR (a spreadsheet trigger),
//                            or when t starts with "'" followed by a trigger or by another "'"
//                            (so such a text is not mistaken for a neutralised one);
//                 = t        otherwise ("'t Hooft" and "'hello" stay as they are).
//   unneutralise(s) drops the first character when s is "'" followed by a trigger or "'".
// Nothing neutralise returns starts with a trigger.
//
// Only text goes through here: the writer keeps a plain decimal in a numeric result column as a
// number (so "-12.50" in fee stays a negative number, not "'-12.50").

/** Starts with a trigger = + - @ tab CR, or with "'" and then a trigger or another "'". */
const NEEDS_QUOTE = /^'?[=+\-@\t\r]|^''/;
/** What neutralise wrote: "'" and then a trigger or another "'". */
const NEUTRALISED = /^'[=+\-@\t\r']/;

export const neutralise = (text: string): string => (NEEDS_QUOTE.test(text) ? `'${text}` : text);

export const unneutralise = (text: string): string => (NEUTRALISED.test(text) ? text.slice(1) : text);
