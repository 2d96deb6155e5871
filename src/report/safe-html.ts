// The one way the report makes HTML: the `safe` tagged template, whose every interpolated value is
// escaped unless it is a fragment this tag made. There is deliberately no "raw string" escape
// hatch: a value from a batch or results file (a reference, a name, a narration) is only ever text.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Invisible and bidirectional format characters (validation refuses them in a batch; the service may still send them). */
const FORMAT = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/**
 * Text for an HTML text node or a quoted attribute value. A format character is shown as its code
 * point ("[U+202E]"), never applied: a right-to-left override would make the text read otherwise.
 */
export function escapeHtml(value: string): string {
  return value
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replace(FORMAT, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/** Markup made by `safe` (its literal parts are the program's, its values escaped). */
export class SafeHtml {
  readonly #text: string;
  /** @internal only the `safe` tag constructs it */
  constructor(text: string, token: symbol) {
    if (token !== MADE_HERE) throw new TypeError('SafeHtml is made by the safe tag only');
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}
const MADE_HERE = Symbol('safe-html');

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.toString();
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map((x: HtmlValue) => render(x)).join('');
  return escapeHtml(String(v));
}

/** `safe\`<td>${text}</td>\``: literal markup, escaped values; null, undefined and false render nothing. */
export function safe(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out, MADE_HERE);
}

// (Named `safe`, not `html`: code formatters rewrite templates tagged `html` as HTML, whitespace and all.)
