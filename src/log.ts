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

/** Account numbers, IBANs and the like in logs and problems: keep the last 4 characters. */
export function maskAccount(value: string): string {
  const v = value.replace(/\s+/g, '');
  if (v.length <= 4) return '*'.repeat(v.length);
  return '*'.repeat(Math.min(v.length - 4, 8)) + v.slice(-4);
}

/** Removes a known secret from any text before it is shown or stored. */
export function scrubSecret(text: string, secret: string | undefined): string {
  return secret && secret.length >= 4 ? text.split(secret).join('[redacted]') : text;
}
