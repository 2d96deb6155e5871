// Issue 15, item 6: a run killed (SIGKILL) between initiate and PATCH documents leaves payouts
// with only the document sent on initiate; the next run attaches the rest, each once. The CLI
// against the sandbox over real HTTP, as a user runs it. The PATCH is made to fail with a 5xx
// before any effect (fault errorBeforeEffect on patchDocuments) and the CLI is killed when the
// first one is answered, so that no PATCH took effect before the kill whatever the timing.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES, bare } from '../shapes.ts';
import { until } from '../ops/helpers.ts';
import { KEY, ROOT, allPayouts, cleanEnv, runCli, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-docs-kill-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 6;
const doc = (name: string) => join(ROOT, 'samples/documents', name);

async function documentsOf(id: string): Promise<string[]> {
  const r = await fetch(`${sb!.url}/v1/payout-api/payouts/${id}`, { headers: { 'x-api-key': KEY } });
  const body = bare<{ supportingDocuments: { url: string }[] }>(await r.json());
  return body.supportingDocuments.map((d) => d.url);
}

describe('killed between initiate and PATCH documents', () => {
  it('the next run attaches every missing document, each once', async () => {
    let kill: (() => void) | undefined;
    sb = await startSandbox({
      shapes: TEST_SHAPES,
      rateLimitPerSecond: null,
      faults: { errorBeforeEffect: 1, routes: ['patchDocuments'] },
      onRequest: (e) => void (e.route === 'patchDocuments' && kill?.()),
    });
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: ROWS, currencies: ['GBP'], documentsEvery: 1, prefix: 'DK' });
    // three documents a row: its payslip and two invoices
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const at = lines[0]!.split(',').indexOf('documents');
    const docs = (i: number) => [doc(`payslip-2025-01-UK00${i + 1}.pdf`), doc('invoice-uk-c1.pdf'), doc('invoice-uk-c2.pdf')].join(';');
    await writeFile(
      file,
      [
        lines[0]!,
        ...lines.slice(1).map((l, i) =>
          l
            .split(',')
            .map((c, j) => (j === at ? docs(i) : c))
            .join(','),
        ),
      ].join('\n') + '\n',
    );

    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const args = ['run', 'payroll.csv', '--base-url', sb.url, '--yes', '--rate', '100'];
    const killed = await runCli(args, {
      cwd: dir,
      env,
      onSpawn: (child: ChildProcess) => {
        kill = () => child.kill('SIGKILL');
      },
    });
    kill = undefined;
    expect(killed.signal).toBe('SIGKILL');
    await until(() => sb!.inFlight() === 0, 10_000, 'the killed run to be answered');
    const lacking = (await Promise.all((await allPayouts(sb)).map(async (p) => (await documentsOf(p.id)).length))).filter((n) => n < 3);
    expect(lacking.length).toBeGreaterThan(0);

    sb.setFaults({});
    const rerun = await runCli(args, { cwd: dir, env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    const results = parse<Record<string, string>>(await readFile(join(dir, 'payroll.results.csv'), 'utf8'), { columns: true, bom: true });
    expect(results.map((r) => r.status)).toEqual(Array(ROWS).fill('PENDING'));
    expect(results.map((r) => r.errorCode)).toEqual(Array(ROWS).fill(''));
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    for (const p of payouts) {
      const urls = await documentsOf(p.id);
      expect(urls).toHaveLength(3);
      expect(new Set(urls).size).toBe(3);
    }
    // Each payout got its missing documents in one PATCH: none before the kill took effect.
    expect(sb.requestLog().filter((x) => x.route === 'patchDocuments' && x.status === 200)).toHaveLength(ROWS);
  }, 60_000);
});
