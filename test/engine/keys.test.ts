import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BATCH_LABEL_TAG, batchIdentity, fileSha256, idempotencyKey, parseIdempotencyKey } from '../../src/engine/identity.ts';
import { generateCsv, workDir } from './helpers.ts';

const F = 'f'.repeat(64);
const HEX = '0123456789abcdef'.repeat(4);

describe('batch identity and idempotency keys', () => {
  // Literal vectors: a refactor that changes the derivation fails here. A changed derivation makes
  // a resume after the upgrade send rows under other keys than those the service has (paid twice,
  // wherever a journal is lost): it needs a new version prefix, never a silent change.
  it.each([
    [F, 'R1', 1, 'pb2-ffffffffffffffff-906febc3ab745ec714738999-1'],
    [F, 'R1', 2, 'pb2-ffffffffffffffff-c08a4e8c26709f7d65a89c4c-2'],
    [F, 'R2', 1, 'pb2-ffffffffffffffff-9a8ee42080247e678f2bf1a0-1'],
    [HEX, 'PAY-2025-01-0001', 1, 'pb2-0123456789abcdef-81f858776d3e07ba459c9db2-1'],
    [HEX, 'Zahlung März/Ü 7', 3, 'pb2-0123456789abcdef-6dbdb5935766270fbfdbc22d-3'],
  ])('pins the key of batch %s…, reference %s, attempt %i', (batchId, reference, attempt, key) => {
    expect(idempotencyKey(batchId, reference, attempt)).toBe(key);
  });

  it('pins the batch id of a --batch-id (sha256 of "pb1-batch-id|" + label) and its keys', () => {
    expect(BATCH_LABEL_TAG).toBe('pb1-batch-id|');
    const flagged = batchIdentity(F, 'payroll-2025-01-rerun');
    expect(flagged).toEqual({
      batchId: '6befc94db2c4c3124ac92b3d0717259a3bde2bd00a1b94baa5f62e812f40fb65',
      source: 'flag',
      label: 'payroll-2025-01-rerun',
      fileSha256: F,
    });
    expect(idempotencyKey(flagged.batchId, 'R1', 1)).toBe('pb2-6befc94db2c4c312-b974bcc54b0733f3214344e0-1');
  });

  it('the key is sha256 of "pb2|batch|reference|attempt": nothing else goes in (no label, path or flag)', async () => {
    const { createHash } = await import('node:crypto');
    const h = createHash('sha256').update(`pb2|${HEX}|R9|4`).digest('hex').slice(0, 24);
    expect(idempotencyKey(HEX, 'R9', 4)).toBe(`pb2-0123456789abcdef-${h}-4`);
    expect(idempotencyKey.length).toBe(3);
  });

  it('the same content under two names gives the same batch id and the same keys', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'payroll copy.csv'), csv);
    const a = batchIdentity(await fileSha256(join(d, 'a.csv')));
    const b = batchIdentity(await fileSha256(join(d, 'payroll copy.csv')));
    expect(a.batchId).toBe(b.batchId);
    expect(a.batchId).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKey(a.batchId, 'GEN-0001', 1)).toBe(idempotencyKey(b.batchId, 'GEN-0001', 1));
  });

  it('one byte more is another batch', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'b.csv'), csv + '\n');
    expect(await fileSha256(join(d, 'a.csv'))).not.toBe(await fileSha256(join(d, 'b.csv')));
  });

  it('a key of this tool is read back: batch and attempt; anything else is not a key of this tool', () => {
    expect(parseIdempotencyKey(' pb2-0123456789abcdef-81f858776d3e07ba459c9db2-12 ')).toEqual({
      batchPrefix: '0123456789abcdef',
      attempt: 12,
    });
    expect(parseIdempotencyKey('random-uuid')).toBeUndefined();
    expect(parseIdempotencyKey('pb1-ffffffffffffffff-0123456789abcdef01234567-1')).toBeUndefined();
    expect(parseIdempotencyKey('pb3-ffffffffffffffff-0123456789abcdef01234567-1')).toBeUndefined();
    expect(() => batchIdentity(F, 'bad id with spaces')).toThrow(RangeError);
    expect(() => idempotencyKey(F, 'R1', 0)).toThrow(RangeError);
    expect(() => idempotencyKey('not-hex', 'R1', 1)).toThrow(RangeError);
  });
});
