// The idempotency invariants, in process against the sandbox over real HTTP, with a fetch that
// records every initiate's key and exact body. Each test fails without its invariant.
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import type { Connection } from '../../src/client/connect.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { execute, prepareRun, runBatch, type RunOptions } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { Dec } from '../../src/money.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { KEY, allPayouts, initiates, ledgerJournals, workDir, writeBatch, retryResults } from './helpers.ts';
import { unattended } from '../ops/helpers.ts';

interface Sent {
  key: string;
  body: string;
}

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

function connection(sandbox: LocalSandbox, sent: Sent[], retry = { maxAttempts: 1 }): Connection {
  const recording: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/payouts/initiate') && init?.body) {
      const headers = new Headers(init.headers);
      sent.push({ key: headers.get('idempotency-key') ?? '', body: Buffer.from(init.body as Uint8Array).toString('utf8') });
    }
    return fetch(input, init);
  };
  const client = new PayoutClient({
    baseUrl: sandbox.url,
    apiKey: KEY,
    requestsPerSecond: 200,
    retry: { ...retry, baseDelayMs: 5, maxDelayMs: 20 },
    fetch: recording,
  });
  return {
    client,
    environment: { name: 'custom', keyClass: 'sandbox', baseUrl: sandbox.url },
    usage: undefined,
    sandbox: undefined,
    close: async () => {},
  };
}

const base = (conn: Connection, file: string): RunOptions => ({
  file,
  conn,
  ...unattended({ settleDelayMs: 10 }),
});

describe('I2: an unknown outcome is settled with the same key and the same bytes', () => {
  it('a dropped connection after create (no client retries): one payout, settled by resending the journalled key and body', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null, faults: { dropAfterCreate: 1, routes: ['initiate'] } });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 1, documentsEvery: 1, currencies: ['GBP'] });
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    const first = await runBatch(base(conn, file));
    expect(first.kind).toBe('halted'); // the service looked unreachable: stop, resume is safe
    expect([...first.outcomes.values()][0]!.status).toBe('UNKNOWN_OUTCOME');
    expect(await allPayouts(sb)).toHaveLength(1); // it was created all the same

    sb.setFaults({});
    const second = await runBatch(base(conn, file));
    expect(second.kind).toBe('ok');
    expect([...second.outcomes.values()][0]!.status).toBe('PENDING');
    expect(await allPayouts(sb)).toHaveLength(1);
    expect(sent.length).toBe(2);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    expect(sent[1]!.body).toBe(sent[0]!.body); // byte-identical, not re-serialised, no new document URL
    expect(sent[0]!.key).toMatch(/-1$/);
    // The document was uploaded once and its URL reused.
    expect(sb.requestLog().filter((r) => r.route === 'uploadUrl')).toHaveLength(1);
  });

  it('a 5xx after create (no client retries): the run stops, the next resends the same key and bytes, one payout each', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null, faults: { errorAfterCreate: 1, routes: ['initiate'] } });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['EUR'] });
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    const first = await runBatch(base(conn, file));
    expect(first.kind).toBe('halted'); // the service is not working now: stop, resume is safe
    expect(await allPayouts(sb)).toHaveLength(sent.length); // created all the same

    // (the sandbox answers a replay with the original payout: its fault hits creation only)
    const r = await runBatch(base(conn, file));
    expect(r.kind).toBe('ok');
    expect([...r.outcomes.values()].map((o) => o.status)).toEqual(['PENDING', 'PENDING']);
    expect(await allPayouts(sb)).toHaveLength(2);
    expect(new Set(sent.map((s) => s.key)).size).toBe(2);
    for (const key of new Set(sent.map((s) => s.key))) {
      const mine = sent.filter((s) => s.key === key);
      expect(mine.length).toBeLessThanOrEqual(2);
      expect(new Set(mine.map((s) => s.body)).size).toBe(1);
    }
  });

  it('a service answering 5xx to every initiate: the run stops after the rows in flight, none resent beyond the client retries', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null, faults: { errorBeforeEffect: 1, routes: ['initiate'] } });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 12, currencies: ['GBP'] });
    const sent: Sent[] = [];
    const conn = connection(sb, sent, { maxAttempts: 2 });
    const first = await runBatch({ ...base(conn, file), ...unattended({ settleDelayMs: 10, concurrency: 2 }) });
    // (before: every row sent, then twice more in the settle passes, 6 requests a row, and exit 1 "fix the rows")
    expect(first.kind).toBe('halted');
    const keys = new Set(sent.map((s) => s.key));
    expect(keys.size).toBeLessThan(12);
    for (const key of keys) expect(sent.filter((s) => s.key === key)).toHaveLength(2);
    expect(await allPayouts(sb)).toHaveLength(0);

    sb.setFaults({});
    const second = await runBatch(base(conn, file));
    expect(second.kind).toBe('ok');
    expect(await allPayouts(sb)).toHaveLength(12);
  });

  it('a crash between the journalled "initiating" and the answer: the resumed run resends that exact body, one payout', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 3, currencies: ['NGN'] });
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    await runBatch({ ...base(conn, file), ...unattended({ settleDelayMs: 10, concurrency: 1 }) });
    expect(await allPayouts(sb)).toHaveLength(3);
    // Cut the journal back to just after the last 'initiating' line: the process "died" there,
    // after the request left (the sandbox has the payout) and before the answer was written.
    const journal = ledgerJournals()[0]!;
    const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    const lastInitiating = lines.map((l) => JSON.parse(l).t).lastIndexOf('initiating');
    writeFileSync(journal, lines.slice(0, lastInitiating + 1).join('\n') + '\n{"t":"crea'); // and a torn line
    const stored = JSON.parse(lines[lastInitiating]!);

    const resumed = await runBatch(base(conn, file));
    expect(resumed.report).toMatchObject({ resumed: true, interrupted: true, created: 2, toSettle: 1, skippedLines: 1 });
    expect(resumed.kind).toBe('ok');
    expect(await allPayouts(sb)).toHaveLength(3);
    const last = sent[sent.length - 1]!;
    expect(last).toEqual({ key: stored.key, body: stored.body });
    expect(sent).toHaveLength(4);
  });
});

