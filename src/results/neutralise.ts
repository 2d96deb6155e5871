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
// First, each hidden character (C0/C1 control but tab, LF, CR; bidi and invisible format
// characters: text.ts) is written as its escape "\u001B", so that an ESC or U+202E of an invalid
// row reaches neither the file nor a terminal printing it raw (issue 43, item 16). To stay a
// bijection, each backslash of a run that comes before "uHHHH" or before a hidden character is
// doubled: reading, a run of n backslashes before "uHHHH" is n/2 of them and "uHHHH" when n is even,
// (n-1)/2 and the character when odd.
//
// Only text goes through here: the writer keeps a plain decimal in a numeric result column as a
// number (so "-12.50" in fee stays a negative number, not "'-12.50").

import { escapeCharacter, HIDDEN_IN_CELLS } from '../text.ts';

/** Starts with a trigger = + - @ tab CR, or with "'" and then a trigger or another "'". */
const NEEDS_QUOTE = /^'?[=+\-@\t\r]|^''/;
/** What neutralise wrote: "'" and then a trigger or another "'". */
const NEUTRALISED = /^'[=+\-@\t\r']/;

const HIDDEN = `[${HIDDEN_IN_CELLS}]`;
const TO_ESCAPE = new RegExp(`\\\\(?=\\\\*(?:u[0-9A-F]{4}|${HIDDEN}))|${HIDDEN}`, 'g');
const ESCAPED = /(\\+)u([0-9A-F]{4})/g;

export function neutralise(text: string): string {
  const t = text.replace(TO_ESCAPE, (c) => (c === '\\' ? '\\\\' : escapeCharacter(c)));
  return NEEDS_QUOTE.test(t) ? `'${t}` : t;
}

export function unneutralise(text: string): string {
  const t = NEUTRALISED.test(text) ? text.slice(1) : text;
  return t.replace(ESCAPED, (_, run: string, hex: string) =>
    '\\'.repeat(run.length >> 1).concat(run.length % 2 ? String.fromCharCode(parseInt(hex, 16)) : `u${hex}`),
  );
}
