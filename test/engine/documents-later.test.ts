// Later runs finish what a created row still needs (issue 15): a payout created without its extra
// documents (the PATCH failed, or a run stopped between initiate and PATCH) is DOCUMENTS_NOT_ATTACHED
// in the results until a later run or retry attaches them, each once, never past 5.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import type { Connection } from '../../src/client/connect.ts';
import { documentsToAttach, foldJournal, type RowState } from '../../src/journal/lines.ts';
import { outcomeFromState } from '../../src/engine/outcome.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { setStatus, unattended } from '../ops/helpers.ts';
import { KEY, ROOT, tempDirs, writeBatch, retryResults } from './helpers.ts';
import { writeFile, readFile } from 'node:fs/promises';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-docs-later-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 3;
const doc = (name: string) => join(ROOT, 'samples/documents', name);
/** Row i's three documents: its payslip and two invoices. */
const docsOf = (i: number) => [doc(`payslip-2025-01-UK00${i + 1}.pdf`), doc('invoice-uk-c1.pdf'), doc('invoice-uk-c2.pdf')];

/** GBP rows with three documents each. */
async function threeDocumentBatch(dir: string): Promise<string> {
  const file = await writeBatch(dir, 'payroll.csv', { rows: ROWS, currencies: ['GBP'], documentsEvery: 1, prefix: 'DOCS' });
  const lines = (await readFile(file, 'utf8')).trim().split('\n');
  const header = lines[0]!.split(',');
  const at = header.indexOf('documents');
  const out = [
    lines[0]!,
    ...lines.slice(1).map((l, i) =>
      l
        .split(',')
        .map((c, j) => (j === at ? docsOf(i).join(';') : c))
        .join(','),
    ),
  ];
  await writeFile(file, out.join('\n') + '\n');
  return file;
}

const conn = (s: LocalSandbox): Connection => ({
  // two attempts per request, short backoff: a 5xx on PATCH gives up fast and stops the run
  client: new PayoutClient({
    baseUrl: s.url,
    apiKey: KEY,
    requestsPerSecond: 500,
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
  }),
  environment: { name: 'custom', keyClass: 'sandbox', baseUrl: s.url },
  usage: undefined,
  sandbox: undefined,
  close: async () => {},
});

const routes = () => sb!.requestLog().map((x) => x.route);
const documentsAt = async (c: Connection, id: string) => (await c.client.getPayout(id)).supportingDocuments?.map((d) => d.url) ?? [];

/** A run of the three-document batch whose every PATCH fails before taking effect; `run` runs it again, faults gone. */
async function patchFailingRun() {
  const box = (sb = await startSandbox({ rateLimitPerSecond: null }));
  const file = await threeDocumentBatch(await dirs.make());
  const c = conn(box);
  const run = () => runBatch({ ...unattended({ settleDelayMs: 10, concurrency: 1 }), file, conn: c });
  box.setFaults({ errorBeforeEffect: 1, routes: ['patchDocuments'] });
  const first = await run();
  box.setFaults({});
  return { box, c, run, first };
}