describe('I5: 409 IDEMPOTENCY_KEY_CONFLICT', () => {
  it('is reported as CONFLICT and never resent, not even on the next run', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['USD'] });
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    const batch = await loadBatch(file);
    const row = batch.rows.at(0)!.payout!;
    const key = idempotencyKey(row.reference, 1);
    // Someone used the row's key with another body (another amount).
    await conn.client.initiate(initiateBody({ ...row, sourceAmount: row.sourceAmount.plus(1) }), { idempotencyKey: key });

    const first = await runBatch(base(conn, file));
    expect(first.kind).toBe('rows-failed');
    const statuses = [...first.outcomes.values()].map((o) => o.status);
    expect(statuses).toEqual(['CONFLICT', 'PENDING']);
    expect(first.outcomes.get(batch.rows.at(0)!.rowNumber)!.error?.code).toBe('IDEMPOTENCY_KEY_CONFLICT');
    const again = await runBatch(base(conn, file));
    expect([...again.outcomes.values()].map((o) => o.status)).toEqual(['CONFLICT', 'PENDING']);
    // The batch sent the conflicting key once, and no other key for that row.
    expect(sent.filter((s) => s.key === key)).toHaveLength(2); // ours above + the run's one try
    expect(sent.filter((s) => s.key.startsWith(key.slice(0, key.lastIndexOf('-'))) && s.key !== key)).toHaveLength(0);
    expect(sent.filter((s) => s.key.endsWith('-2'))).toHaveLength(0);
    expect(await allPayouts(sb)).toHaveLength(2); // ours + the second row
  });
});

