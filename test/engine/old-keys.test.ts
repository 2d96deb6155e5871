// A journal written by an earlier version holds `pb2-` keys (the batch hashed in). Its open rows
// are resent with their journalled keys and bytes, never re-derived: a resume after the upgrade
// must not send a row under another key than the one the service may have acted on.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import type { Connection } from '../../src/client/connect.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { unattended } from '../ops/helpers.ts';
import { KEY, allPayouts, workDir, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('a journal of an earlier version', () => {
  it('resends its open row with the journalled pb2 key and body; rows never sent get pb3 keys', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await writeBatch(dir, 'batch.csv', { rows: 2, currencies: ['NGN'] });
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (url.endsWith('/payouts/initiate')) sent.push(new Headers(init?.headers).get('idempotency-key') ?? '');
      return fetch(input, init);
    };
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: KEY, requestsPerSecond: 200, fetch: recording });
    const conn: Connection = {
      client,
      environment: { name: 'custom', keyClass: 'sandbox', baseUrl: sb.url },
      usage: undefined,
      sandbox: undefined,
      close: async () => {},
    };
    const batch = await loadBatch(file);
    const first = batch.rows[0]!.payout!;
    const oldKey = `pb2-${batch.identity.batchId.slice(0, 16)}-${'0'.repeat(24)}-1`;
    const journal = ledgerOf(conn).journalOf(batch.identity.batchId);
    mkdirSync(dirname(journal), { recursive: true });
    const { batchId, source, fileSha256 } = batch.identity;
    const at = new Date().toISOString();
    const lines = [
      { t: 'batch', v: 1, batchId, batchIdSource: source, env: 'custom', file: batch.file, fileSha256, createdAt: at },
      { t: 'run', at, command: 'run', pid: 1 },
      { t: 'initiating', ref: first.reference, row: 2, attempt: 1, key: oldKey, body: JSON.stringify(initiateBody(first)), at },
    ];
    writeFileSync(journal, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    const r = await runBatch({ file, conn, ...unattended({ settleDelayMs: 10, checkpointMs: 60_000 }) });
    expect(r.kind).toBe('ok');
    expect(sent).toEqual(expect.arrayContaining([oldKey, idempotencyKey(batch.rows[1]!.payout!.reference, 1)]));
    expect(sent).toHaveLength(2);
    expect(await allPayouts(sb)).toHaveLength(2);
    expect([...r.outcomes.values()].map((o) => o.key).sort()).toEqual([oldKey, idempotencyKey(batch.rows[1]!.payout!.reference, 1)].sort());
  });
});
