// `payout-batch account`: the business's wallets, enabled currency pairs and the key's quota as counted here.
import type { Argv } from 'yargs';
import { ENVIRONMENT_MEANING } from '../render.ts';
import { formatApiAmount, groupThousands } from '../../money.ts';
import { defineCommand, flag, printJson } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { PayoutApiError } from '../../client/errors.ts';
import type { CurrencyPairAnswer } from '../../client/answers.ts';
import { connectionOptions, withConnection } from '../options.ts';
import { byText } from '../../text.ts';

const builder = (y: Argv) => connectionOptions(y).option('json', flag('Print one JSON object (money as decimal strings)'));

// (a look-up, not a batch: only warnings on stderr unless a level is asked for)
export default defineCommand(builder, (args, io) =>
  withConnection({ ...args, quiet: true }, io, 'account', async (conn, logger) => {
    const { client, environment } = conn;
    logger.debug({ environment: environment.name, baseUrl: environment.baseUrl, apiKey: client.apiKey }, 'account: connected');
    const wallets = (await client.listWallets()).data;
    let pairs: CurrencyPairAnswer[] = [];
    let pairsNote: string | undefined;
    try {
      pairs = (await client.listPairs()).data;
    } catch (e) {
      // Spec §4.9: the pairs route answers 400 when no pair is enabled.
      if (!(e instanceof PayoutApiError) || e.status !== 400) throw e;
      pairsNote = `no pair is enabled (${e.code ?? 'the service answered 400'})`;
    }
    await conn.usage?.flush().catch(() => undefined);
    const quota = await client.quotaUsage();

    if (args.json) {
      printJson(io, {
        environment: environment.name,
        baseUrl: environment.baseUrl,
        key: { fingerprint: client.apiKey.fingerprint, source: client.apiKey.source },
        // named fields only: a field the service adds may be a number, not ours to print as money
        wallets: wallets.map((w) => ({
          walletId: w.walletId,
          currency: w.currency,
          balance: w.balance === undefined ? null : formatApiAmount(w.balance, w.currency),
        })),
        pairs: pairs.map((p) => ({
          currencyPairId: p.currencyPairId ?? null,
          baseCurrency: p.baseCurrency,
          quoteCurrency: p.quoteCurrency,
          rate: p.rate === undefined ? null : String(p.rate),
          enabled: p.enabled ?? null,
        })),
        quota: quota ? { ...quota, countedHere: true, file: conn.usage?.path, ledger: conn.shared?.where } : null,
      });
      return ExitCode.OK;
    }

    const lines = [
      `Environment  ${environment.name}  ${environment.baseUrl}`,
      `             ${ENVIRONMENT_MEANING[environment.name] ?? ''}`,
      `API key      fingerprint ${client.apiKey.fingerprint} (from ${client.apiKey.source})`,
      '',
      'Wallets',
    ];
    if (!wallets.length) lines.push('  (none)');
    for (const w of [...wallets].sort((a, b) => byText(a.currency, b.currency))) {
      const balance = w.balance === undefined ? 'balance not shown' : groupThousands(formatApiAmount(w.balance, w.currency));
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
        `Quota        ${fmt(quota.used)} of ${fmt(quota.quota)} requests used in ${quota.month} (UTC), as counted ${conn.shared ? 'by every host on the team ledger' : 'on this machine'}`,
        `             (requests from other ${conn.shared ? '' : 'machines or '}tools are not in this count; ${conn.usage?.store.where})`,
      );
    }
    io.stdout.write(lines.join('\n') + '\n');
    return ExitCode.OK;
  }),
);