describe('I3: a row the service refused, edited in the results file, is sent again once, a new key only once the old is spent', () => {
  // (issue 39) A service that stores nothing for a refusal pays the edited row under its refused
  // key 1, which an older copy's key 1 can then never pay again; one that stores refusals answers
  // the edited body 409 and the refused body its refusal again: key 1 is spent, attempt 2 goes.
  it.each([
    ['stores no refusal', false, '-1'],
    ['stores refusals', true, '-2'],
  ])(
    'INSUFFICIENT_FUNDS -> edit the amount -> retry creates it (a service that %s); created rows untouched',
    async (_r, storeRefusals, suffix) => {
      sb = await startSandbox({ rateLimitPerSecond: null, storeRefusals });
      const dir = await workDir();
      const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['GBP'] });
      const sent: Sent[] = [];
      const conn = connection(sb, sent);
      // Between the preflight (balance fine) and the first payout, the GBP wallet is emptied.
      const prepared = await prepareRun({
        ...base(conn, file),
        ...unattended({ settleDelayMs: 10 }, { yes: false, interactive: true }),
      });
      expect(prepared.confirm).toBe(true);
      const w = (await conn.client.listWallets()).data.find((x) => x.currency === 'GBP')!;
      const row = (await loadBatch(file)).rows.at(0)!.payout!;
      const drain = await conn.client.initiate(initiateBody({ ...row, sourceAmount: new Dec(w.balance!).minus(5).floor() }), {
        idempotencyKey: 'test-drain-1',
      });
      const drainId = drain.payout.id;
      const first = await execute(prepared, { confirmed: true });
      expect(first.kind).toBe('rows-failed');
      const firstStatuses = [...first.outcomes.values()].map((o) => [o.status, o.error?.code]);
      expect(firstStatuses.filter(([s]) => s === 'FAILED_TO_SEND').length).toBeGreaterThanOrEqual(1);
      expect(firstStatuses.every(([s, c]) => s === 'PENDING' || c === 'INSUFFICIENT_FUNDS')).toBe(true);

      // Edit: the refused rows get a smaller amount; the drain is refunded.
      await fetch(`${sb.url}/_sandbox/payouts/${drainId}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'REJECTED' }),
      });
      const table = await readResults(first.resultsPath);
      const refused = table.rows.filter((r) => r.result.status === 'FAILED_TO_SEND');
      for (const r of refused) r.cells.sourceAmount = '1.23';
      const createdBefore = table.rows.filter((r) => r.result.status === 'PENDING').map((r) => ({ ...r.result }));
      await writeResults(first.resultsPath, table);
      const payoutsBefore = (await allPayouts(sb)).length;

      const retried = await retryResults({ ...base(conn, file), resultsFile: first.resultsPath });
      expect(retried.kind).toBe('ok');
      expect(retried.resultsPath).toMatch(/batch\.results\.retry-1\.csv$/);
      expect(await allPayouts(sb)).toHaveLength(payoutsBefore + refused.length);
      const after = await readResults(retried.resultsPath);
      for (const r of refused) {
        const row = after.rows.find((x) => x.rowNumber === r.rowNumber)!;
        expect(row.result.status).toBe('PENDING');
        expect(row.result.idempotencyKey!.endsWith(suffix)).toBe(true);
        expect(row.result.totalDeductible).not.toBe('');
        const forRow = sent.filter((s) => s.key === row.result.idempotencyKey && JSON.parse(s.body).sourceAmount === 1.23);
        expect(forRow).toHaveLength(1);
      }
      const keptNow = after.rows.filter((r) => !refused.some((x) => x.rowNumber === r.rowNumber)).map((r) => r.result);
      expect(keptNow).toEqual(createdBefore);
      // Retrying the new results again sends nothing.
      const n = initiates(sb).length;
      const again = await retryResults({ ...base(conn, file), resultsFile: retried.resultsPath });
      expect(again.kind).toBe('ok');
      expect(initiates(sb).length).toBe(n);
      expect(await readFile(join(dir, 'batch.csv'), 'utf8')).toContain('GEN-0001');
    },
  );
});

describe('retry never changes a row silently', () => {
  it('rows not edited since the batch judged them invalid keep their verdict (a spilled-over cell, a probable duplicate): nothing sent', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['USD'] });
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const cells = lines[1]!.split(',');
    // Row 4: "1,234.56" without quotes spilled into an extra cell; row 5: the same payment as row 2.
    const spilled = [...cells];
    spilled[0] = 'GEN-SPILL';
    spilled[1] = '1';
    const dup = [...cells];
    dup[0] = 'GEN-DUP';
    writeFileSync(file, [...lines, `${spilled.join(',')},234.56`, dup.join(',')].join('\n') + '\n');
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    const first = await runBatch(base(conn, file));
    expect([...first.outcomes.values()].map((o) => [o.status, o.error?.code])).toEqual([
      ['PENDING', undefined],
      ['PENDING', undefined],
      ['INVALID', 'EXTRA_CELLS'],
      ['INVALID', 'PROBABLE_DUPLICATE'],
    ]);
    const n = sent.length;
    const retried = await retryResults({ ...base(conn, file), resultsFile: first.resultsPath });
    expect(sent.length).toBe(n);
    expect([...retried.outcomes.values()].map((o) => o.error?.code ?? o.status)).toEqual([
      'PENDING',
      'PENDING',
      'EXTRA_CELLS',
      'PROBABLE_DUPLICATE',
    ]);
    // Edited (the amount fixed, the duplicate given its own amount): now they go.
    const table = await readResults(first.resultsPath);
    table.rows[2]!.cells.sourceAmount = '1234.56';
    table.rows[3]!.cells.sourceAmount = '77.00';
    await writeResults(first.resultsPath, table);
    const fixed = await retryResults({
      ...base(conn, file),
      resultsFile: first.resultsPath,
      resultsPath: join(dir, 'fixed.results.csv'),
    });
    expect(fixed.kind).toBe('ok');
    expect(sent.slice(n).map((s) => JSON.parse(s.body).sourceAmount)).toEqual(expect.arrayContaining([1234.56, 77]));
    expect(await allPayouts(sb)).toHaveLength(4);
  });

  it('a row edited into the same payment as a created row is refused as a probable duplicate: nothing sent', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['USD'] });
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const refused = lines[2]!.split(',');
    refused[1] = 'twelve'; // row 3 refused offline (its amount), row 2 paid
    lines[2] = refused.join(',');
    writeFileSync(file, lines.join('\n') + '\n');
    const sent: Sent[] = [];
    const conn = connection(sb, sent);
    const first = await runBatch(base(conn, file));
    expect([...first.outcomes.values()].map((o) => o.status)).toEqual(['PENDING', 'INVALID']);
    // "Fixed" by copying row 2's cells under a new reference: the same payment twice.
    const table = await readResults(first.resultsPath);
    table.rows[1]!.cells = { ...table.rows[0]!.cells, reference: 'GEN-AGAIN' };
    await writeResults(first.resultsPath, table);
    const n = sent.length;
    const retried = await retryResults({ ...base(conn, file), resultsFile: first.resultsPath });
    expect(sent.length).toBe(n);
    expect([...retried.outcomes.values()].map((o) => o.error?.code ?? o.status)).toEqual(['PENDING', 'PROBABLE_DUPLICATE']);
  });
});
