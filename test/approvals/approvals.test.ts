// Approvals of plan files, without the CLI: keys, signatures over a plan's exact content, the
// approvals file, the approvers list and the four-eyes rule.
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  addApproval,
  approvalsPathFor,
  readApprovals,
  readApprovers,
  type Approval,
  type Approver,
  newKeyPair,
  parsePublicKey,
} from '../../src/approvals/approvals-file.ts';
import { approvalsView, approveText } from '../../src/approvals/view.ts';
import { loadPlan, planPayload } from '../../src/approvals/payload.ts';
import { checkApprovals, signPlan, verifyApproval } from '../../src/approvals/sign.ts';
import { nameProblem, sameName } from '../../src/engine/guards.ts';
import { bodyDigest, parsePlanFile, verifyPlannedRows } from '../../src/engine/plan-file.ts';
import { canonicalJson } from '../../src/text.ts';
import { emptyFold } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import { payloadText, signedBytes } from '../../src/approvals/payload.ts';
import { swapReference, type SwapProposal } from '../../src/engine/swap.ts';
import { swapFixture } from '../engine/plan-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const body = (amount: number, currency: string, accountName: string, iban: string) => ({
  sourceAmount: amount,
  sourceCurrency: currency,
  destinationCurrency: 'EUR',
  destinationCountryCode: 'DEU',
  method: 'SEPA',
  beneficiary: { accountName, accountCurrency: 'EUR', iban },
  narration: 'January',
});
function writePlan(o: { preparedBy?: string; amount?: string; more?: number; extra?: object; swaps?: SwapProposal[] } = {}): string {
  const path = join(dir, `plan-${++n}.json`);
  const row = (rowNumber: number, reference: string, currency: string, amount: string, name: string) => ({
    rowNumber,
    reference,
    sourceCurrency: currency,
    sourceAmount: amount,
    body: body(Number(amount), currency, name, `DE8937040044053201300${rowNumber}`),
    documents: [],
  });
  const plan = {
    kind: 'payout-batch-plan',
    v: 2,
    createdAt: '2026-01-31T09:00:00.000Z',
    file: '/payroll/january.csv',
    fileSha256: 'a'.repeat(64),
    batchId: 'a'.repeat(64),
    ...(o.preparedBy !== undefined ? { preparedBy: o.preparedBy } : {}),
    env: 'sandbox',
    baseUrl: 'https://sandbox.example',
    account: 'https://sandbox.example',
    rows: [
      row(2, 'PAY-1', 'USD', '1000.10', 'Ann Lee'),
      row(3, 'PAY-2', 'USD', o.amount ?? '0.20', 'Bo Chen'),
      row(4, 'PAY-3', 'EUR', '5', 'Cy Diaz'),
      ...Array.from({ length: o.more ?? 0 }, (_, i) => row(5 + i, `PAY-${4 + i}`, 'EUR', '1', 'Di Eng')),
    ],
    currencies: [],
    warnings: [],
    requests: { preflight: 0, estimate: 0 },
    rowsInBatch: 3 + (o.more ?? 0),
    valid: 3 + (o.more ?? 0),
    invalid: 0,
    alreadyCreated: 0,
    invalidRows: [],
    notSent: [],
    corridorsNotEnabled: [],
    ...o.extra,
    ...(o.swaps ? { swaps: o.swaps } : {}),
  };
  writeFileSync(path, JSON.stringify(plan, null, 2) + '\n');
  return path;
}

const alice = newKeyPair();
const bob = newKeyPair();
const carol = newKeyPair();
const approvers: Approver[] = [
  { name: 'Alice', publicKey: alice.publicKey, fingerprint: alice.fingerprint },
  { name: 'Bob', publicKey: bob.publicKey, fingerprint: bob.fingerprint },
  { name: 'Carol', publicKey: carol.publicKey, fingerprint: carol.fingerprint },
];
const sign = (planPath: string, name: string, key: { privatePem: string }): Approval =>
  signPlan(planPayload(loadPlan(planPath)), name, key.privatePem, 'key.pem');

