// `status RESULTS`: refresh every payout of a results file that is not in a final status (GET
// payout through the one throttled client), and rewrite the file with status, statusDetail and
// informationRequests, forward only (spec/status-order.ts). Returns values; never prints or exits.
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import type { UsageReport } from '../client/quota.ts';
import { isServiceTrouble } from '../engine/execute.ts';
import { readResults } from '../results/index.ts';
import { isFinalStatus, PAYOUT_STATUSES, type PayoutStatus } from '../spec/codes.ts';
import { applyToResultsFile, type ApplyResult, type StatusUpdate } from './apply.ts';

export interface StatusOptions {
  client: PayoutClient;
  resultsFile: string;
  /** Where the batch's journal is (apply.ts ApplyOptions). */
  stateDirs?: string[];
  stateRoots?: string[];
  logger?: Logger;
  /** Called once before the first request: how many requests, and the key's usage as counted here. */
  onPlan?: (p: { toRefresh: number; usage?: UsageReport }) => void;
  stop?: AbortSignal;
}

export interface RowFailure {
  rowNumber: number;
  payoutId: string;
  code: string;
  message: string;
  requestId?: string;
}

export interface StatusResult {
  /** 0 refreshed; 1 some rows could not be refreshed (e.g. PAYOUT_NOT_FOUND); 4 the service was unreachable or refused the key. */
  exitCode: 0 | 1 | 4;
  rows: number;
  /** Rows with a payout not in a final status, asked about. */
  asked: number;
  /** Rows already final, not asked. */
  final: number;
  apply: ApplyResult;
  failures: RowFailure[];
  halted?: string;
  byStatus: Record<string, number>;
}

const PAYOUT_SET = new Set<string>(PAYOUT_STATUSES);

export async function refreshStatus(o: StatusOptions): Promise<StatusResult> {
  const file = resolve(o.resultsFile);
  const table = await readResults(file);
  const todo = new Map<string, number>();
  let final = 0;
  for (const row of table.rows) {
    const id = row.result.payoutId;
    const st = row.result.status ?? '';
    if (!id || !PAYOUT_SET.has(st)) continue;
    if (isFinalStatus(st as PayoutStatus)) final++;
    else if (!todo.has(id)) todo.set(id, row.rowNumber);
  }
  o.onPlan?.({ toRefresh: todo.size, usage: await o.client.quotaUsage().catch(() => undefined) });

  const updates: StatusUpdate[] = [];
  const failures: RowFailure[] = [];
  let halted: string | undefined;
  // Requests go through the client's throttle (5 per rolling second by default), all in parallel.
  await Promise.all(
    [...todo].map(async ([payoutId, rowNumber]) => {
      if (halted || o.stop?.aborted) return;
      try {
        const p = await o.client.getPayout(payoutId);
        updates.push({
          payoutId,
          status: p.status,
          statusDetail: p.statusDetail,
          informationRequests: p.informationRequests,
          at: p.updatedAt,
          source: 'get',
        });
        o.logger?.debug({ row: rowNumber, payoutId, status: p.status }, 'payout read');
      } catch (e) {
        if (!(e instanceof PayoutApiError)) throw e;
        if (isServiceTrouble(e)) {
          halted ??= e.message;
          o.logger?.error({ row: rowNumber, payoutId, requestId: e.requestId, status: e.status }, 'status refresh halted');
          return;
        }
        failures.push({ rowNumber, payoutId, code: e.code ?? `HTTP_${e.status ?? 0}`, message: e.message, requestId: e.requestId });
        o.logger?.warn({ row: rowNumber, payoutId, requestId: e.requestId, errorCode: e.code }, 'payout could not be read');
      }
    }),
  );

  // What was learnt is applied even when the refresh stopped early.
  const apply = updates.length
    ? await applyToResultsFile(file, updates, { stateDirs: o.stateDirs, stateRoots: o.stateRoots, logger: o.logger })
    : { applied: [], ignored: [], unmatched: [] };
  for (const c of apply.applied)
    o.logger?.info({ row: c.rowNumber, payoutId: c.payoutId, from: c.from, to: c.to, statusDetail: c.statusDetail }, 'status moved');
  for (const c of apply.ignored)
    if (c.decision.why === 'older')
      o.logger?.info({ row: c.rowNumber, payoutId: c.payoutId, held: c.from, answered: c.to }, 'older status ignored');

  const after = await readResults(file);
  const byStatus: Record<string, number> = {};
  for (const row of after.rows) {
    const s = row.result.status ?? '(none)';
    byStatus[s] = (byStatus[s] ?? 0) + 1;
  }
  return {
    exitCode: halted ? 4 : failures.length ? 1 : 0,
    rows: table.rows.length,
    asked: todo.size,
    final,
    apply,
    failures,
    halted,
    byStatus,
  };
}
