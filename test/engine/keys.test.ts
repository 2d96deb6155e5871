import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BATCH_LABEL_TAG, batchIdentity, fileSha256, idempotencyKey } from '../../src/engine/identity.ts';
import { swapReference } from '../../src/engine/swap.ts';
import { BatchUnusable } from '../../src/engine/engine-errors.ts';
import { generateCsv, parseIdempotencyKey, workDir } from './helpers.ts';

const F = 'f'.repeat(64);

describe('batch identity and idempotency keys', () => {
  // Literal vectors: a refactor that changes the derivation fails here. A changed derivation makes
  // a resume after the upgrade send rows under other keys than those the service has (paid twice,
  // wherever a journal is lost): it needs a new version prefix, never a silent change.
  it.each([
    ['R1', 1, 'pb3-7350ec5144d0b489b668f8f42a969340-1'],
    ['R1', 2, 'pb3-3a62f5aee5c68614ec3d944e6dfde31b-2'],
    ['R2', 1, 'pb3-d6c70b6276d17b5c3714f61063980028-1'],
    ['PAY-2025-01-0001', 1, 'pb3-ba517b9b881e103decf724c4e7acd47d-1'],
    ['Zahlung März/Ü 7', 3, 'pb3-19669a2f263c3f35a9e6fb88fb04c6f7-3'],
  ])('pins the key of reference %s, attempt %i', (reference, attempt, key) => {
    expect(idempotencyKey(reference, attempt)).toBe(key);
  });

  it('the key is sha256 of "pb3|reference|attempt": nothing else goes in (no batch, file, label, path or flag)', async () => {
    const { createHash } = await import('node:crypto');
    const h = createHash('sha256').update('pb3|R9|4').digest('hex').slice(0, 32);
    expect(idempotencyKey('R9', 4)).toBe(`pb3-${h}-4`);
    expect(idempotencyKey.length).toBe(2);
  });

  it('pins the batch id of a --batch-id (sha256 of "pb1-batch-id|" + label): a label, the keys stay those of the references', () => {
    expect(BATCH_LABEL_TAG).toBe('pb1-batch-id|');
    const flagged = batchIdentity(F, 'payroll-2025-01-rerun');
    expect(flagged).toEqual({
      batchId: '6befc94db2c4c3124ac92b3d0717259a3bde2bd00a1b94baa5f62e812f40fb65',
      source: 'flag',
      label: 'payroll-2025-01-rerun',
      fileSha256: F,
    });
  });

  it('pins the batch id of a sheet of its own (sha256 of "pb1-sheet|" + content hash or label hash + "|" + sheet)', () => {
    expect(batchIdentity(F, undefined, 'Contractors')).toEqual({
      batchId: '8f4be5dbc510bb4abb40cd220d6fe42431fcf42afb170ab9cfabe0bac8daf12f',
      source: 'content',
      fileSha256: F,
      ownSheet: 'Contractors',
    });
    expect(batchIdentity(F, 'payroll-2025-01-rerun', 'Contractors').batchId).toBe(
      '12d8daac6d6fda01fa43589aa06413ed4bb662c74fa8cd4397e5d8ddc2cfed93',
    );
  });

  it('the same content under two names gives the same batch id', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'payroll copy.csv'), csv);
    const a = batchIdentity(await fileSha256(join(d, 'a.csv')));
    const b = batchIdentity(await fileSha256(join(d, 'payroll copy.csv')));
    expect(a.batchId).toBe(b.batchId);
    expect(a.batchId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('one byte more is another batch, with the same keys', async () => {
    const d = await workDir();
    const csv = generateCsv({ rows: 3 });
    await writeFile(join(d, 'a.csv'), csv);
    await writeFile(join(d, 'b.csv'), csv + '\n');
    expect(await fileSha256(join(d, 'a.csv'))).not.toBe(await fileSha256(join(d, 'b.csv')));
    expect(idempotencyKey('GEN-0001', 1)).toBe(idempotencyKey('GEN-0001', 1));
  });

  it.each([
    ['PBS-0123456789abcdef01234567-USD', 1, 'pbs1-379bd5d03f588cbe0eaca6fdf94b7535-1'],
    ['PBS-0123456789abcdef01234567-USD', 2, 'pbs1-449a22bdb5f7d8696ec1f228a07a60d1-2'],
  ])('pins the key of swap %s, attempt %i (the same recipe under the swap tag)', (reference, attempt, key) => {
    expect(idempotencyKey(reference, attempt, 'swap')).toBe(key);
  });

  it('pins the reference of a swap: one per currency and set of payments it funds, whatever their order', () => {
    expect(swapReference(['R1', 'R2'], 'USD')).toBe('PBS2-a47e59c4fb8dcb7a0f50f45e-USD');
    expect(swapReference(['R2', 'R1', 'R2'], 'USD')).toBe(swapReference(['R1', 'R2'], 'USD'));
    expect(swapReference(['R1'], 'USD')).not.toBe(swapReference(['R1', 'R2'], 'USD'));
  });

  it("a payout key's attempt is read back; no other key is one of ours", () => {
    expect(parseIdempotencyKey(' pb3-ba517b9b881e103decf724c4e7acd47d-12 ')).toEqual({ attempt: 12 });
    expect(parseIdempotencyKey('pb2-0123456789abcdef-81f858776d3e07ba459c9db2-3')).toBeUndefined();
    expect(parseIdempotencyKey('pbs1-379bd5d03f588cbe0eaca6fdf94b7535-1')).toBeUndefined();
    expect(parseIdempotencyKey('random-uuid')).toBeUndefined();
    expect(parseIdempotencyKey('pb1-ffffffffffffffff-0123456789abcdef01234567-1')).toBeUndefined();
    expect(() => batchIdentity(F, 'bad id with spaces')).toThrow(BatchUnusable);
    expect(() => idempotencyKey('R1', 0)).toThrow(RangeError);
    expect(() => idempotencyKey('', 1)).toThrow(RangeError);
  });
});
