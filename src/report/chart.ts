// Horizontal bar charts as inline SVG: a label, a bar, the value. No script, no external font;
// every label goes through the safe tag (escaped in <text> and in attributes). Bar lengths are
// the only floating point here: a drawing, never a total. Amounts of different currencies never
// share a scale: a chart has one group of bars per currency, each bar its share of the group's sum.
import { Dec } from '../money.ts';
import { readAmount } from '../engine/money-totals.ts';
import { safe, type SafeHtml } from './safe-html.ts';

export interface Bar {
  label: string;
  /** Exact decimal text or a count: shown as given, kept in data-value; the bar's length is its share of its group's sum. */
  value: string;
  /** The currency of the value: bars of one currency are drawn together, shares of their sum (its `data-currency`). */
  currency: string;
  /** Text shown after the bar (default: the value). */
  shown?: string;
  /** The bar's colour, when it means something (a status's outcome); else the next of the palette. */
  color?: string;
  /** Extra data-* attributes of the bar's group (name → value). */
  data?: Record<string, string>;
}

const WIDTH = 640;
const LABEL = 190;
const VALUE = 150;
const ROW = 22;
/** The longest bar: what the label, the value and a margin leave. */
const BAR_SPACE = WIDTH - LABEL - VALUE - 10;
const COLORS = ['#2f6db5', '#3a9a6a', '#c07a1b', '#8d4fb3', '#b83b4b', '#4a8c9c', '#7a7a2a', '#5c5c8a'];

/** The value as a decimal; 0 for anything that is not one (a drawing must not throw). */
const decOf = (value: string): Dec => readAmount(value) ?? new Dec(0);

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One chart: the bars of each currency under its name, each as long as its share of the currency's sum (all of it: the whole width). */
export function barChart(title: string, section: string, all: readonly Bar[]): SafeHtml {
  const rows: SafeHtml[] = [];
  let y = 4;
  let colorIndex = 0;
  for (const currency of new Set(all.map((b) => b.currency))) {
    const bars = all.filter((b) => b.currency === currency);
    rows.push(safe`<text class="group" x="0" y="${y + 14}">${clip(currency || '(no currency)', 60)}</text>`);
    y += ROW;
    const sum = bars.reduce((a, b) => a.plus(decOf(b.value).abs()), new Dec(0));
    for (const b of bars) {
      const v = decOf(b.value).abs();
      // a bar that is not zero stays visible: at least one unit long
      const len = v.isZero() ? 0 : Math.max(1, Math.round(v.dividedBy(sum).times(BAR_SPACE).toNumber()));
      const color = b.color ?? COLORS[colorIndex++ % COLORS.length]!;
      const data = Object.entries({ ...b.data, currency: b.currency }).map(([k, val]) => safe` data-${k.replace(/[^a-z-]/g, '')}="${val}"`);
      rows.push(
        safe`<g data-label="${b.label}" data-value="${b.value}"${data}><title>${b.label}: ${b.shown ?? b.value}</title><text x="${LABEL - 6}" y="${y + 14}" text-anchor="end">${clip(b.label, 28)}</text><rect x="${LABEL}" y="${y + 3}" width="${len}" height="${ROW - 6}" fill="${color}"></rect><text x="${LABEL + len + 6}" y="${y + 14}">${b.shown ?? b.value}</text></g>`,
      );
      y += ROW;
    }
  }
  return safe`<figure class="chart" data-section="${section}">
    <figcaption>${title}</figcaption>
    <svg role="img" aria-label="${title}" viewBox="0 0 ${WIDTH} ${y + 4}" width="100%" preserveAspectRatio="xMinYMin meet">${rows}</svg>
  </figure>`;
}
