// `retry` as a user runs it (the CLI spawned against the sandbox over real HTTP): a second retry of
// the same results file writes retry-2 and leaves retry-1 as it was, and the batch's documents
// and the payouts' URLs (documentUrls) are read back apart.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-names-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('retry results names', () => {
  it('two retries of the same results file give retry-1 then retry-2, the first untouched', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['EUR'], documentsEvery: 1 });
    // one row invalid (fixed before the first retry)
    await writeFile(file, (await readFile(file, 'utf8')).replace(',EUR,EUR,', ',EURO,EUR,'));
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const cli = (...args: string[]) => runCli([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
    const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });

    // (the run sets the scene: by main() in this process)
    const first = await runMain(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(1);
    const sent = initiates(sb).length;
    expect(sent).toBe(2);
    const results = join(dir, 'payroll.results.csv');
    const text = await readFile(results, 'utf8');
    const header = text.slice(1, text.indexOf('\r\n')).split(',');
    expect(header.filter((h) => h === 'documents')).toHaveLength(1);
    expect(header).toContain('documentUrls');
    const urls = (await readResults(results)).rows.map((r) => r.result.documentUrls ?? '');
    expect(urls.filter((u) => u.startsWith('http'))).toHaveLength(2);

    // the invalid row fixed, so the first retry sends it (a retry with nothing new to say writes no file)
    await writeFile(results, text.replace(',EURO,EUR,', ',EUR,EUR,'));
    const retry1 = await cli('retry', 'payroll.results.csv', '--yes');
    expect(retry1.code, retry1.stderr).toBe(0);
    const one = join(dir, 'payroll.results.retry-1.csv');
    const oneText = await readFile(one, 'utf8');
    const read1 = await readResults(one);
    expect(read1.inputColumns.filter((h) => h === 'documents')).toHaveLength(1);
    const urls1 = read1.rows.map((r) => r.result.documentUrls ?? '');
    expect(urls1.filter((u, i) => urls[i] !== '' && u !== urls[i])).toEqual([]);
    expect(read1.rows.map((r) => r.cells.documents)).toEqual((await readResults(results)).rows.map((r) => r.cells.documents));
    expect(read1.rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);

    // the same file again: its row now paid by the journal, a new file (retry-2), retry-1 untouched
    const retry2 = await inProcess('retry', 'payroll.results.csv', '--yes'); // (the first retry is the process)
    expect(retry2.code, retry2.stderr).toBe(0);
    expect(await readFile(one, 'utf8')).toBe(oneText);
    const read2 = await readResults(join(dir, 'payroll.results.retry-2.csv'));
    expect(read2.rows.map((r) => r.result.documentUrls ?? '')).toEqual(urls1);
    // created rows were kept, never sent again
    expect(initiates(sb)).toHaveLength(sent + 1);
  });
});
