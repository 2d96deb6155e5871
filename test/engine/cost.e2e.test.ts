// What a batch costs, as the plan states it, and `--max-requests` (issue 27): the CLI spawned
// against the sandbox over real HTTP (its refusals by main() in this process), every request counted at the sandbox.
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { HEADER, ROOT, cleanEnv, generateCsv, runCli, runMain, workDir } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** Five rows: three name one invoice (under two file names, one content), two another. */
async function fiveRowsTwoDocuments() {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await workDir('pb-cost-');
  const doc = (name: string) => join(ROOT, 'samples/documents', name);
  await copyFile(doc('invoice-de-c1.pdf'), join(dir, 'same-invoice.pdf'));
  const docs = [
    doc('invoice-de-c1.pdf'),
    doc('invoice-de-c1.pdf'),
    join(dir, 'same-invoice.pdf'),
    doc('invoice-eu-c1.pdf'),
    doc('invoice-eu-c1.pdf'),
  ];
  const [header, ...lines] = generateCsv({ rows: 5, currencies: ['GBP'] })
    .trim()
    .split('\n');
  const rows = lines.map((l, i) => {
    const c = l.split(',');
    c[HEADER.indexOf('documents')] = docs[i]!;
    c[HEADER.indexOf('withdrawal')] = 'false';
    return c.join(',');
  });
  await writeFile(join(dir, 'payroll.csv'), [header, ...rows].join('\n') + '\n');
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const run = (...args: string[]) => runCli([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
  /** `plan payroll.csv --json` through main() in this process: what a case reads, not what it is about. */
  const planJson = async () =>
    JSON.parse(
      (await runMain(['plan', join(dir, 'payroll.csv'), '--json', '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env })).stdout,
    );
  /** The same as `run` by main() in this process, for a refusal before anything is sent and a step after it. */
  const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
  return { dir, run, inProcess, planJson };
}

const routes = (s: LocalSandbox) => s.requestLog().map((r) => r.route);
const sent = (s: LocalSandbox, route: string) => routes(s).filter((r) => r === route).length;

describe('the plan states what the batch costs', () => {
  it('by kind: one upload per distinct document, one initiate per row, no quote in a plain plan; in the text and in --json', async () => {
    const { run, planJson } = await fiveRowsTwoDocuments();
    const text = await run('plan', 'payroll.csv');
    expect(text.code, text.stderr).toBe(0);
    // a plain plan prices from the methods route: every request it made is preflight
    const preflight = sb!.requestLog().length;
    expect(sent(sb!, 'quote')).toBe(0);
    expect(text.stdout).toContain(
      `  requests     about ${preflight + 8} of the key's month: ${preflight} preflight, 2 upload-url, 5 initiate, 1 payout list page (an answer lacking the fee read back) (+ 2 storage PUTs, not counted)\n`,
    );
    expect(text.stdout).toMatch(/GBP +5 rows .*\(fees of 5 rows estimated, margin \d+\.\d\d\)/);

    // the same in --json (in this process: the plan's --json as a process is the next describe's)
    expect((await planJson()).requests).toMatchObject({
      estimate: preflight + 8,
      preflight,
      quotes: 0,
      uploadUrls: 2,
      storagePuts: 2,
      initiates: 5,
      patches: 0,
      swapRequests: 0,
      listPages: 1,
      quota: 10_000,
    });
  });

  it('plan --out quotes once per corridor, method and fee band (fees exact) and writes the cost in the plan file', async () => {
    const { dir, run } = await fiveRowsTwoDocuments();
    const planned = await run('plan', 'payroll.csv', '--out', 'payroll.plan.json');
    expect(planned.code, planned.stderr).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'payroll.plan.json'), 'utf8'));
    const quotes = sent(sb!, 'quote');
    expect(quotes).toBeLessThan(5);
    expect(file.requests).toMatchObject({ quotes, uploadUrls: 2, storagePuts: 2, initiates: 5, patches: 0 });
    expect(planned.stdout).toMatch(/GBP +5 rows .*\(fees exact \(quoted\)\)/);
    expect(planned.stdout).toMatch(/quote \(one per corridor, method and fee band: rates indicative, not locked\)/);
    // every row still carries its indicative quote: its fee, total and destination amount
    for (const r of file.rows)
      expect(r).toMatchObject({ fee: expect.any(String), totalDeductible: expect.any(String), destinationAmount: expect.any(String) });
  });

  it('plan --out of 200 rows and of 400 costs the same quotes: a quote per corridor, method and band, not per row', async () => {
    const seed = defaultSeed();
    for (const b of seed.businesses) b.wallets = b.wallets.map((w) => ({ ...w, balance: '1000000000.00' }));
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, seed });
    const dir = await workDir('pb-cost-');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    // amounts in every SWIFT band (under 2k, 2k to 10k, 10k and above), in the first 200 rows
    // already; each amount its own, so that no row is a probable duplicate of another
    const bands = [150, 2500, 12000];
    const amount = (i: number) => `${bands[i % 3]! + Math.floor(i / 3)}.${String(i % 100).padStart(2, '0')}`;
    const quotesFor = async (rows: number) => {
      await writeFile(join(dir, `p${rows}.csv`), generateCsv({ rows, prefix: `Q${rows}`, amount }));
      const before = sent(sb!, 'quote');
      const r = await runMain(
        ['plan', join(dir, `p${rows}.csv`), '--out', join(dir, `p${rows}.plan.json`), '--json', '--base-url', sb!.url, '--rate', '100'],
        { cwd: dir, env },
      );
      expect(r.code, r.stderr + r.stdout.slice(0, 3000)).toBe(0);
      const file = JSON.parse(await readFile(join(dir, `p${rows}.plan.json`), 'utf8'));
      expect(file.rows.length).toBe(rows);
      expect(file.requests.quotes).toBe(sent(sb!, 'quote') - before);
      return sent(sb!, 'quote') - before;
    };
    const [q200, q400] = [await quotesFor(200), await quotesFor(400)];
    expect(q400).toBe(q200);
    expect(q200).toBeLessThan(40);
  });
});