describe('documents a created payout still lacks', () => {
  it('PATCH failing: DOCUMENTS_NOT_ATTACHED; the next run attaches the missing ones once; a third run sends nothing', async () => {
    const { box, c, run, first } = await patchFailingRun();
    expect(first.kind).toBe('halted'); // a 5xx after the retries stops the run (resume is safe)
    const afterFirst = await readResults(first.resultsPath);
    const created = afterFirst.rows.filter((r) => r.result.payoutId);
    expect(created.length).toBeGreaterThan(0);
    for (const r of created) {
      expect(r.result.status).toBe('PENDING');
      expect(r.result.errorCode).toBe('DOCUMENTS_NOT_ATTACHED');
      expect(await documentsAt(c, r.result.payoutId!)).toHaveLength(1);
    }

    const second = await run();
    expect(second.kind).toBe('ok');
    const results = await readResults(second.resultsPath);
    expect(results.rows).toHaveLength(ROWS);
    for (const r of results.rows) {
      expect(r.result.status).toBe('PENDING');
      expect(r.result.errorCode ?? '').toBe('');
      const urls = await documentsAt(c, r.result.payoutId!);
      expect(urls).toHaveLength(3);
      expect(new Set(urls).size).toBe(3);
    }
    // one successful PATCH per payout (the failed ones had no effect: errorBeforeEffect)
    const patched = box.requestLog().filter((x) => x.route === 'patchDocuments' && x.status === 200);
    expect(patched).toHaveLength(ROWS);

    const before = routes().length;
    expect((await run()).kind).toBe('ok');
    expect(routes().slice(before)).not.toContain('patchDocuments');
    expect(routes().slice(before)).not.toContain('getPayout');
  });

  it('attach of the missing documents: the row no longer says DOCUMENTS_NOT_ATTACHED, the next run sends nothing (found by docs-fuzz.ts)', async () => {
    const { c, run, first } = await patchFailingRun();
    const row = (await readResults(first.resultsPath)).rows.find((r) => r.result.payoutId)!;
    expect(row.result.errorCode).toBe('DOCUMENTS_NOT_ATTACHED');
    const files = docsOf(row.rowNumber - 2).slice(1);
    const o = { client: c.client, payoutId: row.result.payoutId!, resultsFile: first.resultsPath, ledgers: [ledgerOf(c)] };
    expect((await attachDocuments({ ...o, files })).totalDocuments).toBe(3);
    const after = (await readResults(first.resultsPath)).rows.find((r) => r.rowNumber === row.rowNumber)!;
    expect([after.result.status, after.result.errorCode, after.result.errorMessage]).toEqual(['PENDING', undefined, undefined]);
    const before = routes().length;
    await run();
    // (the other rows' PATCHes only)
    expect(
      routes()
        .slice(before)
        .filter((x) => x === 'patchDocuments'),
    ).toHaveLength(ROWS - 1);
  });

  it('a payout that moved since: the next run journals the status it read, then attaches what is missing', async () => {
    const { box, c, run, first } = await patchFailingRun();
    const ids = (await readResults(first.resultsPath)).rows.flatMap((r) => (r.result.payoutId ? [r.result.payoutId] : []));
    for (const id of ids) await setStatus(box, id, 'PROCESSING');
    const second = await run();
    for (const r of (await readResults(second.resultsPath)).rows.filter((x) => ids.includes(x.result.payoutId!))) {
      expect([r.result.status, r.result.errorCode ?? '']).toEqual(['PROCESSING', '']);
      expect(await documentsAt(c, r.result.payoutId!)).toHaveLength(3);
    }
  });

  it('a payout given documents elsewhere since, so that the missing ones would pass 5: no PATCH, the row says why', async () => {
    const { c, run, first } = await patchFailingRun();
    const id = (await readResults(first.resultsPath)).rows.find((r) => r.result.payoutId)!.result.payoutId!;
    const pdf = await readFile(doc('invoice-uk-c1.pdf'));
    const others = [];
    for (const x of ['a', 'b', 'c'])
      others.push((await c.client.uploadDocument({ bytes: pdf, filename: `${x}.pdf`, contentType: 'application/pdf' })).documentUrl);
    await c.client.patchDocuments(id, others);
    const before = routes().length;
    const second = await run();
    const row = (await readResults(second.resultsPath)).rows.find((r) => r.result.payoutId === id)!;
    expect([row.result.errorCode, row.result.errorMessage]).toEqual([
      'DOCUMENTS_NOT_ATTACHED',
      expect.stringMatching(new RegExp(`holds 4 documents; 2 more would pass the 5 .*: payout-batch attach ${id} FILE\\.\\.\\. --merge$`)),
    ]);
    expect(await documentsAt(c, id)).toHaveLength(4);
    expect(
      sb!
        .requestLog()
        .slice(before)
        .filter((x) => x.route === 'patchDocuments' && x.path.includes(id)),
    ).toEqual([]);
  });

  it('retry of the results file attaches them too, and reports the rows from the journal', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await dirs.make();
    const file = await threeDocumentBatch(dir);
    const c = conn(sb);
    sb.setFaults({ errorBeforeEffect: 1, routes: ['patchDocuments'] });
    const first = await runBatch({ ...unattended({ settleDelayMs: 10, concurrency: 1 }), file, conn: c });
    expect(first.kind).toBe('halted');
    sb.setFaults({});
    const r = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: first.resultsPath,
      conn: c,
    });
    expect(r.kind).toBe('ok');
    const results = await readResults(r.resultsPath);
    for (const row of results.rows) {
      expect(row.result.status).toBe('PENDING');
      expect(row.result.errorCode ?? '').toBe('');
      expect(await documentsAt(c, row.result.payoutId!)).toHaveLength(3);
    }
  });
});

