// `attach PAYOUT_ID FILE...` against the sandbox over real HTTP: answers a FILE request, keeps the
// status rule (the service's INVALID_PAYOUT_STATUS shown plainly) and the 5-document cap. A first
// attach, and one that finds its results file by the journal, are processes as a user runs them; the
// cases about what is sent or refused run the bin's main() in this process.
import { join } from 'node:path';
import { copyFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { KEY, cleanEnv, paidBatch, runCli, runMain, sampleDoc, setStatus, startSb, workDir, writeBatch } from './helpers.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { bare } from '../shapes.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const uploads = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'uploadUrl' || r.route === 'storagePut').length;
const patches = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'patchDocuments').length;
async function payout(s: LocalSandbox, id: string) {
  const r = await fetch(`${s.url}/v1/payout-api/payouts/${id}`, { headers: { 'x-api-key': KEY } });
  return bare<{ status: string; statusDetail?: string; supportingDocuments: { url: string }[] }>(await r.json());
}

describe('payout-batch attach', () => {
  it('attaches documents to a payout that asks for them: the FILE request is answered (PENDING, under review)', async () => {
    sb = await startSb();
    const { dir, ids } = await paidBatch(sb, { rows: 1 });
    await setStatus(sb, ids[0]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    const r = await runCli(['attach', ids[0]!, sampleDoc('invoice-de-c1.pdf'), sampleDoc('invoice-eu-c1.pdf'), '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Attached 2 documents .*now has 2 of 5/);
    expect(r.stdout).toContain('They answer the request: Invoice');
    const p = await payout(sb, ids[0]!);
    expect(p).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
    expect(p.supportingDocuments).toHaveLength(2);
  });

  it('brings the results file and the journal up to date: the next retry no longer counts the rows as waiting (issue 43, 4)', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
    const env = cleanEnv();
    const conn = ['--base-url', sb.url];
    for (const id of ids)
      await setStatus(sb, id, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    const midway = await runMain(['status', results, ...conn, '--json'], { cwd: dir, env });
    expect(JSON.parse(midway.stdout).outcomes).toMatchObject({ waiting: 2 });

    // one named by its row's reference with --results (by main() in this process), the other by its
    // id alone, a process (its journal names the results file)
    const reference = (await readResults(results)).rows[0]!.cells.reference!;
    for (const [args, run] of [
      [[reference, '--results', results], runMain],
      [[ids[1]!], runCli],
    ] as const) {
      const r = await run(['attach', ...args, sampleDoc(), ...conn], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
    }
    const rows = (await readResults(results)).rows.map((r) => r.result);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
      expect(row.informationRequests).toBeUndefined();
    }
    const retry = await runMain(['retry', results, ...conn, '--yes'], { cwd: dir, env });
    expect(retry.code, retry.stderr + retry.stdout).toBe(0);
    expect(retry.stdout + retry.stderr).not.toContain('waiting for information');
  });

  it('run again with the same document under another name: already attached, nothing uploaded or PATCHed; another payout reuses its documentUrl', async () => {
    sb = await startSb();
    const { dir, ids } = await paidBatch(sb, { rows: 2 });
    const copy = join(dir, 'the same invoice.pdf');
    copyFileSync(sampleDoc(), copy);
    const attach = (id: string, file: string) => runMain(['attach', id, file, '--base-url', sb!.url], { cwd: dir, env: cleanEnv() });
    expect((await attach(ids[0]!, sampleDoc())).code).toBe(0);
    const [url] = (await payout(sb, ids[0]!)).supportingDocuments.map((d) => d.url);
    const [uploaded, patched] = [uploads(sb), patches(sb)];

    const again = await attach(ids[0]!, copy);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`${copy} is attached already (uploaded `);
    expect(again.stdout).toContain(`${url}); nothing was sent`);
    expect([uploads(sb), patches(sb)]).toEqual([uploaded, patched]);
    expect((await payout(sb, ids[0]!)).supportingDocuments).toHaveLength(1);

    const other = await attach(ids[1]!, copy);
    expect(other.code, other.stderr).toBe(0);
    expect([uploads(sb), patches(sb)]).toEqual([uploaded, patched + 1]);
    expect((await payout(sb, ids[1]!)).supportingDocuments.map((d) => d.url)).toEqual([url]);
  });

  it('a batch run with --state-dir: attach --state-dir finds its payout by reference, and runs again sending nothing', async () => {
    sb = await startSb();
    const dir = await workDir('pb-ops-');
    await writeBatch(dir, 'kept.csv', { rows: 1, prefix: 'KEPT' });
    const flags = ['--base-url', sb.url, '--state-dir', join(dir, 'kept-state')];
    const cli = (args: string[]) => runMain([...args, ...flags], { cwd: dir, env: cleanEnv() });
    const run = await cli(['run', 'kept.csv', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    const first = await cli(['attach', 'KEPT-0001', sampleDoc()]);
    expect(first.code, first.stderr).toBe(0);
    const [uploaded, patched] = [uploads(sb), patches(sb)];
    const again = await cli(['attach', 'KEPT-0001', sampleDoc()]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('is attached already');
    expect([uploads(sb), patches(sb)]).toEqual([uploaded, patched]);
  });

  /** A payout that is SUCCESSFUL (final): documents can no longer be added. */
  const successful = async (s: LocalSandbox) => {
    const { dir, ids } = await paidBatch(s, { rows: 1 });
    await setStatus(s, ids[0]!, 'PROCESSING');
    await setStatus(s, ids[0]!, 'SUCCESSFUL');
    return { dir, id: ids[0]!, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) };
  };

  it('on a SUCCESSFUL payout: refused before any upload, in the words of the service', async () => {
    sb = await startSb();
    const { dir, id, env } = await successful(sb);
    const before = uploads(sb);
    const r = await runMain(['attach', id, sampleDoc(), '--base-url', sb.url], { cwd: dir, env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      'INVALID_PAYOUT_STATUS: documents can be added only while a payout is PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING; this payout is SUCCESSFUL. Nothing was uploaded.',
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(uploads(sb)).toBe(before);
    expect(patches(sb)).toBe(0);
  });

  it("on a SUCCESSFUL payout with --force: sent, and the service's INVALID_PAYOUT_STATUS is shown plainly", async () => {
    sb = await startSb();
    const { dir, id, env } = await successful(sb);
    const forced = await runMain(['attach', id, sampleDoc(), '--base-url', sb.url, '--force'], { cwd: dir, env });
    expect(forced.code).toBe(1);
    expect(patches(sb)).toBe(1);
    expect(forced.stderr).toMatch(/^payout-batch: the service refused: INVALID_PAYOUT_STATUS: .*\(request id [0-9a-f-]{36}\)$/m);
    expect(forced.stderr).not.toMatch(/\n\s+at /);
    expect((await payout(sb, id)).supportingDocuments).toHaveLength(0);
  });

  /** A payout with one document already, and five more to add. */
  const oneDocument = async (s: LocalSandbox) => {
    const { dir, ids } = await paidBatch(s, { rows: 1, documentsEvery: 1 });
    expect((await payout(s, ids[0]!)).supportingDocuments).toHaveLength(1);
    const five = ['invoice-de-c1.pdf', 'invoice-eu-c1.pdf', 'invoice-eu-c2.pdf', 'invoice-ch-88231.pdf', 'invoice-brightline-0125.pdf'].map(
      sampleDoc,
    );
    return { dir, id: ids[0]!, five, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) };
  };

  it('refuses more than 5 documents in total before uploading', async () => {
    sb = await startSb();
    const { dir, id, five, env } = await oneDocument(sb);
    const before = uploads(sb);
    const r = await runMain(['attach', id, ...five, '--base-url', sb.url], { cwd: dir, env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('MAX_DOCUMENTS_EXCEEDED: the payout has 1 document and takes at most 5; 5 more would make 6. Pass --merge');
    expect(uploads(sb)).toBe(before);
  });

  it('--merge sends documents over the cap as one PDF', async () => {
    sb = await startSb();
    const { dir, id, five, env } = await oneDocument(sb);
    const merged = await runMain(['attach', id, ...five, '--merge', '--base-url', sb.url], { cwd: dir, env });
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain('(5 files merged into one PDF)');
    expect((await payout(sb, id)).supportingDocuments).toHaveLength(2);
  });

  it('--json: what a script reads of the same attach, the merge and the total included', async () => {
    sb = await startSb();
    const { dir, id, five, env } = await oneDocument(sb);
    const r = await runMain(['attach', id, ...five, '--merge', '--json', '--base-url', sb.url], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      exitCode: 0,
      payoutId: id,
      status: 'PENDING',
      uploaded: [expect.anything()],
      alreadyAttached: [],
      stillAsks: [],
      totalDocuments: 2,
      merged: true,
    });
  });

  it('names no payout: an id the service does not know, or a row of the results file that has none (exit 2, nothing uploaded)', async () => {
    sb = await startSb();
    const { dir, results } = await paidBatch(sb, { rows: 1 });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const table = await readResults(results);
    table.rows.push({ rowNumber: 3, cells: { ...table.rows[0]!.cells, reference: 'NEVER-SENT' }, result: { status: 'INVALID' } });
    await writeResults(results, table);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const before = uploads(sb);
    const byId = await runMain(['attach', unknown, sampleDoc(), '--base-url', sb.url], { cwd: dir, env });
    expect(byId.code, byId.stderr).toBe(2);
    expect(byId.stderr).toMatch(
      new RegExp(`PAYOUT_NOT_FOUND: no payout ${unknown} for this key's business \\(request id [0-9a-f-]{36}\\); .*--results FILE`),
    );
    const byRow = await runMain(['attach', 'NEVER-SENT', sampleDoc(), '--results', results, '--base-url', sb.url], { cwd: dir, env });
    expect(byRow.code, byRow.stderr).toBe(2);
    expect(byRow.stderr).toContain(`row 3 of ${results} (NEVER-SENT) has no payout (INVALID): there is nothing to attach to`);
    expect(uploads(sb)).toBe(before);
  });

  it('a file that is not a PDF, JPEG or PNG is a usage error (exit 2), nothing sent', async () => {
    sb = await startSb();
    const { dir, ids } = await paidBatch(sb, { rows: 1 });
    const txt = join(dir, 'note.pdf');
    writeFileSync(txt, 'just text');
    const before = sb.requestLog().length;
    const r = await runMain(['attach', ids[0]!, txt, '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a PDF, JPEG or PNG');
    expect(sb.requestLog().length).toBe(before);
  });
});
