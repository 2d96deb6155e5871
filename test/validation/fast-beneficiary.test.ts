// The fast path of the beneficiary (BENEFICIARY_FAST) against the zod schemas it shortcuts: on
// random inputs, it must accept exactly the inputs the schema accepts, with the same output.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BENEFICIARY_COLUMNS, type BeneficiaryColumn } from '../../src/input/index.ts';
import { BENEFICIARY_FAST, BENEFICIARY_SCHEMAS, methodFields } from '../../src/validation/schemas.ts';
import { EXAMPLES } from '../../src/validation/templates.ts';
import { PAYOUT_METHODS, type PayoutMethod } from '../../src/spec/codes.ts';

// Values seen in the examples, for every field, plus a few that pass one check and fail another
// (valid IBANs outside SEPA or the UK, sort codes and accounts that disagree with a GB IBAN).
const pool: Record<string, string[]> = {};
for (const f of BENEFICIARY_COLUMNS) {
  pool[f] = [...new Set(PAYOUT_METHODS.map((m) => EXAMPLES[m][f]).filter((v): v is string => !!v))];
}
pool.iban!.push(
  'SA0380000000608010167519',
  'BR1800360305000010009795493C1',
  'DE89 3704 0044 0532 0130 00',
  'gb29nwbk60161331926819',
  'DE89370400440532013001',
);
pool.sortCode!.push('60-16-13', '200000', '60161', '6016133');
pool.accountNumber!.push('31926819', '3192 6819', '1234567', '0123456785', '12345678901234567890', 'ABC123');
pool.bankCode!.push('004', '000013', '12', '0581');
pool.fpsId!.push('123456789', '123456', '12 345 67');
pool.phoneNumber = ['+85291234567', '0085291234567', '91234567', '+852 9123 4567'];
pool.email = ['li@example.com', 'not-an-email', ' a@b.co '];
pool.wechatUserId = ['wxid_abc123', '1abcdef', 'ab'];
pool.accountType!.push('Savings', 'current');
pool.swiftCode!.push('DEUTDEFF', 'DEUTXXFF', 'DEUT');
pool.accountCurrency!.push('usd', 'XXX1', 'EURO');
pool.countryCode = ['DEU', 'de', 'GBR', 'ZZZ'];

/** The values by BENEFICIARY_COLUMNS index, as parseRow hands them to the fast path. */
const byColumn = (input: Record<string, string>) => BENEFICIARY_COLUMNS.map((f) => input[f]);

const noise = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9 -]{1,20}$/), fc.stringMatching(/^[A-Z0-9]{2,34}$/));

/** An input as parseRow builds it: some of the method's fields, each a non-empty string. */
const inputFor = (method: PayoutMethod) =>
  fc
    .record(
      Object.fromEntries(
        methodFields(method).map((f) => {
          const known = pool[f] ?? [];
          const example = EXAMPLES[method][f];
          const choices = [
            ...(example ? [{ weight: 8, arbitrary: fc.constant(example) }] : []),
            ...(known.length ? [{ weight: 3, arbitrary: fc.constantFrom(...known) }] : []),
            { weight: 1, arbitrary: noise },
            { weight: 2, arbitrary: fc.constant(undefined) },
          ];
          return [f, fc.oneof(...choices)];
        }),
      ) as Record<BeneficiaryColumn, fc.Arbitrary<string | undefined>>,
    )
    .map((r) => {
      const input: Record<string, string> = {};
      for (const [k, v] of Object.entries(r)) if (v !== undefined && v !== '') input[k] = v;
      return input;
    });

describe('the fast beneficiary path', () => {
  it.each(PAYOUT_METHODS)('agrees with the %s zod schema on random inputs', (method) => {
    let accepted = 0;
    let rejected = 0;
    // Batches of 400 until both branches were exercised: few random HK_FPS inputs are accepted
    // (its fields must agree), and 400 runs alone once gave only 7.
    for (let batch = 0; batch < 10 && (accepted <= 10 || rejected <= 10); batch++) {
      fc.assert(
        fc.property(inputFor(method), (input) => {
          const z = BENEFICIARY_SCHEMAS[method].safeParse(input);
          const fast = BENEFICIARY_FAST[method](byColumn(input));
          expect(fast !== undefined).toBe(z.success);
          if (z.success) {
            accepted++;
            const data = Object.fromEntries(
              Object.entries(z.data as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== ''),
            );
            expect(fast).toEqual(data);
            expect(Object.keys(fast!)).toEqual(Object.keys(data));
          } else rejected++;
        }),
        { numRuns: 400 },
      );
    }
    // both branches were exercised
    expect(accepted).toBeGreaterThan(10);
    expect(rejected).toBeGreaterThan(10);
  });

  it('accepts every example, as the schema does', () => {
    for (const m of PAYOUT_METHODS) {
      const input = Object.fromEntries(methodFields(m).flatMap((f) => (EXAMPLES[m][f] ? [[f, EXAMPLES[m][f]]] : [])));
      expect(BENEFICIARY_FAST[m](byColumn(input))).toBeDefined();
      expect(BENEFICIARY_SCHEMAS[m].safeParse(input).success).toBe(true);
    }
  });
});
