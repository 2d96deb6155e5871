// Benchmark of `validate` on a generated pain.001.001.09 (1,000, 10,000 and 100,000 transactions by default):
//   npx tsx test/bench/pain001.ts [--sizes 1000,10000,100000]
// The built CLI in a child process; wall time and the child's maxRSS (process.resourceUsage() at its
// exit, through a --require hook). Target: memory flat, the reader streams (saxes) and never holds a
// tree of the document, so maxRSS does not grow with the file as the file grows 100 times.
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Dec } from '../../src/money.ts';
import { cleanEnv, ROOT } from '../engine/helpers.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { spawnChild } from './args.ts';
import { saveFigures } from './figures.ts';

/** A file of `n` SEPA transactions in one PmtInf: the sample's first SEPA transaction repeated under new ids. */
async function generate(path: string, n: number): Promise<void> {
  const sepa = sampleRows().find((r) => r.method === 'SEPA')!;
  const row: Record<string, string> = { ...sepa, sourceAmount: '10.00', documents: '', withdrawal: 'true' }; // no document, no warning
  const one = pain001([row], 'pain.001.001.09', { msgId: 'BENCH' });
  const [head, rest] = one.split('<CdtTrfTxInf>');
  const [tx, tail] = rest!.split('</CdtTrfTxInf>');
  // a different amount per row (the same account and amount twice is a probable duplicate); 1 + ... + n cents
  const total = new Dec(n)
    .times(n + 1)
    .dividedBy(200)
    .toFixed(2);
  const out = createWriteStream(path);
  const write = async (s: string) => void (out.write(s) || (await once(out, 'drain')));
  await write(
    head!
      .replaceAll('<NbOfTxs>1</NbOfTxs>', `<NbOfTxs>${n}</NbOfTxs>`)
      .replaceAll('<CtrlSum>10.00</CtrlSum>', `<CtrlSum>${total}</CtrlSum>`),
  );
  for (let i = 1; i <= n; i++)
    await write(
      `<CdtTrfTxInf>${tx!.replace(sepa.reference!, `BENCH-${String(i).padStart(8, '0')}`).replace('>10.00<', `>${new Dec(i).dividedBy(100).toFixed(2)}<`)}</CdtTrfTxInf>`,
    );
  await write(tail!);
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--sizes');
  const sizes = i > 0 ? process.argv[i + 1]!.split(',').map(Number) : [1_000, 10_000, 100_000];
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-pain001-'));
  const hook = join(dir, 'rss-hook.cjs');
  const rssFile = join(dir, 'rss');
  writeFileSync(
    hook,
    'process.on("exit", () => require("fs").writeFileSync(process.env.PB_RSS_FILE, String(process.resourceUsage().maxRSS)));\n',
  );
  const rows: (string | number)[][] = [];
  try {
    for (const n of sizes) {
      const file = join(dir, `bench-${n}.xml`);
      await generate(file, n);
      const env = cleanEnv({ PB_RSS_FILE: rssFile, NODE_OPTIONS: `--require ${hook}` });
      const r = await spawnChild([join(ROOT, 'dist/bin.js'), 'validate', file, '--max-problems', '1'], env, dir);
      if (r.code !== 0) throw new Error(`validate ${n}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
      const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
      rows.push([
        'validate',
        n,
        mb(statSync(file).size),
        `${(r.ms / 1000).toFixed(2)} s`,
        mb(Number(readFileSync(rssFile, 'utf8')) * 1024),
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  saveFigures({
    name: 'pain001',
    caption: 'The built CLI validating a generated pain.001.001.09 (SEPA transactions, one PmtInf), one run per size',
    columns: ['what', 'transactions', 'file', 'wall', 'max RSS'],
    rows,
    notes: [
      'No tree of the document (saxes, one transaction at a time): max RSS grows as a CSV of as many rows does (scale table below), ' +
        'with the references and probable-duplicate keys kept for the rules across rows, not with the size of the file.',
    ],
  });
}

await main();
