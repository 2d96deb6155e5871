// retry --resend-failed counts a row as sent again only when its new attempt went out: one reopened whose document
// failed before any request is not "sent again" (it is FAILED_TO_SEND, reopened for the next retry).
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { execute, runBatch } from '../../src/engine/pipeline.ts';
import { prepareRetry } from '../../src/engine/retry-batch.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, setStatus, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs, writeBatch } from './helpers.ts';

const dirs = tempDirs('pb-resend-counted-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('a reopened row whose document changed before its new initiate: not counted as sent again', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  const doc = join(dir, 'invoice.pdf');
  await copyFile(join(ROOT, 'samples/documents/invoice-de-c1.pdf'), doc);
  const file = await writeBatch(dir, 'b.csv', { rows: 2, currencies: ['GBP'], documentsEvery: 1 });
  const [header, ...lines] = (await readFile(file, 'utf8')).trim().split('\n');
  const at = header!.split(',').indexOf('documents');
  await writeFile(
    file,
    [
      header,
      ...lines.map((l) =>
        l
          .split(',')
          .map((c, i) => (i === at ? doc : c))
          .join(','),
      ),
    ].join('\n') + '\n',
  );
  const o = unattended({ settleDelayMs: 1 });
  const run = await runBatch({ file, conn: connectionTo(sb), ...o });
  expect(run.kind).toBe('ok');
  const ids = (await readResults(run.resultsPath)).rows.map((r) => r.result.payoutId!);
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: run.resultsPath });
  const prepared = await prepareRetry({ ...o, conn: connectionTo(sb), resultsFile: run.resultsPath, here: dir, resendFailed: true });
  await writeFile(doc, Buffer.concat([await readFile(doc), Buffer.from('\n%% edited\n')]));
  const r = await execute(prepared);
  expect(await allPayouts(sb)).toHaveLength(2);
  expect(r.outcomes.get(2)).toMatchObject({ status: 'FAILED_TO_SEND', error: { code: 'DOCUMENT_CHANGED' } });
  expect(r.resent).toBe(0);
});