describe('keys', () => {
  it('a public key reads the same as 32 raw bytes in base64 and as PEM, and anything else is refused', () => {
    const raw = parsePublicKey(alice.publicKey).raw;
    expect(raw).toHaveLength(32);
    const pem = parsePublicKey(alice.publicKey).key.export({ format: 'pem', type: 'spki' }).toString();
    expect(parsePublicKey(pem).raw.equals(raw)).toBe(true);
    expect(alice.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(() => parsePublicKey('bm90IGEga2V5')).toThrow(/not an Ed25519 public key/);
  });

  it('a private key that is not Ed25519, or not a key, is refused without quoting the file', () => {
    expect(() => signPlan(planPayload(loadPlan(writePlan({ preparedBy: 'dan' }))), 'Alice', 'SECRET-TEXT', 'k.pem')).toThrow(
      /^k\.pem is not a private key in PEM/,
    );
    try {
      signPlan(planPayload(loadPlan(writePlan({ preparedBy: 'dan' }))), 'Alice', 'SECRET-TEXT', 'k.pem');
    } catch (e) {
      expect((e as Error).message).not.toContain('SECRET');
    }
  });
});

describe('the signed payload', () => {
  it('is canonical JSON: sorted keys, no whitespace; totals are exact decimal strings per currency', () => {
    expect(canonicalJson({ b: [1, { d: 'x', c: null }], a: 'é' })).toBe('{"a":"é","b":[1,{"c":null,"d":"x"}]}');
    const p = planPayload(loadPlan(writePlan({ preparedBy: 'dan' })));
    expect(p.totals).toEqual({ EUR: '5.00', USD: '1000.30' });
    expect(p.rows[0]).toEqual({
      rowNumber: 2,
      reference: 'PAY-1',
      beneficiary: 'Ann Lee',
      account: '********3002',
      method: 'SEPA',
      currency: 'USD',
      amount: '1000.10',
      bodySha256: bodyDigest(body(1000.1, 'USD', 'Ann Lee', 'DE89370400440532013002')),
      documents: [],
    });
    expect(p.preparedBy).toBe('dan');
    expect(p.planSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a signature verifies over the plan it was made on, and not once the plan is changed by one byte', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const a = sign(path, 'Alice', alice);
    expect(verifyApproval(planPayload(loadPlan(path)), a)).toEqual({ ok: true });
    // An amount changed, and (separately) a change outside the signed fields: both break it.
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('"sourceAmount": 0.2', '"sourceAmount": 9000.2'));
    expect(verifyApproval(planPayload(loadPlan(path)), a)).toEqual({ ok: false, reason: 'signature does not match this plan' });
    writeFileSync(path, text.replace('"warnings": []', '"warnings": ["x"]'));
    expect(verifyApproval(planPayload(loadPlan(path)), a).ok).toBe(false);
    writeFileSync(path, text);
    expect(verifyApproval(planPayload(loadPlan(path)), a).ok).toBe(true);
    // Its name and time are signed too.
    expect(verifyApproval(planPayload(loadPlan(path)), { ...a, name: 'Bob' }).ok).toBe(false);
    expect(verifyApproval(planPayload(loadPlan(path)), { ...a, signedAt: '2020-01-01T00:00:00.000Z' }).ok).toBe(false);
  });

  it('covers each swap of the plan: changing any of its fields changes the signed bytes; a plan without swaps signs as before', () => {
    const swap = swapFixture({
      reference: swapReference(['R1'], 'USD'),
      sourceWalletId: '11111111-1111-4111-8111-111111111111',
      destinationWalletId: '22222222-2222-4222-8222-222222222222',
    });
    const payload = planPayload(loadPlan(writePlan({ preparedBy: 'dan', swaps: [swap] })));
    expect(payload.swaps).toEqual([swap]);
    expect(payloadText(payload)).toContain(
      `swap first, reference ${swap.reference}: 930.91 EUR from the EUR wallet -> 1,010.21 USD, at USD/EUR 0.9215 (EUR per USD); shortfall 1,000.20 + margin 10.01 USD`,
    );
    // (the plan file's digest aside, which any byte changes: the swap itself is in what is signed)
    const bytes = (swaps: SwapProposal[]) =>
      signedBytes(
        { ...planPayload(loadPlan(writePlan({ preparedBy: 'dan', swaps }))), planSha256: '' },
        { name: 'Alice', signedAt: 'now' },
      );
    const signed = bytes([swap]).toString();
    const changed = (path: string[], value: string) => {
      const s = structuredClone(swap) as unknown as Record<string, unknown>;
      let o = s;
      for (const k of path.slice(0, -1)) o = o[k] as Record<string, unknown>;
      o[path.at(-1)!] = value;
      return bytes([s as unknown as SwapProposal]).toString();
    };
    const fields = [
      ['reference'],
      ['currency'],
      ['fromCurrency'],
      ['sourceWalletId'],
      ['destinationWalletId'],
      ['swapAmount'],
      ['amountToBeSent'],
      ['pair', 'baseCurrency'],
      ['pair', 'quoteCurrency'],
      ['pair', 'rate'],
      ['margin'],
      ['balances', '1', 'afterBatch'],
    ];
    for (const f of fields) expect(changed(f, '1'), f.join('.')).not.toBe(signed);
    const none = planPayload(loadPlan(writePlan({ preparedBy: 'dan' })));
    expect('swaps' in none).toBe(false);
  });

  it('shows the approver every account a row pays: a SWIFT accountNumber beside its IBAN too', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const plan = JSON.parse(readFileSync(path, 'utf8')) as { rows: { body: { method: string; beneficiary: object } }[] };
    plan.rows[0]!.body.method = 'SWIFT';
    plan.rows[0]!.body.beneficiary = { ...plan.rows[0]!.body.beneficiary, accountNumber: '99998888', swiftCode: 'COBADEFFXXX' };
    writeFileSync(path, JSON.stringify(plan));
    expect(payloadText(planPayload(loadPlan(path)))).toContain('PAY-1 | Ann Lee | ********3002 / ****8888 | SWIFT | USD 1,000.10');
  });

  it('a file that is not a plan is refused', () => {
    const p = join(dir, 'not-a-plan.json');
    writeFileSync(p, '{"rows": []}');
    expect(() => loadPlan(p)).toThrow(/is not a plan file of payout-batch/);
    writeFileSync(p, 'reference,amount\n');
    expect(() => loadPlan(p)).toThrow(/is not a plan file \(not JSON\)/);
  });
});

