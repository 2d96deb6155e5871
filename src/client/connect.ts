// From configuration to a working client: resolve the environment, load the key, refuse a key of
// the other environment, start the embedded sandbox for `local` (with the starter the caller
// gives: the client does not depend on the simulator), open the quota counter.
import type { Logger } from 'pino';
import type { RunningSandbox, SandboxOptions } from '../sandbox/contract.ts';
import { ApiKey, ClientConfigError, loadApiKey } from './api-key.ts';
import { assertKeyFitsEnvironment, resolveEnvironment, type EnvironmentOptions, type ResolvedEnvironment } from './environment.ts';
import { PayoutClient, type PayoutClientOptions } from './client.ts';
import { UsageCounter, defaultStateDir } from './quota.ts';
import type { SlidingWindowLimiter } from './throttle.ts';

export interface ConnectOptions extends EnvironmentOptions {
  /** --key-file; else $PAYOUT_API_KEY_FILE, else $PAYOUT_API_KEY. */
  keyFile?: string;
  /** An already loaded key (tests, embedding); wins over keyFile and the environment. */
  apiKey?: ApiKey;
  cwd?: string;
  /** The usage file's folder; defaults to quota.ts defaultStateDir(). false: count nothing. */
  stateDir?: string | false;
  logger?: Logger;
  /** Options for the embedded sandbox of `local`. */
  sandbox?: SandboxOptions;
  /**
   * Starts the embedded sandbox of `local` (src/sandbox startSandbox). Given by the caller so
   * that the client never loads the simulator itself; without it, `local` is a ClientConfigError.
   */
  startSandbox?: (options: SandboxOptions) => Promise<RunningSandbox>;
  /**
   * The key's request pace. Absent: one for this connection. Give the same limiter to connections
   * that use one key in one process and must share its pace without a state folder.
   */
  limiter?: SlidingWindowLimiter;
  client?: Partial<Omit<PayoutClientOptions, 'baseUrl' | 'apiKey' | 'usage' | 'keyEnvironment' | 'logger' | 'limiter'>>;
}

export interface Connection {
  client: PayoutClient;
  environment: ResolvedEnvironment & { baseUrl: string };
  usage: UsageCounter | undefined;
  /** The embedded sandbox of `local`. */
  sandbox: RunningSandbox | undefined;
  /** Flushes the usage file and stops the embedded sandbox. */
  close(): Promise<void>;
}

export async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const vars = options.vars ?? process.env;
  const environment = resolveEnvironment({ ...options, vars });
  const usage = options.stateDir === false ? undefined : new UsageCounter({ stateDir: options.stateDir ?? defaultStateDir(vars) });
  let key =
    options.apiKey ??
    (await loadApiKey({
      keyFile: options.keyFile,
      env: vars,
      cwd: options.cwd,
      warn: (m) => options.logger?.warn(m),
    }));

  let sandbox: RunningSandbox | undefined;
  let baseUrl = environment.baseUrl;
  if (environment.name === 'local') {
    if (!options.startSandbox)
      throw new ClientConfigError(
        '--env local runs the embedded sandbox, and this caller gave no way to start it (connect() option startSandbox)',
      );
    sandbox = await options.startSandbox(options.sandbox ?? {});
    baseUrl = sandbox.url;
    // The local sandbox's seed keys are not secrets: without a key, use the first one.
    key ??= new ApiKey(sandbox.keys[0]!.key, {
      source: 'local-sandbox-seed',
      environment: 'sandbox',
      labelSource: 'the local sandbox seed',
    });
  }
  try {
    if (!key) {
      throw new ClientConfigError(
        'no API key: set PAYOUT_API_KEY, or give a key file with --key-file (or PAYOUT_API_KEY_FILE). ' +
          'The key is never taken from the command line, where other users could see it.',
      );
    }
    assertKeyFitsEnvironment(key, environment, await usage?.environmentOf(key.fingerprint));
  } catch (e) {
    await sandbox?.close();
    throw e;
  }

  const client = new PayoutClient({
    ...options.client,
    limiter: options.limiter,
    baseUrl: baseUrl!,
    apiKey: key,
    usage,
    keyEnvironment: environment.keyClass,
    logger: options.logger,
  });
  return {
    client,
    environment: { ...environment, baseUrl: baseUrl! },
    usage,
    sandbox,
    async close() {
      try {
        await usage?.close();
      } finally {
        await sandbox?.close();
      }
    },
  };
}
