// Formula neutralising ("CSV injection"), a bijection so write → read is lossless: a text starting
// with a trigger (= + - @ tab CR), or with "'" and a trigger or another "'", gets a leading "'";
// unneutralise drops it. First each hidden character (text.ts) is written as its escape "\u001B",
// the backslashes of a run before "uHHHH" or a hidden character doubled.

import { escapeCharacter, HIDDEN_IN_CELLS } from '../text.ts';

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