describe('the four-eyes rule (checkApprovals)', () => {
  const check = (path: string, approvals: Approval[], required = 2, list = approvers) =>
    checkApprovals(loadPlan(path), approvals, list, required);

  it('two distinct listed approvers who did not make the plan: ok', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const r = check(path, [sign(path, 'Alice', alice), sign(path, 'bob', bob)]);
    expect(r).toMatchObject({ ok: true, counted: ['Alice', 'Bob'], problems: [] });
  });

  it("the plan's maker does not count, whatever their key", () => {
    const path = writePlan({ preparedBy: 'alice' });
    const r = check(path, [sign(path, 'Alice', alice), sign(path, 'Bob', bob)]);
    expect(r.ok).toBe(false);
    expect(r.counted).toEqual(['Bob']);
    expect(r.message).toBe('1 valid approval of 2 required (Bob): Alice (maker of the plan cannot approve it)');
  });

  it("under an account policy's expiry, an approval older than it, or dated after now, does not count", () => {
    const path = writePlan({ preparedBy: 'dan' });
    const approvals = [sign(path, 'Alice', alice), sign(path, 'Bob', bob)];
    const signedAt = Date.parse(approvals[0]!.signedAt);
    const expiry = (now: number) => ({ afterMs: 3_600_000, now: new Date(now) });
    expect(checkApprovals(loadPlan(path), approvals, approvers, 2, expiry(signedAt + 60_000)).ok).toBe(true);
    const late = checkApprovals(loadPlan(path), approvals, approvers, 2, expiry(signedAt + 2 * 3_600_000));
    expect(late.ok).toBe(false);
    expect(late.problems[0]).toMatch(/^Alice: signed .*: the account's policy counts approvals of the last 1h only, sign again$/);
    const early = checkApprovals(loadPlan(path), approvals, approvers, 2, expiry(signedAt - 3_600_000));
    expect(early.problems[0]).toMatch(/^Alice: dated .*, after now$/);
  });

  it('under an expiry, an approval signed with a signedAt that is not a date says so and what a date is', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const payload = planPayload(loadPlan(path));
    const signedAt = 'last Tuesday';
    const signature = cryptoSign(null, signedBytes(payload, { name: 'Alice', signedAt }), createPrivateKey(alice.privatePem));
    const undated = { ...sign(path, 'Alice', alice), signedAt, signature: signature.toString('base64') };
    const r = checkApprovals(loadPlan(path), [undated], approvers, 1, { afterMs: 3_600_000 });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      'Alice: signedAt "last Tuesday" is not a date (an ISO 8601 time such as 2026-12-01T10:00:00Z): sign again',
    ]);
  });

  it("under an expiry, a signedAt without its zone is no date: read in each host's zone, hosts would count it apart", () => {
    const path = writePlan({ preparedBy: 'dan' });
    const payload = planPayload(loadPlan(path));
    const signedAt = '2026-12-01T10:00:00';
    const signature = cryptoSign(null, signedBytes(payload, { name: 'Alice', signedAt }), createPrivateKey(alice.privatePem));
    const zoneless = { ...sign(path, 'Alice', alice), signedAt, signature: signature.toString('base64') };
    const expiry = { afterMs: 3_600_000, now: new Date('2026-12-01T10:30:00Z') };
    const was = process.env.TZ;
    const problems = ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati'].map((zone) => {
      process.env.TZ = zone; // (Node reads it again when it is set)
      try {
        return checkApprovals(loadPlan(path), [zoneless], approvers, 1, expiry).problems;
      } finally {
        if (was === undefined) delete process.env.TZ;
        else process.env.TZ = was;
      }
    });
    const refused = ['Alice: signedAt "2026-12-01T10:00:00" is not a date (an ISO 8601 time such as 2026-12-01T10:00:00Z): sign again'];
    expect(problems).toEqual([refused, refused, refused]);
  });

  it('the same approver twice counts once', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const r = check(path, [sign(path, 'Alice', alice), sign(path, 'Alice', alice)]);
    expect(r.ok).toBe(false);
    expect(r.counted).toEqual(['Alice']);
    expect(r.problems).toEqual(['Alice: already counted once']);
  });

  it('an unlisted name, and a key listed under another name, are refused', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const eve = newKeyPair();
    const r = check(path, [sign(path, 'Eve', eve), sign(path, 'Carol', bob), sign(path, 'Alice', alice)]);
    expect(r.ok).toBe(false);
    expect(r.counted).toEqual(['Alice']);
    expect(r.problems).toEqual([
      'Eve: not in the approvers list',
      `Carol: signed with key ${bob.fingerprint}, not the key listed for Carol (${carol.fingerprint})`,
    ]);
  });

  it('a tampered plan invalidates the approvals made before', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const approvals = [sign(path, 'Alice', alice), sign(path, 'Bob', bob)];
    writeFileSync(path, readFileSync(path, 'utf8').replace('"PAY-2"', '"PAY-9"'));
    const r = check(path, approvals);
    expect(r.ok).toBe(false);
    expect(r.message).toBe(
      '0 valid approvals of 2 required: Alice: signature does not match this plan; Bob: signature does not match this plan',
    );
  });

  it('a plan that does not record its maker cannot be approved', () => {
    const path = writePlan();
    const r = check(path, [sign(path, 'Alice', alice), sign(path, 'Bob', bob)]);
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/does not record who made it/);
  });
});

