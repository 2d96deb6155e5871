import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { Connection } from '../client/connect.ts';
import type { MoneyTotals } from '../engine/money-totals.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { maskUrl } from '../mask.ts';
import { Dec } from '../money.ts';
import { isLoopbackHost } from '../spec/schemas.ts';

export type SignalTargets = Partial<Record<'pingUrl' | 'metricsFile' | 'notifyUrl', string>>;

const AMOUNTS = ['debited', 'refunded', 'net'] as const;
type Amounts = Pick<MoneyTotals, (typeof AMOUNTS)[number]>;

/** Each part optional: a command refused early has none. */
export interface Outcome {
  exitCode: number;
  /** Failed or needs someone: the failure ping and the alert. */
  failed: boolean;
  /** A batch file, a results file, a watch folder. */
  subject?: string;
  byStatus?: Record<string, number>;
  money?: Record<string, Amounts>;
  reasons?: string[];
  /** Added to the alert's JSON as they are. */
  details?: Record<string, unknown>;
  /** The month's requests of its key, and its scrub of the key from what is sent. */
  conn?: Pick<Connection, 'client' | 'usage'>;
}

/**
 * Why a ping or alert URL is refused before any run, else undefined: plain http to another machine would carry its
 * credentials (user:password@, a query, the path's token) and the alert's amounts in clear; the client's rule for its base URL.
 */
export function insecureSignalUrl(url: string): string | undefined {
  const u = URL.canParse(url) ? new URL(url) : undefined;
  if (u?.protocol !== 'http:' || isLoopbackHost(u.hostname)) return undefined;
  return (
    `${maskUrl(url).replace(/^(\w+:\/\/[^/?#]*)[^?#]*/, '$1/...')}: plain http:// would carry its credentials or token, and what is sent, ` +
    'unencrypted to another machine: use https:// (plain http only to this machine: localhost, 127.0.0.0/8, ::1)'
  );
}

/** Over several runs (a watch tick's files), added exactly. */
export function addUp(runs: { byStatus: Record<string, number>; money: Record<string, Amounts> }[]): Pick<Outcome, 'byStatus' | 'money'> {
  const byStatus: Record<string, number> = {};
  const money: Record<string, Amounts> = {};
  for (const r of runs) {
    for (const [s, n] of Object.entries(r.byStatus)) byStatus[s] = (byStatus[s] ?? 0) + n;
    for (const [c, m] of Object.entries(r.money))
      money[c] = Object.fromEntries(AMOUNTS.map((k) => [k, new Dec(money[c]?.[k] ?? 0).plus(m[k]).toFixed()])) as Amounts;
  }
  return { byStatus, money };
}

function alertText(command: string, o: Outcome): string {
  const rows = Object.entries(o.byStatus ?? {}).map(([s, n]) => `${n} ${s}`);
  return [
    `payout-batch ${command}${o.subject ? ` ${o.subject}` : ''} on ${hostname()}: exit ${o.exitCode}`,
    ...(rows.length ? [`rows: ${rows.join(', ')}`] : []),
    ...(o.reasons ?? []),
  ].join('\n');
}

