// The plan as text (src/cli/render.ts): whole for a file or a pipe, fitted to a terminal before the
// confirmation (issue 31), with plurals and amounts grouped by thousands.
import { describe, expect, it } from 'vitest';
import { fitToScreen, planText } from '../../src/cli/render.ts';
import type { BatchPlan, InvalidRow } from '../../src/engine/batch-plan.ts';
import { planFixture } from '../engine/plan-fixture.ts';

const plan = (over: Partial<BatchPlan> = {}): BatchPlan =>
  planFixture({
    batchId: '0123456789abcdef0123',
    env: 'local',
    file: '/a/long/folder/name/payroll.csv',
    currencies: [
      {
        currency: 'NGN',
        rows: 1,
        amount: '8600000.50',
        estimatedFees: '100.00',
        feesEstimated: 1,
        feeMargin: '2.00',
        total: '8600100.50',
        balance: '250000000.00',
        balanceAfter: '241399899.50',
      },
      {
        currency: 'USD',
        rows: 1,
        amount: '103075.00',
        estimatedFees: '20.00',
        total: '103095.00',
        balance: '100000.00',
        balanceAfter: '-3095.00',
        shortfall: '3095.00',
      },
    ],
    requests: {
      estimate: 4,
      preflight: 2,
      quotes: 0,
      uploadUrls: 0,
      initiates: 2,
      patches: 0,
      storagePuts: 0,
      swapRequests: 0,
      listPages: 0,
    },
    shortfall: true,
    ...over,
  });
const SCREEN = { columns: 80, rows: 22, whole: 'add --dry-run to print it whole' };

