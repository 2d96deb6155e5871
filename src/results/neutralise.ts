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

// The triggers = + - @ tab CR by char code: the CSV writer calls neutralise for every cell (4.6
// million on a 100,000-row checkpoint) and a Set lookup of the one-character text[0] cost it 15 ms
// more of its ~350 (measured).
const isTrigger = (c: number): boolean => c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d;
const QUOTE = 0x27; // '

const needsQuote = (t: string): boolean => {
  if (t.length === 0) return false;
  const c = t.charCodeAt(0);
  return isTrigger(c) || (c === QUOTE && t.length > 1 && (isTrigger(t.charCodeAt(1)) || t.charCodeAt(1) === QUOTE));
};

export function neutralise(text: string): string {
  return needsQuote(text) ? `'${text}` : text;
}

export function unneutralise(text: string): string {
  return text.length > 1 && text.charCodeAt(0) === QUOTE && (isTrigger(text.charCodeAt(1)) || text.charCodeAt(1) === QUOTE)
    ? text.slice(1)
    : text;
}

/** Does a spreadsheet see this text as a formula? (for tests and checks) */
export const isFormulaLike = (text: string): boolean => text.length > 0 && isTrigger(text.charCodeAt(0));
