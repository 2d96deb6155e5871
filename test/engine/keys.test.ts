import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchIdentity, fileSha256, idempotencyKey, parseIdempotencyKey } from '../../src/engine/identity.ts';
import { generateCsv, workDir } from './helpers.ts';

describe('batch identity and idempotency keys', () => {
  it('the same content under two names gives the same batch id and the same keys', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'payroll copy.csv'), csv);
    const a = batchIdentity(await fileSha256(join(d, 'a.csv')));
    const b = batchIdentity(await fileSha256(join(d, 'payroll copy.csv')));
    expect(a.batchId).toBe(b.batchId);
    expect(a.batchId).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKey(a.batchId, 'local', 'GEN-0001', 1)).toBe(idempotencyKey(b.batchId, 'local', 'GEN-0001', 1));
  });

  it('one byte more is another batch', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'b.csv'), csv + '\n');
    expect(await fileSha256(join(d, 'a.csv'))).not.toBe(await fileSha256(join(d, 'b.csv')));
  });

  it('attempt, environment, reference and --batch-id each change the key; the key says its batch and attempt', () => {
    const id = 'f'.repeat(64);
    const k1 = idempotencyKey(id, 'sandbox', 'R1', 1);
    expect(k1).toMatch(/^pb1-ffffffffffffffff-[0-9a-f]{24}-1$/);
    expect(idempotencyKey(id, 'sandbox', 'R1', 1)).toBe(k1);
    expect(idempotencyKey(id, 'sandbox', 'R1', 2)).not.toBe(k1);
    expect(idempotencyKey(id, 'production', 'R1', 1)).not.toBe(k1);
    expect(idempotencyKey(id, 'sandbox', 'R2', 1)).not.toBe(k1);
    const flagged = batchIdentity(id, 'payroll-2025-01-rerun');
    expect(flagged.source).toBe('flag');
    expect(flagged.batchId).not.toBe(id);
    expect(flagged.batchId).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKey(flagged.batchId, 'sandbox', 'R1', 1)).not.toBe(k1);
    expect(parseIdempotencyKey(idempotencyKey(flagged.batchId, 'sandbox', 'R1', 7))).toEqual({
      batchPrefix: flagged.batchId.slice(0, 16),
      attempt: 7,
    });
    expect(parseIdempotencyKey('random-uuid')).toBeUndefined();
    expect(() => batchIdentity(id, 'bad id with spaces')).toThrow(RangeError);
    expect(() => idempotencyKey(id, 'sandbox', 'R1', 0)).toThrow(RangeError);
  });
});
