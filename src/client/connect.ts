// From configuration to a working client: resolve the environment, load the key, refuse a key of
// the other environment, open the quota counter. The embedded sandbox of `--env local` is started
// by the caller (the CLI, the demo) and handed over as a base URL and a key: the client never
// loads the simulator.
import type { Logger } from 'pino';
import { ApiKey, ClientConfigError, loadApiKey } from './api-key.ts';
import { assertKeyFitsEnvironment, resolveEnvironment, type EnvironmentOptions, type ResolvedEnvironment } from './environment.ts';
import { PayoutClient, type PayoutClientOptions } from './client.ts';
import type { PaceShare } from './pace.ts';
import { UsageCounter, defaultStateDir, type UsageStore } from './quota.ts';
import type { SlidingWindowLimiter } from './throttle.ts';

export interface ConnectOptions extends EnvironmentOptions {
  /** --key-file; else $PAYOUT_API_KEY_FILE, else $PAYOUT_API_KEY. */
  keyFile?: string;
  /** An already loaded key (tests, embedding); wins over keyFile and the environment. */
  apiKey?: ApiKey;
  cwd?: string;
  /** The usage file's folder; defaults to quota.ts defaultStateDir(). false: count nothing. With `shared`, the count is kept there instead. */
  stateDir?: string | false;
  logger?: Logger;
  /** The service of an environment with no address of its own (`local`): required there, refused elsewhere. */
  sandbox?: EmbeddedSandbox;
  /** The key used when none is configured (`local`: the embedded sandbox's seed key, sandboxSeedKey). */
  fallbackKey?: ApiKey;
  /** The key's pace (PayoutClientOptions.limiter); absent: one for this connection. */
  limiter?: SlidingWindowLimiter;
  /** The team ledger (--ledger), opened by the caller, closed with the connection (or when it fails to open). */
  shared?: SharedStore;
  client?: Partial<Omit<PayoutClientOptions, 'baseUrl' | 'apiKey' | 'usage' | 'keyEnvironment' | 'logger' | 'limiter' | 'sharedPace'>>;
}

/** What several hosts share through one store (src/ledger/postgres.ts): a key's pace and monthly count. */
export interface SharedStore {
  /** For messages: where it is, without a password. */
  readonly where: string;
  readonly usage: UsageStore;
  pace(name: string, onError: (e: Error) => void): PaceShare;
  close(): Promise<void>;
}

/** The embedded sandbox of `--env local`, started by the caller: the connection stops it on close or when connect() fails. */
export interface EmbeddedSandbox {
  url: string;
  /** A sandbox that keeps its state between commands (the CLI's `local`) keeps its ledger under this name; absent: a temporary one (the demo). */
  account?: string;
  close(): Promise<void>;
}

/** A seed key of the embedded sandbox: not a secret, labelled sandbox. */
export const sandboxSeedKey = (value: string): ApiKey =>
  new ApiKey(value, { source: 'local-sandbox-seed', environment: 'sandbox', labelSource: 'the local sandbox seed' });

export interface Connection {
  client: PayoutClient;
  environment: ResolvedEnvironment & { baseUrl: string };
  usage: UsageCounter | undefined;
  sandbox: EmbeddedSandbox | undefined;
  shared?: SharedStore;
  /** Flushes the quota count, closes the shared store and stops the embedded sandbox. */
  close(): Promise<void>;
}

export async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const { sandbox } = options;
  try {
    const vars = options.vars ?? process.env;
    const environment = resolveEnvironment({ ...options, vars });
    // Only an environment without an address of its own (local) runs on an embedded sandbox.
    if ((environment.baseUrl === undefined) !== (sandbox !== undefined))
      throw new ClientConfigError(
        sandbox
          ? `the ${environment.name} environment has its own address: an embedded sandbox was given too`
          : `--env ${environment.name} is the embedded sandbox, and this caller started none (connect() option sandbox)`,
      );
    const baseUrl = environment.baseUrl ?? sandbox!.url;
    const { shared } = options;
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
      limiter: options.limiter,
      ...(shared ? { sharedPace: (name: string, onError: (e: Error) => void) => shared.pace(name, onError) } : {}),
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
          // (the ledger is closed even when the count could not be written to it: lost)
          await shared?.close();
          await sandbox?.close();
        }
      },
    };
  } catch (e) {
    await sandbox?.close();
    await options.shared?.close();
    throw e;
  }
}
