// The one pino factory: secrets redacted by path here, so no caller has to remember to. The human
// format is made from the same JSON, so redaction applies to both alike.
import { pino, type Logger, type DestinationStream } from 'pino';
import { visible } from './text.ts';

const REDACT_PATHS = ['apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]', 'secret', '*.secret'];

export const LOG_FORMATS = ['json', 'human'] as const;
export const LOG_LEVELS = [...Object.keys(pino.levels.values), 'silent'];
export type LogFormat = (typeof LOG_FORMATS)[number];

interface LogOptions {
  level?: string;
  format?: LogFormat;
  /** Defaults to stderr, so stdout stays for results and --json. */
  destination?: DestinationStream;
  bindings?: Record<string, unknown>;
}

export function createLogger(options: LogOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { ...options.bindings },
    },
    options.format === 'human' ? humanDestination(options.destination ?? process.stderr) : (options.destination ?? pino.destination(2)),
  );
}

/** A person reads these first; the others follow as they came. */
const FIRST_FIELDS = ['row', 'reference', 'status', 'errorCode', 'route', 'attempt', 'delayMs', 'requestId'];
const SKIPPED_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'command', 'kind', 'idempotencyKey', 'v']);

/** "warn: retrying initiate: 429 (row=3 status=429 requestId=…)": plain values only, hidden characters escaped. */
export function humanLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return visible(json.replace(/\n$/, '')) + '\n';
  }
  const level = pino.levels.labels[Number(o.level)] ?? String(o.level);
  const err = o.err as { message?: unknown } | undefined;
  const keys = [...FIRST_FIELDS.filter((k) => k in o), ...Object.keys(o).filter((k) => !FIRST_FIELDS.includes(k))];
  const fields = keys
    .filter((k) => !SKIPPED_FIELDS.has(k) && ['string', 'number', 'boolean'].includes(typeof o[k]))
    .map((k) => `${k}=${String(o[k])}`);
  if (typeof err?.message === 'string') fields.push(`error=${err.message}`);
  return `${visible(`${level}: ${typeof o.msg === 'string' ? o.msg : ''}${fields.length ? ` (${fields.join(' ')})` : ''}`)}\n`;
}

/** On a terminal the line is cleared first: a progress bar is overwritten and redraws itself below. */
function humanDestination(out: { write(text: string): unknown; isTTY?: boolean }): DestinationStream {
  const clear = out.isTTY ? '\r\x1b[K' : '';
  return { write: (line: string) => void out.write(clear + humanLine(line)) };
}