describe('documentsToAttach and the results (the journal decides)', () => {
  /** Row R created (its payout `status`) after `lines`, then `after`. */
  const created = (lines: object[], status = 'PENDING', after: object[] = []): RowState =>
    foldJournal([
      { t: 'doc', sha256: 'a'.repeat(64), url: 'https://s/a' },
      { t: 'doc', sha256: 'b'.repeat(64), url: 'https://s/b' },
      ...lines,
      {
        t: 'created',
        ref: 'R',
        attempt: 1,
        key: 'k',
        requestId: 'q',
        at: '',
        payout: { id: 'p', status, sourceAmount: 1, sourceCurrency: 'GBP', destinationCurrency: 'GBP', documents: 1 },
      },
      ...after,
    ] as never).rows.get('R')!;
  const fallback = { status: 'NOT_SENT', documents: [] };

  it('a run stopped between initiate and PATCH: the attach line names what is missing, DOCUMENTS_NOT_ATTACHED', () => {
    const s = created([{ t: 'attach', ref: 'R', attempt: 1, documents: ['https://s/b'], at: '' }]);
    expect(documentsToAttach(s)).toEqual(['https://s/b']);
    expect(outcomeFromState(s, fallback).error?.code).toBe('DOCUMENTS_NOT_ATTACHED');
  });

  it('a PATCH that failed says how to finish: a later run or retry, or attach (merged, past 5); nothing for a final payout (found by docs-fuzz.ts)', () => {
    const failed = (code: string, status = 'PENDING') =>
      outcomeFromState(
        created([{ t: 'attach', ref: 'R', attempt: 1, supportingDocument: 'https://s/a', documents: ['https://s/b'], at: '' }], status, [
          { t: 'patch-failed', ref: 'R', payoutId: 'p', error: { code, message: `${code} at the service` }, at: '' },
        ]),
        fallback,
      ).error?.message;
    expect(failed('VALIDATION_ERROR')).toBe(
      'the payout exists, extra documents not attached yet: VALIDATION_ERROR at the service; the next run or retry attaches them (or payout-batch attach p FILE...)',
    );
    expect(failed('MAX_DOCUMENTS_EXCEEDED')).toBe(
      'the payout exists, extra documents not attached yet: MAX_DOCUMENTS_EXCEEDED at the service; merged into one PDF they may fit: payout-batch attach p FILE... --merge',
    );
    expect(failed('INVALID_PAYOUT_STATUS', 'SUCCESSFUL')).toBe(
      'the payout exists, extra documents not attached yet: INVALID_PAYOUT_STATUS at the service',
    );
  });

  it('nothing to attach: merged, a single document, an attach line of an earlier attempt, or patched', () => {
    expect(documentsToAttach(created([{ t: 'attach', ref: 'R', attempt: 1, documents: [], at: '' }]))).toEqual([]);
    expect(documentsToAttach(created([{ t: 'attach', ref: 'R', attempt: 0, documents: ['https://s/b'], at: '' }]))).toEqual([]);
    const s = created([{ t: 'attach', ref: 'R', attempt: 1, documents: ['https://s/b'], at: '' }]);
    s.patched = true;
    expect(documentsToAttach(s)).toEqual([]);
    expect(outcomeFromState(s, fallback).error).toBeUndefined();
  });
});