describe('--max-requests', () => {
  it('refuses a batch that needs more: exit 3, the reason listed, nothing sent (no initiate, no upload, no quote)', async () => {
    const { inProcess } = await fiveRowsTwoDocuments();
    const refused = await inProcess('run', 'payroll.csv', '--yes', '--max-requests', '5');
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(
      /Nothing was sent:\n {2}- --max-requests 5, but this batch needs about \d+ requests of the key's month \(\d+ preflight, 2 upload-url, 5 initiate/,
    );
    for (const route of ['initiate', 'uploadUrl', 'storagePut', 'quote', 'patchDocuments']) expect(sent(sb!, route), route).toBe(0);
  });

  it('plan --out refuses before quoting and writes no plan file; at the estimate itself the batch goes', async () => {
    const { dir, inProcess, planJson } = await fiveRowsTwoDocuments();
    const refused = await inProcess('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--max-requests', '5', '--json');
    expect(refused.code, refused.stderr).toBe(3);
    expect(JSON.parse(refused.stdout).refused).toEqual([expect.stringMatching(/^--max-requests 5, but this batch needs about/)]);
    expect(sent(sb!, 'quote')).toBe(0);
    expect(existsSync(join(dir, 'payroll.plan.json'))).toBe(false);

    const estimate = (await planJson()).requests.estimate as number;
    const ok = await inProcess('run', 'payroll.csv', '--yes', '--max-requests', String(estimate));
    expect(ok.code, ok.stderr).toBe(0);
    expect(sent(sb!, 'initiate')).toBe(5);
  });
});

describe('what a run spends, at the service', () => {
  it('never more than the estimate it printed, when the initiate answers only what spec §4.2 promises (the fee read back from the payout list)', async () => {
    const { run } = await fiveRowsTwoDocuments();
    // (the variant reading answers an initiate with §4.2's minimum: no fee, no createdAt)
    await sb!.close();
    sb = await startSandbox({ shapes: 'variant', rateLimitPerSecond: null });
    const r = await run('run', 'payroll.csv', '--yes', '--json');
    expect(r.code, r.stderr).toBe(0);
    const estimate = JSON.parse(r.stdout).plan.requests.estimate as number;
    expect(sent(sb, 'initiate')).toBe(5);
    expect(sb.requestLog().filter((e) => e.route !== 'storagePut').length).toBeLessThanOrEqual(estimate);
  });
});
