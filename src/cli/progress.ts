// What a person at a terminal sees while a batch runs, as pure text: the progress bar's line, the
// pace of requests to the service, the preflight's current step, and the answer to Ctrl-C. The
// sink that draws them (render.ts progressSink) holds the state.
import { plural } from './command.ts';
import type { ClientEvent } from '../client/http.ts';
import type { PreflightStep } from '../engine/preflight.ts';

/** `eta`: seconds left (cli-progress: a number, or 'NULL'/'INF'). */
export interface BarValues {
  value: number;
  total: number;
  failed: number;
  rps: string;
  eta: number | string;
}

/** Seconds as the bar shows them, at most 6 characters: 42s, 12m05s, 3h07m, 99h+; -- while unknown. */
export function etaText(eta: number | string): string {
  const t = typeof eta === 'number' ? eta : Number.NaN;
  if (!Number.isFinite(t) || t < 0) return '--';
  const s = Math.round(t);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 100 * 3600) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return '99h+';
}

const BAR_MAX = 40;
const BAR_MIN = 10;

/**
 * The progress line within `width`, the ETA always whole: the bar takes what the text leaves (at
 * most 40, none under 10). The last column stays free: a terminal that writes it may wrap.
 */
export function barLine(v: BarValues, width: number): string {
  const text = `${v.value}/${v.total} rows | failed ${v.failed} | ${v.rps} req/s | ETA ${etaText(v.eta)}`;
  const room = Math.min(BAR_MAX, width - 1 - text.length - 2);
  if (room < BAR_MIN) return ` ${text}`.slice(0, Math.max(0, width - 1));
  const done = v.total > 0 ? Math.round((Math.min(v.value, v.total) / v.total) * room) : 0;
  return ` ${'\u2588'.repeat(done)}${'\u2591'.repeat(room - done)} ${text}`;
}

/**
 * Requests a second over the last 5 s, each counted when answered at the time it was sent, so the
 * figure never runs ahead of the client's pace (spec §8). Storage PUTs are not requests (spec §4.6).
 */
export function requestMeter(now: () => number = Date.now) {
  const WINDOW_MS = 5000;
  const starts: number[] = [];
  return {
    add(e: ClientEvent): void {
      if (e.type === 'response' && !e.storage) starts.push(now() - e.ms);
    },
    perSecond(): string {
      const from = now() - WINDOW_MS;
      const inWindow = starts.filter((t) => t > from);
      starts.splice(0, starts.length, ...inWindow);
      return (inWindow.length / (WINDOW_MS / 1000)).toFixed(1);
    },
  };
}

export function preflightText(s: PreflightStep): string {
  if (s.step === 'wallets') return 'preflight: reading the wallets and the countries...';
  if (s.step === 'quotes') return `plan: quoting ${plural(s.rows, 'row')} (one quote per corridor, method and fee band)...`;
  return `preflight: reading the payment methods of ${plural(s.corridors, 'corridor')} (${s.done} done)...`;
}

/** What the CLI says at once when asked to stop. `inFlight`: rows under way, undefined before sending. */
export function stoppingText(inFlight: number | undefined): string {
  const again = 'press Ctrl-C again to stop at once';
  if (inFlight === undefined) return `payout-batch: stopping before sending: no payout will start; ${again}.\n`;
  return (
    `payout-batch: stopping: no new payout will start; waiting for ${plural(inFlight, 'row')} in flight to be answered ` +
    `and journalled; ${again} (safe: every request sent is journalled, and running the same command again resumes).\n`
  );
}