describe('the approvals file and the approvers list', () => {
  it('approvals are added beside the plan; the same name again replaces its earlier one; two at once both land', async () => {
    const path = writePlan({ preparedBy: 'dan' });
    const before = readFileSync(path);
    const file = approvalsPathFor(path);
    expect(readApprovals(file)).toEqual([]);
    await Promise.all([addApproval(file, sign(path, 'Alice', alice)), addApproval(file, sign(path, 'Bob', bob))]);
    expect(
      readApprovals(file)
        .map((a) => a.name)
        .sort(),
    ).toEqual(['Alice', 'Bob']);
    const again = await addApproval(file, sign(path, 'alice', alice));
    expect(again.replaced).toBe(true);
    expect(readApprovals(file).map((a) => a.name)).toEqual(['Bob', 'alice']);
    expect(readFileSync(path).equals(before)).toBe(true); // the plan itself is never rewritten

    const view = approvalsView(path, approvers);
    expect(view.preparedBy).toBe('dan');
    expect(view.approvals).toEqual([
      expect.objectContaining({ name: 'Bob', valid: true, publicKeyFingerprint: bob.fingerprint }),
      expect.objectContaining({ name: 'alice', valid: true }),
    ]);
    writeFileSync(path, before.toString().replace('"EUR"', '"GBP"'));
    expect(approvalsView(path).approvals.map((a) => a.reason)).toEqual([
      'signature does not match this plan',
      'signature does not match this plan',
    ]);
  });

  it('the approvers list takes base64 or PEM keys, and refuses a name or a key listed twice', () => {
    const p = join(dir, 'approvers.json');
    const pem = parsePublicKey(bob.publicKey).key.export({ format: 'pem', type: 'spki' }).toString();
    writeFileSync(
      p,
      JSON.stringify([
        { name: 'Alice', publicKey: alice.publicKey },
        { name: 'Bob', publicKey: pem },
      ]),
    );
    expect(readApprovers(p).map((a) => [a.name, a.publicKey])).toEqual([
      ['Alice', alice.publicKey],
      ['Bob', bob.publicKey],
    ]);
    writeFileSync(
      p,
      JSON.stringify({
        approvers: [
          { name: 'Alice', publicKey: alice.publicKey },
          { name: 'alice', publicKey: bob.publicKey },
        ],
      }),
    );
    expect(() => readApprovers(p)).toThrow(/entry 2 \(alice\) repeats the name of Alice/);
    writeFileSync(
      p,
      JSON.stringify([
        { name: 'Alice', publicKey: alice.publicKey },
        { name: 'Bob', publicKey: alice.publicKey },
      ]),
    );
    expect(() => readApprovers(p)).toThrow(/entry 2 \(Bob\) repeats the key of Alice/);
    writeFileSync(p, JSON.stringify([{ name: 'Alice', key: alice.publicKey }]));
    expect(() => readApprovers(p)).toThrow(/is not an approvers list/);
    // what `approver-key new` writes: one object a file, one a line when several are `cat` together
    writeFileSync(p, JSON.stringify({ name: 'Alice', publicKey: alice.publicKey }) + '\n');
    expect(readApprovers(p).map((a) => a.name)).toEqual(['Alice']);
    writeFileSync(
      p,
      `${JSON.stringify({ name: 'Alice', publicKey: alice.publicKey })}\n${JSON.stringify({ name: 'Bob', publicKey: bob.publicKey })}\n`,
    );
    expect(readApprovers(p).map((a) => a.name)).toEqual(['Alice', 'Bob']);
    writeFileSync(p, '{"name": "Alice",');
    expect(() => readApprovers(p)).toThrow(/is not JSON: .*payout-batch approvers add \*\.approver\.pub\.json --out FILE/);
  });
});

