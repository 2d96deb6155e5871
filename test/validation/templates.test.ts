// Templates and samples are generated (test/validation/generate-files.ts): the committed files
// must be what the generator produces, and each must validate.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectBatch } from './collect.ts';
import { templateFileName } from '../../src/validation/templates.ts';
import { TEMPLATE_METHODS, templateRows } from './examples.ts';
import { writeSamples, writeTemplates } from './generate-files.ts';
import { PAYOUT_METHODS } from '../../src/spec/codes.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'pb-tpl-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('templates', () => {
  it('the committed templates equal what the generator produces, byte for byte', () => {
    const names = writeTemplates(tmp);
    expect(names).toHaveLength(2 * (PAYOUT_METHODS.length + 1) + 1); // and the pain.001
    expect(readdirSync(join(root, 'templates')).sort()).toEqual([...names].sort());
    for (const n of names) expect(readFileSync(join(root, 'templates', n)).equals(readFileSync(join(tmp, n))), n).toBe(true);
  });

  it.each(TEMPLATE_METHODS.map((m) => [m ?? 'all methods', m] as const))('the %s templates validate with no error', async (_label, m) => {
    for (const format of ['csv', 'xlsx'] as const) {
      const r = await collectBatch(join(root, 'templates', templateFileName(m, format)));
      expect(r.summary).toMatchObject({ rows: 1, valid: 1, errors: 0 });
      // the example row has no document, so the only warning says the service would hold it
      expect(r.problems.map((p) => p.code)).toEqual(['NO_DOCUMENT']);
      expect(r.source.columns).toEqual(templateRows(m)[0]);
    }
  });
});

describe('samples', () => {
  it('the committed samples equal what the generator produces', async () => {
    await writeSamples(tmp);
    for (const n of ['payroll-2025-01.csv', 'payroll-2025-01.xlsx', 'payroll-broken.csv']) {
      expect(readFileSync(join(root, 'samples', n)).equals(readFileSync(join(tmp, n))), n).toBe(true);
    }
    expect(readdirSync(join(root, 'samples', 'documents')).sort()).toEqual(readdirSync(join(tmp, 'documents')).sort());
  });

  it('the payroll validates with no problem at all, as CSV and as a workbook, with the same payouts', async () => {
    const csv = await collectBatch(join(root, 'samples', 'payroll-2025-01.csv'));
    const xlsx = await collectBatch(join(root, 'samples', 'payroll-2025-01.xlsx'));
    for (const r of [csv, xlsx]) {
      expect(r.problems).toEqual([]);
      expect(r.summary.rows).toBeGreaterThanOrEqual(45);
      expect(Object.keys(r.summary.byMethod).length).toBeGreaterThanOrEqual(8);
      expect(r.summary.corridors.length).toBeGreaterThanOrEqual(6);
    }
    expect(xlsx.rows.map((r) => ({ ...r.payout, sourceAmount: r.payout!.sourceAmount.toFixed() }))).toEqual(
      csv.rows.map((r) => ({ ...r.payout, sourceAmount: r.payout!.sourceAmount.toFixed() })),
    );
    expect(csv.summary.totalsBySourceCurrency).toEqual(xlsx.summary.totalsBySourceCurrency);
  });

  it('the payroll uses only corridors of the sandbox seed (its pairs and same-currency ones)', async () => {
    const seedPairs = new Set(['USD>NGN', 'USD>EUR', 'USD>GBP', 'USD>CNY', 'USD>HKD', 'USD>INR', 'GBP>EUR', 'EUR>GBP', 'NGN>USD']);
    const r = await collectBatch(join(root, 'samples', 'payroll-2025-01.csv'));
    for (const c of r.summary.corridors) {
      expect(
        c.sourceCurrency === c.destinationCurrency || seedPairs.has(`${c.sourceCurrency}>${c.destinationCurrency}`),
        JSON.stringify(c),
      ).toBe(true);
    }
  });
});