describe('the plan as text', () => {
  it('says "1 row", never "1 rows", and groups every amount by thousands, whole and on a screen', () => {
    for (const text of [planText(plan(), 'local'), planText(plan(), 'local', undefined, SCREEN)]) {
      expect(text).not.toMatch(/\b1 rows\b/);
      expect(text).toMatch(/NGN +1 row +8,600,000\.50 \+ +100\.00 = +8,600,100\.50/);
      expect(text).toMatch(/USD +1 row .*SHORT BY 3,095\.00/);
    }
  });

  it('shows each invalid row before anything is sent: row, column, value, what would be valid; validate for the rest', () => {
    const bad = (row: number): [number, InvalidRow] => [
      row,
      {
        code: 'INVALID_SORT_CODE',
        message: 'sortCode: a UK sort code has 6 digits',
        problem: {
          severity: 'error',
          code: 'INVALID_SORT_CODE',
          file: '/a/long/folder/name/payroll.csv',
          row,
          column: 'sortCode',
          value: '60161',
          message: 'a UK sort code has 6 digits; this has 5 digits',
          expected: '6 digits, e.g. 601613',
        },
      },
    ];
    const invalidRows = new Map<number, InvalidRow>([
      [2, { code: 'PROBABLE_DUPLICATE', message: 'same beneficiary account as row 3' }],
      ...[3, 4, 5, 6].map(bad),
      [7, { code: 'DOCUMENT_NOT_FOUND', message: 'documents: "a.pdf" does not exist' }],
      ...[8, 9].map(bad),
    ]);
    const lines = planText(plan({ invalidRows, invalid: 8 }), 'local').split('\n');
    expect(lines.filter((l) => l.startsWith('  invalid '))).toEqual([
      ...[3, 4, 5, 6].map(
        (n) =>
          `  invalid      row ${n}, column "sortCode": error INVALID_SORT_CODE: a UK sort code has 6 digits; this has 5 digits (value "60161"); expected 6 digits, e.g. 601613`,
      ),
      '  invalid      row 7: DOCUMENT_NOT_FOUND: documents: "a.pdf" does not exist',
      '  invalid      and 2 more rows: `payout-batch validate /a/long/folder/name/payroll.csv` lists every problem',
    ]);
    expect(lines).toContain('  duplicate    row 2: same beneficiary account as row 3');
  });

  it('on a screen: the file by its name, lines cut to the width, warnings giving way last first with where to read them', () => {
    const warnings = Array.from({ length: 12 }, (_, i) => `rule ${i + 1}: ${'a long explanation '.repeat(8)}`);
    const text = planText(plan({ warnings }), 'local', undefined, { ...SCREEN, rows: 16 });
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(16);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lines[0]).toBe('Plan for payroll.csv (local, batch 0123456789abcdef)');
    // both totals, the first warnings, then the count of what gave way and where to read it whole
    expect(text).toMatch(/^ {4}NGN .* -> +241,399,899\.50$/m);
    expect(text).toMatch(/^ {4}USD .* -> SHORT BY 3,095\.00$/m);
    expect(text).toContain('  warning      rule 1: a long');
    expect(text).not.toContain('rule 12:');
    expect(lines.at(-1)).toMatch(/^ {2}\(\d+ lines left out to fit the screen: add --dry-run to print it whole\)$/);
    // whole, nothing gives way
    expect(planText(plan({ warnings }), 'local')).toContain('rule 12:');
  });

  it('plan on an 80-column terminal: no line wider, the totals whole, columns giving way, long lines wrapped whole (issue 43, 9)', () => {
    const big = plan({
      currencies: [
        {
          ...plan().currencies[0]!,
          amount: '123456789012.50',
          estimatedFees: '10987654.00',
          total: '123467776666.50',
          balanceAfter: '9876543210.00',
        },
        plan().currencies[1]!,
      ],
      warnings: [
        `outside trading hours now: 31 rows (rows 2, 3, 4 and 28 more): ${'Nigeria (NGA) 08:00:00-17:00:00 UTC+1; '.repeat(6)}end`,
      ],
    });
    const text = planText(big, 'local', undefined, { columns: 80 });
    const lines = text.trimEnd().split('\n');
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
    // the totals and the wallet after stay, the rows, amounts and fees gave way
    expect(text).toMatch(/^ {4}NGN +123,467,776,666\.50 -> +9,876,543,210\.00$/m);
    expect(text).toMatch(/^ {4}USD .*103,095\.00 -> SHORT BY 3,095\.00$/m);
    expect(text).toContain('total with fees -> wallet after the batch');
    // the warning is all there, wrapped under its label, never cut
    const warning = lines.slice(lines.findIndex((l) => l.startsWith('  warning'))).map((l) => l.trim());
    expect(warning.join(' ').replace(/ +/g, ' ')).toBe(`warning ${big.warnings[0]!}`.replace(/ +/g, ' ').trim());
    expect(warning.length).toBeGreaterThan(2);
    const from = lines.findIndex((l) => l.startsWith('  warning'));
    expect(lines.slice(from + 1).every((l) => /^ {15}\S/.test(l))).toBe(true);
    // the rows give way first; a table that fits keeps every column
    expect(
      planText(plan({ currencies: [{ ...big.currencies[0]!, estimatedFees: '100.00' }] }), 'local', undefined, { columns: 80 }),
    ).toMatch(/^ {4}NGN +123,456,789,012\.50 \+ 100\.00 = 123,467,776,666\.50 -> +9,876,543,210\.00$/m);
    expect(planText(plan(), 'local', undefined, { columns: 80 })).toMatch(
      /^ {4}NGN +1 row +8,600,000\.50 \+ +100\.00 = +8,600,100\.50 -> +241,399,899\.50$/m,
    );
  });

  it('shows the swap of a wallet formatted as any amount, signed (issue 43, 15c)', () => {
    const c = { ...plan().currencies[0]!, swap: '+158225.01' };
    expect(planText(plan({ currencies: [c] }), 'local')).toContain(' +158,225.01 swap -> ');
    expect(planText(plan({ currencies: [{ ...c, swap: '-92150.00' }] }), 'local')).toContain(' -92,150.00 swap -> ');
  });

  it('fitToScreen leaves lines that fit as they are, with no note', () => {
    expect(fitToScreen(['a', 'b'], new Set(['b']), { columns: 80, rows: 5, whole: 'x' })).toEqual(['a', 'b']);
    expect(fitToScreen(['a', 'b', 'c'], new Set(['b', 'c']), { columns: 80, rows: 3, whole: 'x' })).toEqual([
      'a',
      'b',
      '  (1 line left out to fit the screen: x)',
    ]);
  });
});
