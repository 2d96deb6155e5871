// From configuration to a working client. The embedded sandbox of `--env local` is started by the
// caller and handed over: the client never loads the simulator.
import type { Logger } from 'pino';
import { ApiKey, ClientConfigError, loadApiKey } from './api-key.ts';
import { assertKeyFitsEnvironment, resolveEnvironment, type EnvironmentOptions, type ResolvedEnvironment } from './environment.ts';
import { PayoutClient } from './client.ts';
import type { PayoutClientOptions } from './http.ts';
import type { PaceShare } from './pace.ts';
import { UsageCounter, defaultStateDir, type UsageStore } from './quota.ts';

/** The key: given, or loaded (a key file read in `cwd`, or the variables). */
type KeySource = { apiKey: ApiKey } | { apiKey?: undefined; keyFile?: string; cwd: string };

export type ConnectOptions = EnvironmentOptions & KeySource & ConnectUse;

interface ConnectUse {
  /** false: count nothing. With `shared`, the count is kept there instead. */
  stateDir?: string | false;
  logger?: Logger;
  /** Required for `local`, refused elsewhere. */
  sandbox?: EmbeddedSandbox;
  /** When none is configured (`local`: sandboxSeedKey). */
  fallbackKey?: ApiKey;
  /** The team ledger, opened by the caller, closed with the connection (or when it fails to open). */
  shared?: SharedStore;
  client?: Partial<Omit<PayoutClientOptions, 'baseUrl' | 'apiKey' | 'usage' | 'keyEnvironment' | 'logger' | 'limiter' | 'sharedPace'>>;
}

/** A key's pace and monthly count shared by several hosts (src/ledger/postgres.ts). */
export interface SharedStore {
  /** Without a password. */
  readonly where: string;
  readonly usage: UsageStore;
  pace(name: string, onError: (e: Error) => void): PaceShare;
  /** Every line appended so far is written, or it throws (the store lost). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Stopped on close or when connect() fails. */
export interface EmbeddedSandbox {
  url: string;
  /** The ledger name of one that keeps its state between commands; absent: a temporary one (the demo). */
  account?: string;
  close(): Promise<void>;
}

/** Not a secret. */
export const sandboxSeedKey = (value: string): ApiKey =>
  new ApiKey(value, { source: 'local-sandbox-seed', environment: 'sandbox', labelSource: 'the local sandbox seed' });

export interface Connection {
  client: PayoutClient;
  environment: ResolvedEnvironment & { baseUrl: string };
  usage: UsageCounter | undefined;
  sandbox: EmbeddedSandbox | undefined;
  shared?: SharedStore;
  close(): Promise<void>;
}

export async function connect(options: ConnectOptions): Promise<Connection> {
  const { sandbox, vars, shared } = options;
  try {
    const environment = resolveEnvironment(options);
    if ((environment.baseUrl === undefined) !== (sandbox !== undefined))
      throw new ClientConfigError(
        sandbox
          ? `the ${environment.name} environment has its own address: an embedded sandbox was given too`
          : `--env ${environment.name} is the embedded sandbox, and this caller started none (connect() option sandbox)`,
      );
    const baseUrl = environment.baseUrl ?? sandbox!.url;
    const usage = shared
      ? new UsageCounter({ store: shared.usage })
      : options.stateDir === false
        ? undefined
        : new UsageCounter({ stateDir: options.stateDir ?? defaultStateDir(vars) });
    const warn = (m: string) => options.logger?.warn(m);
    const key =
      options.apiKey ?? (await loadApiKey({ keyFile: options.keyFile, env: vars, cwd: options.cwd, warn })) ?? options.fallbackKey;
    if (!key) {
      throw new ClientConfigError(
        'no API key: set PAYOUT_API_KEY, or give a key file with --key-file (or PAYOUT_API_KEY_FILE). ' +
          'The key is never taken from the command line, where other users could see it.',
      );
    }
    assertKeyFitsEnvironment(key, environment, await usage?.environmentOf(key.fingerprint));
    const client = new PayoutClient({
      ...options.client,
      ...(shared ? { sharedPace: shared.pace.bind(shared) } : {}),
      baseUrl,
      apiKey: key,
      usage,
      keyEnvironment: environment.keyClass,
      logger: options.logger,
    });
    return {
      client,
      environment: { ...environment, baseUrl },
      usage,
      sandbox,
      ...(shared ? { shared } : {}),
      async close() {
        try {
          await usage?.close();
        } finally {
          await shared?.close();
          await sandbox?.close();
        }
      },
    };
  } catch (e) {
    await sandbox?.close();
    await shared?.close();
    throw e;
  }
}
