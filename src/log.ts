// The one pino factory. Secrets are redacted by path here, so no caller has to remember to.
import { pino, type Logger, type DestinationStream } from 'pino';

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

export interface LogOptions {
  level?: string;
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
    options.destination ?? pino.destination(2),
  );
}
