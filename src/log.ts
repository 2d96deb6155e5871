// The one pino factory. Secrets are redacted by path here, so no caller has to remember to.
// Logs are JSON lines for machines (cron, files, pipes) or, for a person at a terminal, one short
// line per event formatted from that same JSON, so redaction applies to both alike.
import { pino, type Logger, type DestinationStream } from 'pino';
import { visible } from './text.ts';

/** Every path under which a secret or an account identifier might travel in a log object. */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'secret',
  '*.secret',
  'req.headers["x-api-key"]',
  'request.headers["x-api-key"]',
];

export const LOG_FORMATS = ['json', 'human'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  level?: string;
  /** json (default): pino's JSON lines; human: one short line per event (humanLine). */
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

/** Fields a person reads first, in this order; the others follow as they came. */
const FIRST_FIELDS = ['row', 'reference', 'status', 'errorCode', 'route', 'attempt', 'delayMs', 'requestId'];
/** Fields that say nothing to a person at the terminal (the command is the one they typed). */
const SKIPPED_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'command', 'kind', 'idempotencyKey', 'v']);

/**
 * One pino JSON line as a line for a person: "warn: retrying initiate: 429 (row=3 status=429
 * requestId=…)". Only plain values are shown (no headers, no nested objects), already redacted;
 * control and bidi characters (from a file's cells or the service) escaped visibly.
 */
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

/**
 * Writes each log line as humanLine. On a terminal the line is cleared first: a progress bar drawn
 * there is overwritten, not left mixed into the log line, and redraws itself below it.
 */
function humanDestination(out: { write(text: string): unknown; isTTY?: boolean }): DestinationStream {
  const clear = out.isTTY ? '\r\x1b[K' : '';
  return { write: (line: string) => void out.write(clear + humanLine(line)) };
}