const label = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The signals of one command: `start` at its start (and a watch's every tick), `end` with its outcome. */
export function signalsFor(targets: SignalTargets, command: string, logger: Logger) {
  let started = Date.now();

  /** `suffix` goes before the query; a failure is logged, never thrown. */
  async function post(what: string, url: string, suffix: string, body = ''): Promise<void> {
    let to = '(not a URL)';
    try {
      const u = new URL(url);
      to = u.origin;
      u.pathname = u.pathname.replace(/\/$/, '') + suffix;
      // user:password@ as Basic credentials: fetch refuses them in the URL, quoting it whole in its error
      const user = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
      const auth: Record<string, string> = user !== ':' ? { authorization: `Basic ${Buffer.from(user).toString('base64')}` } : {};
      u.username = u.password = '';
      const res = await fetch(u, {
        method: 'POST',
        body,
        headers: { 'content-type': body.startsWith('{') ? 'application/json' : 'text/plain; charset=utf-8', ...auth },
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    } catch (e) {
      logger.warn({ to, err: (e as Error).message }, `${what} not sent`);
    }
  }

  /** Replaced atomically: node_exporter reads *.prom, never a temporary file. */
  async function metrics(path: string, o: Outcome): Promise<void> {
    const now = Date.now() / 1000;
    const source = `source=${label(basename(path).replace(/\.prom$/, ''))}`;
    const lines: string[] = [];
    const metric = (name: string, help: string, rows: [string, string | number][]) => {
      lines.push(`# HELP payout_batch_${name} ${help}`, `# TYPE payout_batch_${name} gauge`);
      for (const [labels, v] of rows) lines.push(`payout_batch_${name}{${[source, labels].filter(Boolean).join(',')}} ${v}`);
    };
    try {
      const before = await readFile(path, 'utf8').catch(() => '');
      // (only its own metrics are replaced: never the batch, its results or another file the flag names by mistake)
      if (before && !before.startsWith('# HELP payout_batch_'))
        throw new Error(`${path} is not a metrics file of payout-batch: not replaced`);
      const lastSuccess = o.failed ? /^payout_batch_last_success_timestamp_seconds\{[^}]*\} (\S+)$/m.exec(before)?.[1] : now.toFixed(3);
      const usage = o.conn?.usage && (await o.conn.usage.usage(o.conn.client.apiKey.fingerprint));
      metric('exit_code', 'Exit code of the last run.', [['', o.exitCode]]);
      const rows = Object.entries(o.byStatus ?? {}).map(([s, n]): [string, number] => [`status=${label(s)}`, n]);
      metric('rows', 'Rows of the last run by status.', rows);
      metric(
        'amount',
        'Amounts of the last run by source currency: debited (amounts and fees), refunded, net.',
        Object.entries(o.money ?? {}).flatMap(([c, m]) =>
          AMOUNTS.map((k): [string, string] => [`currency=${label(c)},total="${k}"`, m[k]]),
        ),
      );
      if (usage) {
        metric('requests_used', "Requests of the key's month (UTC) as counted on this host or team ledger.", [
          [`month="${usage.month}"`, usage.used],
        ]);
        metric('requests_left', "Requests left of the key's monthly quota.", [[`month="${usage.month}"`, usage.remaining]]);
      }
      metric('duration_seconds', 'How long the last run took.', [['', ((Date.now() - started) / 1000).toFixed(3)]]);
      metric('last_run_timestamp_seconds', 'When the last run ended.', [['', now.toFixed(3)]]);
      if (lastSuccess) metric('last_success_timestamp_seconds', 'When a run last ended without failing.', [['', lastSuccess]]);
      await writeFileAtomic(path, lines.join('\n') + '\n', { mode: 0o644 });
    } catch (e) {
      logger.warn({ file: path, err: (e as Error).message }, 'metrics file not written');
    }
  }

  return {
    async start(): Promise<void> {
      started = Date.now();
      if (targets.pingUrl) await post('ping', targets.pingUrl, '/start');
    },
    async end(o: Outcome): Promise<void> {
      const scrub = <T>(v: T): T => o.conn?.client.apiKey.scrubDeep(v) ?? v;
      const text = scrub(alertText(command, o));
      const alert = { text, command, host: hostname(), exitCode: o.exitCode, rows: o.byStatus, amounts: o.money, ...o.details };
      await Promise.all([
        targets.pingUrl && post('ping', targets.pingUrl, o.failed ? `/${o.exitCode}` : '', text),
        targets.metricsFile && metrics(targets.metricsFile, o),
        targets.notifyUrl && o.failed && post('alert', targets.notifyUrl, '', JSON.stringify(scrub(alert))),
      ]);
    },
  };
}
