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

const TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

const needsQuote = (t: string): boolean =>
  t.length > 0 && (TRIGGERS.has(t[0]!) || (t[0] === "'" && t.length > 1 && (TRIGGERS.has(t[1]!) || t[1] === "'")));

export function neutralise(text: string): string {
  return needsQuote(text) ? `'${text}` : text;
}

export function unneutralise(text: string): string {
  return text.length > 1 && text[0] === "'" && (TRIGGERS.has(text[1]!) || text[1] === "'") ? text.slice(1) : text;
}

/** Does a spreadsheet see this text as a formula? (for tests and checks) */
export const isFormulaLike = (text: string): boolean => text.length > 0 && TRIGGERS.has(text[0]!);