describe('names of makers and approvers', () => {
  it('compare after NFKC and case folding', () => {
    expect(sameName('Dan', ' DAN ')).toBe(true);
    expect(sameName('Ｄａｎ', 'dan')).toBe(true); // full-width
    expect(sameName('Straße', 'STRASSE')).toBe(true);
  });

  it('take names that look alike for one person (Unicode TR39 skeletons, unhomoglyph)', () => {
    expect(sameName('Dаn', 'Dan')).toBe(true); // Cyrillic а: also refused below as mixed scripts
    expect(sameName('вох', 'Box')).toBe(true); // all Cyrillic, no mix to refuse: the skeleton catches it
    expect(sameName('Ian', 'lan')).toBe(true);
    expect(sameName('Alice', 'Bob')).toBe(false);
    expect(sameName('Kim', 'Kin')).toBe(false);
  });

  it('compare as people would: m / rn, and without diacritics, punctuation or spaces', () => {
    expect(sameName('Kim', 'Kirn')).toBe(true);
    for (const alice of ['Alíce', 'Alice.', 'Al ice']) expect(sameName(alice, 'Alice')).toBe(true);
    expect(sameName('Zoë', 'Zoe')).toBe(true);
  });

  it('a name that mixes scripts, or holds an invisible or bidi control character, is refused with the reason', () => {
    expect(nameProblem('Dаn')).toBe('the name mixes the Latin and Cyrillic scripts (a look-alike of another name)');
    expect(nameProblem('Da\u200bn')).toMatch(/invisible or bidirectional control character \(U\+200B\)/);
    expect(nameProblem('\u202eDan')).toMatch(/U\+202E/);
    expect(nameProblem('  ')).toBe('the name is empty');
    for (const ok of ['Dan', 'Zoë Müller-Łukasz', 'Дмитрий', '山田 太郎', '田中さん', 'Ana 2', "O'Brien"])
      expect(nameProblem(ok)).toBeUndefined();
  });

  it('a look-alike maker makes the plan unapprovable; a look-alike approver does not count; a list naming one is refused', () => {
    const path = writePlan({ preparedBy: 'Dаn' });
    const r = checkApprovals(loadPlan(path), [sign(path, 'Alice', alice), sign(path, 'Bob', bob)], approvers, 2);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatch(/^the plan's maker "Dаn" cannot be told from an approver: the name mixes the Latin and Cyrillic scripts/);
    const plain = writePlan({ preparedBy: 'dan' });
    expect(checkApprovals(loadPlan(plain), [sign(plain, 'Аlice', alice)], approvers, 1).problems).toEqual([
      'Аlice: the name mixes the Cyrillic and Latin scripts (a look-alike of another name)',
    ]);
    const list = join(dir, 'lookalike-approvers.json');
    writeFileSync(list, JSON.stringify([{ name: 'Dаn', publicKey: alice.publicKey }]));
    expect(() => readApprovers(list)).toThrow(/entry 1 \("Dаn"\): the name mixes the Latin and Cyrillic scripts/);
  });

  it("a key the maker signed the plan with never counts as an approver's, whatever name it signs under", () => {
    const path = writePlan({ preparedBy: 'Dan' });
    const dan = newKeyPair();
    const list: Approver[] = [...approvers.slice(1), { name: 'Daniel', publicKey: dan.publicKey, fingerprint: dan.fingerprint }];
    const r = checkApprovals(loadPlan(path), [sign(path, 'Dan', dan), sign(path, 'Daniel', dan), sign(path, 'Bob', bob)], list, 2);
    expect(r.ok).toBe(false);
    expect(r.counted).toEqual(['Bob']);
    expect(r.problems).toEqual([
      'Dan (maker of the plan cannot approve it)',
      `Daniel (signed with key ${dan.fingerprint}, which the plan's maker signed it with)`,
    ]);
  });
});

describe("the maker's signature (an account policy's rule)", () => {
  it('a plan its maker did not sign cannot be approved; signed, the approvals count and the maker key counts for nobody', () => {
    const path = writePlan({ preparedBy: 'Dan' });
    const dan = newKeyPair();
    const unsigned = checkApprovals(loadPlan(path), [sign(path, 'Alice', alice), sign(path, 'Bob', bob)], approvers, 2, undefined, true);
    expect(unsigned.ok).toBe(false);
    expect(unsigned.message).toContain('the plan is not signed by its maker');
    const signed = [sign(path, 'Dan', dan), sign(path, 'Alice', alice), sign(path, 'Bob', bob)];
    expect(checkApprovals(loadPlan(path), signed, approvers, 2, undefined, true)).toMatchObject({ ok: true, counted: ['Alice', 'Bob'] });
  });
});

describe('fingerprints', () => {
  it('are computed from the key: a stored fingerprint that differs makes the approval invalid, in the view and the rule', () => {
    const path = writePlan({ preparedBy: 'dan' });
    const dan = newKeyPair();
    // Alice's name signed with Dan's key, its fingerprint then edited to Alice's; and Bob's own approval with its fingerprint edited.
    const forged = { ...sign(path, 'Alice', dan), publicKeyFingerprint: alice.fingerprint };
    const edited = { ...sign(path, 'Bob', bob), publicKeyFingerprint: 'f'.repeat(16) };
    const r = checkApprovals(loadPlan(path), [forged, edited], approvers, 1);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      `Alice: its stored fingerprint ${alice.fingerprint} is not that of its key (${dan.fingerprint}): the approvals file was edited`,
      `Bob: its stored fingerprint ${'f'.repeat(16)} is not that of its key (${bob.fingerprint}): the approvals file was edited`,
    ]);
    writeFileSync(approvalsPathFor(path), JSON.stringify([forged]));
    expect(approvalsView(path).approvals).toEqual([
      expect.objectContaining({ name: 'Alice', publicKeyFingerprint: dan.fingerprint, valid: false }),
    ]);
  });
});

