// Issue 27: each distinct document is uploaded once per batch (by the sha256 of its bytes) and its
// documentUrl reused on every row that names it, also after a kill -9 and a resume; and the run
// sends no quote (the initiate's answer carries the rate and fee applied, spec §4.2), `run --plan`
// taking its quotedRate from the plan. The CLI against the sandbox over real HTTP, counting the
// requests the sandbox answered.
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES, bare } from '../shapes.ts';
import { sampleDoc, until } from '../ops/helpers.ts';
import { KEY, allPayouts, cleanEnv, ledgerJournals, runCli, runMain, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-docs-once-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const count = (route: string) => sb!.requestLog().filter((e) => e.route === route && e.status < 300).length;

/** A GBP batch of `rows` rows in `dir`, row i naming the documents `docsOf(i)` (paths beside the batch). */
async function batchNaming(dir: string, rows: number, docsOf: (i: number) => string[]): Promise<void> {
  const file = await writeBatch(dir, 'payroll.csv', { rows, currencies: ['GBP'], prefix: 'ONCE' });
  const [header, ...lines] = (await readFile(file, 'utf8')).trim().split('\n');
  const cols = header!.split(',');
  const [docs, withdrawal] = [cols.indexOf('documents'), cols.indexOf('withdrawal')];
  const rewrite = (line: string, i: number) => {
    const c = line.split(',');
    c[docs] = docsOf(i).join(';');
    c[withdrawal] = 'false';
    return c.join(',');
  };
  await writeFile(file, [header, ...lines.map(rewrite)].join('\n') + '\n');
}

/**
 * The CLI in `dir` against the sandbox, with its own state folder: as a process (`run`), or, where
 * the case is about the requests and not the process, through the same main() in this one
 * (`inProcess`, the batch file by its absolute path).
 */
function cliIn(dir: string) {
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = () => ['--base-url', sb!.url, '--rate', '100'];
  return {
    state: join(dir, 'state'),
    run: (args: string[], onSpawn?: (c: ChildProcess) => void) => runCli([...args, ...service()], { cwd: dir, env, onSpawn }),
    inProcess: (command: string, file: string, ...args: string[]) =>
      runMain([command, join(dir, file), ...args, ...service()], { cwd: dir, env }),
  };
}

/** The bytes of every document each payout holds, read back from the sandbox (payout id → bytes). */
async function documentsHeld(): Promise<Map<string, Buffer[]>> {
  const out = new Map<string, Buffer[]>();
  for (const p of await allPayouts(sb!)) {
    const r = await fetch(`${sb!.url}/v1/payout-api/payouts/${p.id}`, { headers: { 'x-api-key': KEY } });
    const { supportingDocuments } = bare<{ supportingDocuments: { url: string }[] }>(await r.json());
    const files = await Promise.all(
      supportingDocuments.map(async (d) => Buffer.from(await (await fetch(d.url, { headers: { 'x-api-key': KEY } })).arrayBuffer())),
    );
    out.set(p.id, files);
  }
  return out;
}

/** Each row's payout holds exactly the bytes of the files the row names, in order. */
async function expectEachPayoutHolds(dir: string, docsOf: (i: number) => string[]): Promise<void> {
  const results = await readResults(join(dir, 'payroll.results.csv'));
  const held = await documentsHeld();
  expect(held.size).toBe(results.rows.length);
  for (const [i, row] of results.rows.entries()) {
    const want = await Promise.all(docsOf(i).map((d) => readFile(join(dir, d))));
    expect(held.get(row.result.payoutId!), `row ${row.rowNumber}`).toEqual(want);
  }
}

const docLines = (state: string) =>
  readFile(ledgerJournals(state)[0]!, 'utf8').then((t) => t.split('\n').filter((l) => l.includes('"t":"doc"')).length);

describe('each distinct document uploaded once per batch', () => {
  it('30 rows naming one file: one upload-url and one PUT, every payout holds that document, no quote', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await copyFile(sampleDoc(), join(dir, 'invoice.pdf'));
    const docsOf = () => ['invoice.pdf'];
    await batchNaming(dir, 30, docsOf);
    const { state, inProcess } = cliIn(dir);

    const r = await inProcess('run', 'payroll.csv', '--yes');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(count('initiate')).toBe(30);
    expect(count('uploadUrl')).toBe(1);
    expect(count('storagePut')).toBe(1);
    expect(sb.requestLog().filter((e) => e.route === 'quote')).toHaveLength(0);
    await expectEachPayoutHolds(dir, docsOf);
    const urls = (await readResults(join(dir, 'payroll.results.csv'))).rows.map((x) => x.result.documentUrls);
    expect(new Set(urls).size).toBe(1);
    expect(urls[0]).toMatch(/^http/);
    expect(await docLines(state)).toBe(1);
  });

  it('the same after a kill -9 mid-run and a resume: the journalled documentUrl is reused', async () => {
    let kill: (() => void) | undefined;
    let answered = 0;
    sb = await startSandbox({
      shapes: TEST_SHAPES,
      rateLimitPerSecond: null,
      // killed once two initiates were answered: the upload before them is journalled, and with
      // two rows in flight most rows are still to send
      onRequest: (e) => void (e.route === 'initiate' && ++answered === 2 && kill?.()),
    });
    const dir = await dirs.make();
    await copyFile(sampleDoc(), join(dir, 'invoice.pdf'));
    const docsOf = () => ['invoice.pdf'];
    await batchNaming(dir, 30, docsOf);
    const { run, inProcess } = cliIn(dir);
    const args = ['run', 'payroll.csv', '--yes', '--concurrency', '2'];

    const killed = await run(args, (child) => (kill = () => child.kill('SIGKILL')));
    kill = undefined;
    expect(killed.signal).toBe('SIGKILL');
    await until(() => sb!.inFlight() === 0, 10_000, 'the killed run to be answered');
    expect((await allPayouts(sb)).length).toBeLessThan(30);
    expect(count('uploadUrl')).toBe(1);

    // (the resume by main() in this process: the kill is the process)
    const resumed = await inProcess('run', 'payroll.csv', ...args.slice(2));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/Resuming this batch/);
    expect(await allPayouts(sb)).toHaveLength(30);
    expect(count('uploadUrl')).toBe(1);
    expect(count('storagePut')).toBe(1);
    await expectEachPayoutHolds(dir, docsOf);
  }, 60_000);

  it('two distinct files among 10 rows: two uploads, each payout holds its own file', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await copyFile(sampleDoc('invoice-uk-c1.pdf'), join(dir, 'a.pdf'));
    await copyFile(sampleDoc('invoice-uk-c2.pdf'), join(dir, 'b.pdf'));
    const docsOf = (i: number) => [i % 3 === 0 ? 'b.pdf' : 'a.pdf'];
    await batchNaming(dir, 10, docsOf);
    const r = await cliIn(dir).inProcess('run', 'payroll.csv', '--yes');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(count('uploadUrl')).toBe(2);
    expect(count('storagePut')).toBe(2);
    await expectEachPayoutHolds(dir, docsOf);
  });

  it('--merge-documents: rows naming the same files in the same order share one merged PDF', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await copyFile(sampleDoc('invoice-uk-c1.pdf'), join(dir, 'a.pdf'));
    await copyFile(sampleDoc('invoice-uk-c2.pdf'), join(dir, 'b.pdf'));
    await batchNaming(dir, 8, () => ['a.pdf', 'b.pdf']);
    // (the built CLI: pdf-lib is loaded only here, and dist/ loads it otherwise than src/ does)
    const r = await cliIn(dir).run(['run', 'payroll.csv', '--yes', '--merge-documents']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(count('uploadUrl')).toBe(1);
    expect(count('patchDocuments')).toBe(0);
    const held = [...(await documentsHeld()).values()];
    expect(held).toHaveLength(8);
    for (const files of held) expect(files).toEqual(held[0]);
  });
});

describe('no quote in the run', () => {
  it("run --plan sends no quote for the rows the plan quoted; the results' quotedRate is the plan's", async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 4, prefix: 'PLANQ' });
    const { run, inProcess } = cliIn(dir);
    const planned = await inProcess('plan', 'payroll.csv', '--out', join(dir, 'payroll.plan.json'));
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(await readFile(join(dir, 'payroll.plan.json'), 'utf8')) as {
      rows: { reference: string; rate?: string }[];
      requests: { quotes: number };
    };
    expect(plan.rows.every((row) => row.rate !== undefined)).toBe(true);
    const quotes = count('quote');
    expect(quotes).toBe(plan.requests.quotes);

    const r = await run(['run', '--plan', 'payroll.plan.json', '--yes']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(count('initiate')).toBe(4);
    expect(sb.requestLog().filter((e) => e.route === 'quote')).toHaveLength(quotes);
    const results = await readResults(join(dir, 'payroll.results.csv'));
    const rateOf = new Map(plan.rows.map((row) => [row.reference, row.rate]));
    for (const row of results.rows) expect(row.result.quotedRate).toBe(rateOf.get(row.cells.reference!));
  });
});
