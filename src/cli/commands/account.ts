// `payout-batch account`: what this key can see: the business's wallets, its enabled currency
// pairs and the key's monthly quota as counted on this machine. A thin layer over the client.
import { createLogger } from '../../log.ts';
import { formatAmount, fromApi } from '../../money.ts';
import { defineCommand, UsageError, type CliIO } from '../command.ts';
import { embeddedSandboxOptions } from '../sandbox-shapes.ts';
import { ExitCode } from '../exit-codes.ts';
import { ClientConfigError } from '../../client/api-key.ts';
import { connect, type Connection } from '../../client/connect.ts';
import { ENVIRONMENTS } from '../../client/environment.ts';
import { PayoutApiError } from '../../client/errors.ts';
import { defaultStateDir } from '../../client/quota.ts';
import type { CurrencyPairAnswer, WalletAnswer } from '../../client/answers.ts';

interface AccountArgs {
  env?: string;
  'base-url'?: string;
  'gateway-host'?: string;
  'key-file'?: string;
  json: boolean;
  'log-level'?: string;
  'api-key'?: unknown;
}

export default defineCommand<AccountArgs>({
  builder: (y) =>
    y
      .option('env', {
        type: 'string',
        choices: ENVIRONMENTS as unknown as string[],
        describe: 'local (embedded sandbox), sandbox or production; default $PAYOUT_ENV, else sandbox. Never production unless named.',
      })
      .option('base-url', { type: 'string', describe: 'Talk to this server instead ($PAYOUT_BASE_URL)' })
      .option('gateway-host', {
        type: 'string',
        describe: 'Production gateway host, e.g. gateway.example.com ($PAYOUT_GATEWAY_HOST); the sandbox host is derived',
      })
      .option('key-file', { type: 'string', describe: 'Read the API key from this file ($PAYOUT_API_KEY_FILE); else $PAYOUT_API_KEY' })
      .option('json', { type: 'boolean', default: false, describe: 'Print one JSON object' })
      .option('log-level', { type: 'string', describe: 'JSON logs on stderr at this level ($PAYOUT_BATCH_LOG_LEVEL; default warn)' })
      // Present only to refuse it without echoing its value: a key on the command line shows in `ps`.
      .option('api-key', { hidden: true }),
  run: async (args, io) => {
    if (args['api-key'] !== undefined) {
      throw new UsageError(
        'the API key is never taken from the command line (other users see it in ps): set PAYOUT_API_KEY or use --key-file',
      );
    }
    const logger = createLogger({ level: args['log-level'] ?? io.env.PAYOUT_BATCH_LOG_LEVEL ?? 'warn', bindings: { command: 'account' } });
    const sandbox = embeddedSandboxOptions(io.env);
    let conn: Connection;
    try {
      conn = await connect({
        env: args.env,
        baseUrl: args['base-url'],
        gatewayHost: args['gateway-host'],
        keyFile: args['key-file'],
        vars: io.env,
        cwd: io.cwd,
        stateDir: defaultStateDir(io.env),
        logger,
        sandbox,
      });
    } catch (e) {
      if (e instanceof ClientConfigError)
        throw new UsageError(e.message, e.reason === 'refused' ? ExitCode.REFUSED : ExitCode.UNUSABLE_INPUT);
      throw e;
    }
    try {
      return await show(conn, args, io, logger);
    } finally {
      await conn.close().catch(() => undefined);
    }
  },
});

async function show(conn: Connection, args: AccountArgs, io: CliIO, logger: ReturnType<typeof createLogger>): Promise<ExitCode> {
  const { client, environment } = conn;
  logger.debug({ environment: environment.name, baseUrl: environment.baseUrl, apiKey: client.apiKey }, 'account: connected');
  let wallets: WalletAnswer[];
  let pairs: CurrencyPairAnswer[];
  let pairsNote: string | undefined;
  try {
    wallets = (await client.listWallets()).data;
    try {
      pairs = (await client.listPairs()).data;
    } catch (e) {
      // Spec §4.9: the pairs route answers 400 when no pair is enabled.
      if (!(e instanceof PayoutApiError) || e.status !== 400) throw e;
      pairs = [];
      pairsNote = `no pair is enabled (${e.code ?? 'the service answered 400'})`;
    }
  } catch (e) {
    if (e instanceof PayoutApiError) {
      logger.error({ err: e.toJSON() }, 'account: request failed');
      io.stderr.write(`payout-batch: ${e.message}\n`);
      return ExitCode.SERVICE_UNAVAILABLE;
    }
    throw e;
  }
  await conn.usage?.flush().catch(() => undefined);
  const quota = await client.quotaUsage();

  if (args.json) {
    io.stdout.write(
      JSON.stringify(
        {
          environment: environment.name,
          baseUrl: environment.baseUrl,
          key: { fingerprint: client.apiKey.fingerprint, source: client.apiKey.source },
          // money as decimal strings with the currency's digits, as everywhere in --json; null: not given
          wallets: wallets.map((w) => ({
            ...w,
            balance: w.balance === undefined ? null : formatAmount(fromApi(w.balance), w.currency),
          })),
          pairs: pairs.map((p) => ({ ...p, rate: p.rate === undefined ? null : String(p.rate) })),
          quota: quota ? { ...quota, countedHere: true, file: conn.usage?.path } : null,
        },
        null,
        2,
      ) + '\n',
    );
    return ExitCode.OK;
  }

  const lines: string[] = [];
  lines.push(`Environment  ${environment.name}  ${environment.baseUrl}`);
  lines.push(`API key      fingerprint ${client.apiKey.fingerprint} (from ${client.apiKey.source})`);
  lines.push('', 'Wallets');
  if (!wallets.length) lines.push('  (none)');
  for (const w of [...wallets].sort((a, b) => a.currency.localeCompare(b.currency))) {
    const balance = w.balance === undefined ? 'balance not shown' : formatAmount(fromApi(w.balance), w.currency);
    lines.push(`  ${w.currency}  ${balance.padStart(20)}  ${w.walletId}`);
  }
  lines.push('', 'Enabled currency pairs');
  if (!pairs.length) lines.push(`  (${pairsNote ?? 'none'})`);
  for (const p of pairs)
    lines.push(
      `  ${p.baseCurrency}/${p.quoteCurrency}  ${String(p.rate ?? 'no rate').padStart(12)}  ${p.currencyPairId ?? '(no id given)'}`,
    );
  if (quota) {
    const fmt = (n: number) => n.toLocaleString('en-US');
    lines.push(
      '',
      `Quota        ${fmt(quota.used)} of ${fmt(quota.quota)} requests used in ${quota.month} (UTC), as counted on this machine`,
    );
    lines.push(`             (requests from other machines or tools are not in this count; file ${conn.usage?.path})`);
  }
  io.stdout.write(lines.join('\n') + '\n');
  return ExitCode.OK;
}