describe('plan files', () => {
  it('one of another version, or lacking what the report shows, is refused, saying to make it again', () => {
    const p = join(dir, 'other.plan.json');
    writeFileSync(p, readFileSync(writePlan({ preparedBy: 'dan' }), 'utf8').replace('"v": 2', '"v": 1'));
    expect(() => loadPlan(p)).toThrow(/is not a plan file of payout-batch: v: .*make one with `payout-batch plan FILE --out PLAN`/);
    writeFileSync(p, readFileSync(writePlan(), 'utf8').replace('"notSent": [],', ''));
    expect(() => loadPlan(p)).toThrow(/is not a plan file of payout-batch: notSent: /);
  });
});

describe('what run --plan checks against the signed bodies (verifyPlannedRows)', () => {
  const payout = (name: string, documents: string[] = []) => ({
    rowNumber: 2,
    reference: 'PAY-1',
    sourceAmount: new Dec('1000.10'),
    sourceCurrency: 'USD',
    destinationCurrency: 'EUR',
    destinationCountryCode: 'DEU',
    method: 'SEPA' as const,
    beneficiary: { accountName: name, accountCurrency: 'EUR', iban: 'DE89370400440532013002' },
    narration: 'January',
    documents,
    withdrawal: true,
  });
  const plan = parsePlanFile(readFileSync(writePlan({ preparedBy: 'dan' }), 'utf8'), 'p.json');
  plan.rows = plan.rows.slice(0, 1);
  const batch = (name: string, sha = 'c'.repeat(64)) => ({
    identity: { batchId: 'a'.repeat(64), source: 'content' as const, fileSha256: 'a'.repeat(64) },
    rows: [{ rowNumber: 2, cells: {}, payout: payout(name, ['/d/slip.pdf']), problems: [] }],
    documents: new Map([['/d/slip.pdf', { bytes: 1, sha256: sha, symlink: false }]]),
  });
  plan.rows[0]!.documents = [{ file: '/d/slip.pdf', sha256: 'c'.repeat(64) }];

  it('the body digest is of canonical JSON without the document URL', () => {
    const b = body(1, 'USD', 'Ann', 'DE1');
    expect(bodyDigest({ ...b, supportingDocument: 'https://x/doc' })).toBe(bodyDigest(b));
    expect(bodyDigest(Object.fromEntries(Object.entries(b).reverse()))).toBe(bodyDigest(b));
    expect(bodyDigest({ ...b, beneficiary: { ...b.beneficiary, accountName: 'Mallory' } })).not.toBe(bodyDigest(b));
  });

  it('sends the planned bodies or refuses: another payee, other document bytes, another journalled body', () => {
    expect(() => verifyPlannedRows(plan, batch('Ann Lee'), undefined)).not.toThrow();
    expect(() => verifyPlannedRows(plan, batch('Mallory'), undefined)).toThrow(/row 2 does not give the planned body of PAY-1/);
    expect(() => verifyPlannedRows(plan, batch('Ann Lee', 'd'.repeat(64)), undefined)).toThrow(
      /the documents of PAY-1 are not the planned ones/,
    );
    const sent = JSON.stringify({ ...plan.rows[0]!.body, beneficiary: { ...plan.rows[0]!.body.beneficiary, accountName: 'Mallory' } });
    const folded = emptyFold();
    folded.rows.set('PAY-1', { ref: 'PAY-1', phase: 'unknown', attempt: 1, body: sent, documents: [], patched: false });
    expect(() => verifyPlannedRows(plan, batch('Ann Lee'), folded)).toThrow(/PAY-1 was sent before with another body/);
  });
});

