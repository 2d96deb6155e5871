// The API key: taken from the environment (PAYOUT_API_KEY) or a key file, never from the command
// line (where `ps` shows it to every user of the machine). Held in an object that prints as its
// fingerprint, so an accidental log line, error or JSON.stringify shows no secret.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, resolve } from 'node:path';
import { inspect } from 'node:util';
import type { KeyEnvironment } from './quota.ts';
import { scrubDeep, scrubText, secretMatcher, type SecretMatcher } from './secrets.ts';

/** A problem with the configuration (key, environment, host): nothing was sent. */
export class ClientConfigError extends Error {
  override readonly name = 'ClientConfigError';
  constructor(
    message: string,
    /** 'usage': fix the invocation; 'refused': a guard refused (a key of the other environment). */
    readonly reason: 'usage' | 'refused' = 'usage',
  ) {
    super(message);
  }
}

/** A short, stable, one-way name for a key: the first 16 hex digits of a salted SHA-256. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update('payout-batch key fingerprint v1\0').update(key).digest('hex').slice(0, 16);
}

export type KeySource = 'environment' | 'key-file' | 'option' | 'local-sandbox-seed';

export class ApiKey {
  readonly #value: string;
  /** The key's forms to scrub from text (secrets.ts). */
  readonly #forms: SecretMatcher | undefined;
  readonly fingerprint: string;
  /** The environment the key is labelled for, where the tool can tell; undefined when it cannot. */
  readonly environment: KeyEnvironment | undefined;
  readonly source: KeySource;
  /** Where the label came from, for messages. */
  readonly labelSource: string | undefined;

  constructor(value: string, options: { source?: KeySource; environment?: KeyEnvironment; labelSource?: string } = {}) {
    const v = value.trim();
    if (!v) throw new ClientConfigError('the API key is empty');
    // A header value: visible ASCII only. The message never repeats the key.
    if (!/^[\x21-\x7e]+$/.test(v)) {
      throw new ClientConfigError('the API key contains spaces or characters that cannot travel in an HTTP header');
    }
    this.#value = v;
    this.#forms = secretMatcher(v);
    this.fingerprint = keyFingerprint(v);
    const fromPrefix = environmentFromKeyPrefix(v);
    if (options.environment && fromPrefix && options.environment !== fromPrefix) {
      throw new ClientConfigError(
        `the key is labelled ${options.environment} (${options.labelSource ?? 'label'}) but looks like a ${fromPrefix} key`,
        'refused',
      );
    }
    this.environment = options.environment ?? fromPrefix;
    this.labelSource = options.environment ? options.labelSource : fromPrefix ? 'the key prefix' : undefined;
    this.source = options.source ?? 'option';
  }

  /** The secret itself: only the transport calls this, to set the x-api-key header. */
  reveal(): string {
    return this.#value;
  }

  /** The text with the key removed: any 12 characters of it, in any case or encoding (secrets.ts). */
  scrub(text: string): string {
    return scrubText(text, this.#forms);
  }

  /** Every string deep in a value (a parsed body) scrubbed like scrub(). */
  scrubDeep<T>(value: T): T {
    return scrubDeep(value, this.#forms);
  }

  toString(): string {
    return `ApiKey(${this.fingerprint})`;
  }
  toJSON(): string {
    return this.toString();
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * Some key formats say their environment. The spec shows none; these are the common conventions
 * (and the local sandbox's seed keys start with sk_sandbox_). Unknown shapes are not labelled.
 */
function environmentFromKeyPrefix(key: string): KeyEnvironment | undefined {
  if (/^(sk|pk|rk)_(sandbox|test|staging)_/i.test(key)) return 'sandbox';
  if (/^(sk|pk|rk)_(live|prod|production)_/i.test(key)) return 'production';
  return undefined;
}

/** A key file named like payout.production.key or sandbox-key.txt says its environment. */
function environmentFromFileName(path: string): KeyEnvironment | undefined {
  const name = basename(path).toLowerCase();
  const has = (w: string) => new RegExp(`(^|[._-])${w}([._-]|$)`).test(name);
  const sandbox = has('sandbox') || has('staging') || has('test');
  const production = has('production') || has('prod') || has('live');
  if (sandbox && !production) return 'sandbox';
  if (production && !sandbox) return 'production';
  return undefined;
}

// (The word is not quoted back: in a key file it may be the key itself, written on the wrong line.)
function parseEnvironmentWord(word: string, where: string): KeyEnvironment {
  const w = word.trim().toLowerCase();
  if (w === 'sandbox' || w === 'staging' || w === 'local') return 'sandbox';
  if (w === 'production' || w === 'prod' || w === 'live') return 'production';
  throw new ClientConfigError(`${where}: environment must be sandbox or production`);
}

/**
 * A key file (UTF-8): the key alone on one line, or `key=...` (also `apiKey`, `api_key`,
 * `PAYOUT_API_KEY`) and `environment=...` (or `env`) lines; blank and # lines are ignored. The file
 * name may carry the environment too (acme.production.key); contradicting labels are refused.
 */
export function parseKeyFile(text: string, path: string): ApiKey {
  // Messages about the file name its line numbers, never its content: any part of a line may be
  // the key (a key with "=" in it reads as a setting), and these messages end up in cron logs.
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l, i) => ({ text: l.trim(), number: i + 1 }))
    .filter((l) => l.text && !l.text.startsWith('#'));
  let key: string | undefined;
  let environment: KeyEnvironment | undefined;
  let labelSource: string | undefined;
  const where = `key file ${path}`;
  if (lines.length === 1 && !lines[0]!.text.includes('=')) {
    key = lines[0]!.text;
  } else {
    for (const { text: line, number } of lines) {
      const eq = line.indexOf('=');
      if (eq < 1) throw new ClientConfigError(`${where}, line ${number}: expected name=value lines or the key alone on one line`);
      const name = line.slice(0, eq).trim().toLowerCase();
      const value = line
        .slice(eq + 1)
        .trim()
        .replace(/^(["'])(.*)\1$/, '$2');
      if (name === 'key' || name === 'apikey' || name === 'api_key' || name === 'payout_api_key') key = value;
      else if (name === 'environment' || name === 'env') {
        environment = parseEnvironmentWord(value, `${where}, line ${number}`);
        labelSource = `${where}, line environment=`;
      } else
        throw new ClientConfigError(
          `${where}, line ${number}: unknown setting (expected key=... and environment=...; ` +
            'a key that contains "=" is written as key=THE_KEY)',
        );
    }
  }
  if (!key) throw new ClientConfigError(`${where}: no key in the file`);
  const fromName = environmentFromFileName(path);
  if (environment && fromName && environment !== fromName) {
    throw new ClientConfigError(`${where}: the file name says ${fromName} but the file says ${environment}`, 'refused');
  }
  if (!environment && fromName) {
    environment = fromName;
    labelSource = `${where} (its name)`;
  }
  return new ApiKey(key, { source: 'key-file', environment, labelSource });
}

export interface LoadKeyOptions {
  /** --key-file; PAYOUT_API_KEY_FILE when absent. */
  keyFile?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Receives advice that is not an error (a key file others can read). */
  warn?: (message: string) => void;
}

/**
 * The key, from (in order) --key-file, $PAYOUT_API_KEY_FILE, $PAYOUT_API_KEY. Undefined when none
 * is given (the local sandbox then uses its seed key).
 */
export async function loadApiKey(options: LoadKeyOptions = {}): Promise<ApiKey | undefined> {
  const env = options.env ?? process.env;
  const file = options.keyFile ?? env.PAYOUT_API_KEY_FILE;
  if (file) {
    const path = resolve(options.cwd ?? process.cwd(), file);
    let text: string;
    try {
      const st = await fs.stat(path);
      if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
        options.warn?.(`key file ${path} can be read by other users of this machine: chmod 600 it`);
      }
      text = await fs.readFile(path, 'utf8');
    } catch (e) {
      throw new ClientConfigError(`cannot read key file ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    return parseKeyFile(text, path);
  }
  const value = env.PAYOUT_API_KEY;
  if (value !== undefined && value.trim() !== '') {
    const label = env.PAYOUT_API_KEY_ENV ? parseEnvironmentWord(env.PAYOUT_API_KEY_ENV, 'PAYOUT_API_KEY_ENV') : undefined;
    return new ApiKey(value, { source: 'environment', environment: label, labelSource: label ? 'PAYOUT_API_KEY_ENV' : undefined });
  }
  return undefined;
}
