// Issue 44: what a run holds does not grow with the batch. Checked by what cannot flake (never a
// timing nor a heap reading): a loaded batch's rows are kept in a file, not as objects; the row loop takes rows from the plan's list only as its limit frees
// and keeps no outcome of a row it created (the journal has it), and the CSV results file is
// written a hundred rows at a time, never as one text.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PayoutClient } from '../../src/client/client.ts';
import { inFlightFor } from '../../src/cli/options.ts';
import { executeRows, type ExecuteOptions } from '../../src/engine/execute.ts';
import { batchIdentity } from '../../src/engine/identity.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { SpillList } from '../../src/files/spill.ts';
import { Dec } from '../../src/money.ts';
import { openSession } from '../../src/engine/session.ts';
import { FileLedger } from '../../src/ledger/file.ts';
import { csvChunks } from '../../src/results/csv-writer.ts';
import { csvText } from '../results/helpers.ts';
import type { ResultsSource } from '../../src/results/types.ts';
import { generateCsv, tempDirs } from './helpers.ts';

const dirs = tempDirs('pb-flat-');
afterEach(() => dirs.remove());

/** A client whose initiate creates the payout at once, counting the rows the loop had read from its list at each call. */
function creatingClient(readSoFar: () => number) {
  const seen: number[] = [];
  let n = 0;
  const client = {
    apiKey: { fingerprint: 'f' },
    initiate: async (body: string) => {
      seen.push(readSoFar());
      const b = JSON.parse(body) as { sourceAmount: number; sourceCurrency: string; destinationCurrency: string };
      await Promise.resolve();
      const payout = {
        id: `p-${++n}`,
        status: 'PENDING',
        payoutRef: `R${n}`,
        sourceAmount: b.sourceAmount,
        sourceCurrency: b.sourceCurrency,
        destinationAmount: b.sourceAmount,
        destinationCurrency: b.destinationCurrency,
        transactionFees: 1,
        exchangeRate: 1,
        createdAt: new Date(Date.now() + 60_000).toISOString(),
      };
      return { data: payout, payout, status: 201, requestId: `q-${n}`, attempts: 1 };
    },
  };
  return { client: client as unknown as PayoutClient, seen };
}

async function run(rows: number, more: Partial<ExecuteOptions> = {}) {
  const dir = await dirs.make();
  const file = join(dir, 'b.csv');
  await writeFile(file, generateCsv({ rows, prefix: `F${rows}` }));
  const payouts = (await loadBatch(file)).rows.map((r) => r.payout!);
  let read = 0; // the highest index of the list the loop has read
  const list = new Proxy(payouts, {
    get: (t, k, r) => {
      if (typeof k === 'string' && /^\d+$/.test(k)) read = Math.max(read, Number(k) + 1);
      return Reflect.get(t, k, r) as unknown;
    },
  });
  const { client, seen } = creatingClient(() => read);
  const session = await openSession({
    identity: batchIdentity('f'.repeat(64)),
    env: 'custom',
    file,
    ledger: new FileLedger('test', dir),
    command: 'run',
  });
  try {
    const res = await executeRows(list, {
      client,
      session,
      mode: 'run',
      settings: { mergeDocuments: false, concurrency: 4 },
      ...more,
    });
    return { res, seen, created: [...session.folded.rows.values()].filter((s) => s.phase === 'created').length };
  } finally {
    session.writer.close();
  }
}

describe('a run holds no object per row beyond its journal fold (issue 44)', () => {
  it('takes rows from the list as its limit frees, and keeps no outcome of a created row: the same at 50 rows as at 400', async () => {
    for (const rows of [50, 400]) {
      const { res, seen, created } = await run(rows);
      expect(created).toBe(rows);
      expect(res.created).toBe(rows);
      // (every row created: no outcome is kept beside the journal's state)
      expect(res.outcomes.size).toBe(0);
      // when the first initiate leaves, at most one row per worker has been taken from the list
      expect(seen[0]).toBeLessThanOrEqual(4);
      // and each later one finds at most a worker's row beyond those already sent
      seen.forEach((read, i) => expect(read).toBeLessThanOrEqual(i + 1 + 4));
    }
  });
});

describe("rows that wait for their wallet's swap (issue 44)", () => {
  it('wait as many at a time as the limit takes, not each row at once', async () => {
    let waiting = 0;
    let most = 0;
    const funded = async () => {
      most = Math.max(most, ++waiting);
      await Promise.resolve();
      waiting--;
      return undefined;
    };
    const { res } = await run(400, { before: { waits: () => true, funded } });
    expect(res.created).toBe(400);
    expect(most).toBeLessThanOrEqual(4);
  });
});

describe('a loaded row (issue 44)', () => {
  it('is not held by the batch: every read of it is a new copy from the batch file kept beside the run', async () => {
    const dir = await dirs.make();
    const file = join(dir, 'b.csv');
    await writeFile(file, generateCsv({ rows: 5, prefix: 'H' }));
    const { rows } = await loadBatch(file);
    expect(rows).toBeInstanceOf(SpillList);
    expect(rows.length).toBe(5);
    expect(rows.at(0)).not.toBe(rows.at(0));
    expect(rows.at(0)).toEqual(rows.at(0));
    expect(rows.at(4)!.payout!.sourceAmount).toBeInstanceOf(Dec);
  });

  it("keeps every cell as read, in one object without prototype: a header named like Object's members reads as its cell", async () => {
    const dir = await dirs.make();
    const file = join(dir, 'b.csv');
    const csv = generateCsv({ rows: 3, prefix: 'C' }).split('\n');
    csv[0] += ',constructor';
    await writeFile(file, csv.map((l, i) => (i > 0 && l ? `${l},` : l)).join('\n'));
    const { rows, inputColumns } = await loadBatch(file, { encoding: 'utf8' });
    expect(inputColumns).toContain('constructor');
    for (const r of rows) {
      expect(Object.getPrototypeOf(r.cells)).toBeNull();
      expect(Object.keys(r.cells)).toEqual(inputColumns);
      expect(r.cells.constructor).toBe('');
      expect(r.cells.reference).toBe(r.payout?.reference);
    }
  });
});

describe('the CSV results file is written in chunks (issue 44)', () => {
  const source = (rows: number): ResultsSource => ({
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount'],
    rows: Array.from({ length: rows }, (_, i) => ({ rowNumber: i + 2, cells: { reference: `R${i}`, sourceAmount: `${i}.50` } })),
    resultAt: (i) => ({ status: 'PENDING', payoutId: `p-${i}` }),
  });

  it('of at most a hundred rows each, made as they are written; joined, the same text as the whole file', () => {
    const chunks = [...csvChunks(source(250))];
    // the header, then 100 + 100 + 50 rows
    expect(chunks.map((c) => c.split('\r\n').length - 1)).toEqual([1, 100, 100, 50]);
    const table = source(250);
    const whole = csvText({ ...table, rows: table.rows.map((r, i) => ({ ...r, result: table.resultAt(i) })) });
    expect(chunks.join('')).toBe(whole);
  });
});

describe('rows in flight at a high --rate (issue 44)', () => {
  it('are as many as the rate keeps busy, at most 64: never a connection for each of a thousand rows', () => {
    expect(inFlightFor(undefined)).toBe(8);
    expect(inFlightFor(5)).toBe(8);
    expect(inFlightFor(50)).toBe(50);
    expect(inFlightFor(1000)).toBe(64);
  });
});