describe('what approve shows before it signs (approveText)', () => {
  it('the totals, the maker, the first 15 payees and a count, and what is already paid', () => {
    const path = writePlan({
      preparedBy: 'dan',
      more: 15,
      extra: {
        alreadyCreated: 2,
        notSent: [{ rowNumber: 30, code: 'ALREADY_PAID', message: 'already paid at this account (payout PO-1)' }],
      },
    });
    const plan = loadPlan(path);
    const text = approveText(plan, planPayload(plan), 'p.json');
    expect(text).toContain('18 payouts (EUR 20.00, USD 1,000.30) in sandbox (https://sandbox.example), account https://sandbox.example');
    expect(text).toContain('prepared by dan at 2026-01-31T09:00:00.000Z');
    expect(text).toContain('PAY-1 | Ann Lee | ');
    expect(text).toContain('PAY-15 | Di Eng');
    expect(text).not.toContain('PAY-16 |');
    expect(text).toContain('… and 3 more payees\n  every payee: `payout-batch report p.json`');
    expect(text).toContain('already paid: 2 rows of this batch, created by an earlier run: not paid again');
    expect(text).toContain('already paid: row 30: already paid at this account (payout PO-1)');
    const small = loadPlan(writePlan({ preparedBy: 'dan' }));
    expect(approveText(small, planPayload(small), 'p.json')).toContain('already paid: nothing');
  });
});
