// The API key, held in an object that prints as its fingerprint, so an accidental log line, error or
// JSON.stringify shows no secret; and its removal from text from outside: a service or gateway may
// echo it in any case, encoded, cut short or inside a longer encoded text (every answer, http.ts).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { inspect } from 'node:util';
import { namesNoFile } from '../mask.ts';

/** Local runs count as sandbox. */
export type KeyEnvironment = 'production' | 'sandbox';

/** A problem with the key, environment or host: nothing was sent. */
export class ClientConfigError extends Error {
  override readonly name = 'ClientConfigError';
  constructor(
    message: string,
    /** 'refused': a guard refused (a key of the other environment). */
    readonly reason: 'usage' | 'refused' = 'usage',
  ) {
    super(message);
  }
}

/** A short, stable, one-way name for a key. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update('payout-batch key fingerprint v1\0').update(key).digest('hex').slice(0, 16);
}

const MAX_KEY_LENGTH = 1024;

export type KeySource = 'environment' | 'key-file' | 'option' | 'local-sandbox-seed';

export class ApiKey {
  readonly #value: string;
  readonly #forms: SecretMatcher | undefined;
  readonly fingerprint: string;
  /** Where the tool can tell. */
  readonly environment: KeyEnvironment | undefined;
  readonly source: KeySource;
  /** For messages. */
  readonly labelSource: string | undefined;

  constructor(value: string, options: { source?: KeySource; environment?: KeyEnvironment; labelSource?: string; from?: string } = {}) {
    const v = value.trim();
    // one header value of visible ASCII of a sane length (the spec shows no format; 8 MB drew a 431); the message never quotes the key
    const wrong = !v
      ? 'is empty'
      : v.length > MAX_KEY_LENGTH
        ? `is over ${MAX_KEY_LENGTH} characters long`
        : /^[\x21-\x7e]+$/.test(v)
          ? undefined
          : 'contains spaces, control or non-ASCII characters, which cannot travel in an HTTP header';
    if (wrong) {
      const what = options.from ? `${options.from}: the key` : 'the API key';
      throw new ClientConfigError(`${what} ${wrong} (an API key is one word of at most ${MAX_KEY_LENGTH} visible ASCII characters)`);
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

  /** Only the transport calls this, for the x-api-key header. */
  reveal(): string {
    return this.#value;
  }

  scrub(text: string): string {
    return scrubText(text, this.#forms);
  }

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

const ENVIRONMENT_WORDS = { sandbox: 'sandbox|staging|test', production: 'production|prod|live' };

/** The one environment whose words `pattern` finds in `text`; undefined for none or both. */
function environmentIn(text: string, pattern: (words: string) => string): KeyEnvironment | undefined {
  const found = (['sandbox', 'production'] as const).filter((env) => new RegExp(pattern(ENVIRONMENT_WORDS[env]), 'i').test(text));
  return found.length === 1 ? found[0] : undefined;
}

/** The spec shows no key format: these are common conventions (the local sandbox's seed keys are sk_sandbox_). */
const environmentFromKeyPrefix = (key: string) => environmentIn(key, (words) => `^(sk|pk|rk)_(${words})_`);

/** A key's prefix, a webhook secret's (spec §6), a PEM or base64 line of 40+ characters: a word never quoted back (src/cli/main.ts). */
export const looksLikeSecret = (word: string): boolean =>
  environmentFromKeyPrefix(word) !== undefined || /^whsec_|^[A-Za-z0-9+/_-]{40,}={0,2}$/.test(word);

/** payout.production.key, sandbox-key.txt */
const environmentFromFileName = (path: string) => environmentIn(basename(path), (words) => `(^|[._-])(${words})([._-]|$)`);

// (The word is not quoted back: in a key file it may be the key itself, written on the wrong line.)
function parseEnvironmentWord(word: string, where: string): KeyEnvironment {
  const w = word.trim().toLowerCase();
  if (w === 'sandbox' || w === 'staging' || w === 'local') return 'sandbox';
  if (w === 'production' || w === 'prod' || w === 'live') return 'production';
  throw new ClientConfigError(`${where}: environment must be sandbox or production`);
}

/** The key alone on one line, or `key=...` and `environment=...` lines; # comments. Contradicting labels are refused. */
export function parseKeyFile(text: string, path: string): ApiKey {
  // Messages name line numbers, never content: any part of a line may be the key, and they end up in cron logs.
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l, i) => ({ text: l.trim(), number: i + 1 }))
    .filter((l) => l.text && !l.text.startsWith('#'));
  let key: string | undefined;
  let environment: KeyEnvironment | undefined;
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
      else if (name === 'environment' || name === 'env') environment = parseEnvironmentWord(value, `${where}, line ${number}`);
      else
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
  // (ApiKey reads labelSource only with an environment)
  const labelSource = environment ? `${where}, line environment=` : `${where} (its name)`;
  return new ApiKey(key, { source: 'key-file', environment: environment ?? fromName, labelSource, from: where });
}

export interface LoadKeyOptions {
  keyFile?: string;
  env: NodeJS.ProcessEnv;
  /** The folder a relative key file is read in (the CLI's io.cwd), never the process's. */
  cwd: string;
  /** Advice that is not an error (a key file others can read). */
  warn?: (message: string) => void;
}

/** From --key-file, $PAYOUT_API_KEY_FILE, $PAYOUT_API_KEY, in that order; never the command line (`ps` shows it). */
export async function loadApiKey(options: LoadKeyOptions): Promise<ApiKey | undefined> {
  const { env, cwd } = options;
  const file = options.keyFile ?? env.PAYOUT_API_KEY_FILE;
  if (file) {
    const path = resolve(cwd, file);
    let text: string;
    try {
      if (process.platform !== 'win32' && ((await fs.stat(path)).mode & 0o077) !== 0) {
        options.warn?.(`key file ${path} can be read by other users of this machine: chmod 600 it`);
      }
      text = await fs.readFile(path, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      // (a name that is no file may be the key itself, given where its file's path goes: never quoted, nor sent in an alert)
      const named = namesNoFile(code)
        ? `named by ${options.keyFile ? "--key-file (or a watch's keyFile)" : '$PAYOUT_API_KEY_FILE'}${isAbsolute(file) ? '' : ` in ${cwd}`} (the key itself goes in $PAYOUT_API_KEY)`
        : path;
      throw new ClientConfigError(`cannot read key file ${named}: ${code}`);
    }
    return parseKeyFile(text, path);
  }
  const value = env.PAYOUT_API_KEY;
  if (value !== undefined && value.trim() !== '') {
    const label = env.PAYOUT_API_KEY_ENV ? parseEnvironmentWord(env.PAYOUT_API_KEY_ENV, 'PAYOUT_API_KEY_ENV') : undefined;
    return new ApiKey(value, { source: 'environment', environment: label, labelSource: 'PAYOUT_API_KEY_ENV', from: '$PAYOUT_API_KEY' });
  }
  return undefined;
}

export const REDACTED = '[redacted]';

/** Fewer characters of a form could be an ordinary word; a shorter form counts whole. */
const MIN_RUN = 12;

/** base64 of the secret starting `offset` bytes into a group of three ("key=" + key): only the characters of its own bits. */
function base64At(secret: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const text = Buffer.concat([Buffer.alloc(offset), secret]).toString(encoding);
  return text.replace(/=+$/, '').slice(Math.ceil((offset * 8) / 6));
}

/** Compared without case; any MIN_RUN characters of one also cover a key cut short or without its prefix. %XX, \u, \/, &#: `undisguised`. */
const FORMS: ((secret: Buffer) => string)[] = [
  (s) => s.toString('utf8'),
  (s) => s.toString('hex'),
  ...[0, 1, 2].flatMap((offset) => [(s: Buffer) => base64At(s, offset, 'base64'), (s: Buffer) => base64At(s, offset, 'base64url')]),
];

/** Keeps the string's length (the forms are ASCII). */
const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

/** The forms' runs of MIN_RUN characters (or whole, when shorter), by length: built once per key. */
export type SecretMatcher = ReadonlyMap<number, ReadonlySet<string>>;

/** Undefined for a secret too short to look for without mangling ordinary words. */
export function secretMatcher(secret: string | undefined): SecretMatcher | undefined {
  if (!secret || secret.length < 4) return undefined;
  const runs = new Map<number, Set<string>>();
  for (const form of FORMS.map((f) => lowerAscii(f(Buffer.from(secret, 'utf8'))))) {
    const width = Math.min(MIN_RUN, form.length);
    const set = runs.get(width) ?? runs.set(width, new Set()).get(width)!;
    for (let i = 0; i + width <= form.length; i++) set.add(form.slice(i, i + width));
  }
  return runs;
}

const HIDDEN = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/;
// (\/ \" \\: JSON quoted as text; &#x2F; &#47;: HTML. Either breaks every run of a key with a "/" every few characters.)
const ESCAPE = /%([0-9a-f]{2})|\\u([0-9a-f]{4})|\\([/"\\])|&#x([0-9a-f]{1,4});|&#(\d{1,5});/iy;

/** %XX, \uXXXX, \/ and &#x2F; decoded, invisible characters dropped; each character with the span of the text it came from. */
function undisguised(text: string): { view: string; start: number[]; end: number[] } {
  let view = '';
  const start: number[] = [];
  const end: number[] = [];
  for (let i = 0; i < text.length;) {
    ESCAPE.lastIndex = i;
    const esc = ESCAPE.exec(text);
    const c = !esc ? text[i]! : (esc[3] ?? String.fromCharCode(esc[5] ? Number(esc[5]) : parseInt(esc[1] ?? esc[2] ?? esc[4]!, 16)));
    const next = i + (esc ? esc[0].length : 1);
    if (!HIDDEN.test(c)) {
      view += c;
      start.push(i);
      end.push(next);
    }
    i = next;
  }
  return { view, start, end };
}

/** Every character in a run of a form, as written or undisguised, replaced; each stretch by one REDACTED. */
export function scrubText(text: string, matcher: SecretMatcher | undefined): string {
  if (!matcher) return text;
  const hit = new Uint8Array(text.length);
  const mark = (s: string, start?: number[], end?: number[]) => {
    const lower = lowerAscii(s);
    for (const [width, runs] of matcher)
      for (let i = 0; i + width <= s.length; i++)
        if (runs.has(lower.slice(i, i + width))) hit.fill(1, start?.[i] ?? i, end?.[i + width - 1] ?? i + width);
  };
  mark(text);
  const u = undisguised(text);
  if (u.view !== text) mark(u.view, u.start, u.end);
  if (!hit.includes(1)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++)
    if (!hit[i]) out += text[i];
    else if (!hit[i - 1]) out += REDACTED; // one for each stretch
  return out;
}

/** Every string in a JSON value, keys included. */
export function scrubDeep<T>(value: T, matcher: SecretMatcher | undefined): T {
  if (!matcher) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v, matcher);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [scrubText(k, matcher), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
