import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import type { ResultRow, ResultsTable } from '../../src/results/results.ts';
import { csvChunks } from '../../src/results/csv-writer.ts';
import { sourceOf } from '../../src/results/layout.ts';

/** A CSV results file's whole text. */
export const csvText = (table: ResultsTable): string => [...csvChunks(sourceOf(table))].join('');

export function tempDir(prefix: string): { dir: string; path: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let n = 0;
  return {
    dir,
    path: (name: string) => join(dir, `${++n}-${name}`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A complete batch header (every required column), with a documents column and an unknown one. */
export const BATCH_COLUMNS = [
  'reference',
  'sourceAmount',
  'sourceCurrency',
  'destinationCurrency',
  'destinationCountryCode',
  'method',
  'accountName',
  'accountCurrency',
  'iban',
  'phoneNumber',
  'narration',
  'documents',
  'Cost centre',
];

export function batchRow(i: number, over: Record<string, string> = {}): Record<string, string> {
  return {
    reference: `PAY-${i}`,
    sourceAmount: `${100 + i}.00`,
    sourceCurrency: 'EUR',
    destinationCurrency: 'EUR',
    destinationCountryCode: 'DEU',
    method: 'SEPA',
    accountName: `Zoë Müller ${i}`,
    accountCurrency: 'EUR',
    iban: 'DE89370400440532013000',
    phoneNumber: '+447700900123',
    narration: 'Salaire août',
    documents: 'inv.pdf',
    'Cost centre': 'CC-7',
    ...over,
  };
}

export function createdResult(i: number): ResultRow['result'] {
  return {
    status: 'PENDING',
    payoutId: `3f1c2b7e-1a2b-4c3d-8e9f-${String(i).padStart(12, '0')}`,
    payoutRef: `PO-${i}`,
    idempotencyKey: `pb1-${'a'.repeat(60)}${i}`,
    quotedRate: '1.0823',
    appliedRate: '1.0825',
    fee: '2.50',
    totalDeductible: `${102 + i}.50`,
    destinationAmount: `${100 + i}.00`,
    requestId: `req-${i}`,
    documentUrls: 'https://files.example/a.pdf; https://files.example/b.pdf',
    updatedAt: '2025-01-31T09:30:00.000Z',
  };
}

export function table(format: 'csv' | 'xlsx', n = 3, delimiter?: string): ResultsTable {
  const rows: ResultRow[] = Array.from({ length: n }, (_, k) => ({
    rowNumber: k + 2,
    cells: batchRow(k + 1),
    result: createdResult(k + 1),
  }));
  return { format, inputColumns: [...BATCH_COLUMNS], rows, ...(delimiter ? { delimiter } : {}) };
}

export function readSheet(path: string): XLSX.WorkSheet {
  const wb = XLSX.read(readFileSync(path), { type: 'buffer', cellNF: true });
  return wb.Sheets[wb.SheetNames[0]!]!;
}

/** Header of a CSV results file as raw text (BOM stripped), split naively (headers hold no delimiter here). */
export function csvLines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  return text.replace(/^\uFEFF/, '').split('\r\n');
}
