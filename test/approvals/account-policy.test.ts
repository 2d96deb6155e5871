// The account's approval policy, pure parts: which totals need approvals, durations, and approvals
// that expire.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileLedger } from '../../src/ledger/file.ts';
import { countUnapproved } from '../../src/ledger/account-ledger.ts';
import { addApproval, approvalsPathFor, newKeyPair } from '../../src/approvals/approvals-file.ts';
import { applyProposal, loadProposal, proposalPayload, proposalText, writeProposal } from '../../src/approvals/policy-change.ts';
import { signPlan } from '../../src/approvals/sign.ts';
import { parseDuration } from '../../src/text.ts';
import {
  needsApprovals,
  policyGuard,
  type AccountPolicy,
  type PolicyRecord,
  type PolicyStore,
} from '../../src/approvals/account-policy.ts';

const policy = (over: Partial<AccountPolicy> = {}): AccountPolicy => ({
  v: 1,
  account: 'https://api.example.com',
  requireApprovals: 2,
  approvers: [{ name: 'Alice', publicKey: 'a', fingerprint: 'fa' }],
  setAt: '2026-01-01T00:00:00.000Z',
  setBy: 'tester@host',
  version: 1,
  history: [],
  ...over,
});
const usd = (amount: string, rows = 1) => ({ currencies: [{ currency: 'USD', rows, amount }] });

describe('needsApprovals', () => {
  it('without amounts: every run that sends something', () => {
    expect(needsApprovals(policy(), usd('0.01'))).toBe(true);
    expect(needsApprovals(policy(), usd('500.00', 0))).toBe(false);
  });

  it('with --above: only more than the amount in that currency, and any amount in a currency it does not name', () => {
    const p = policy({ above: { USD: '10000' } });
    expect(needsApprovals(p, usd('10000.00'))).toBe(false);
    expect(needsApprovals(p, usd('10000.01'))).toBe(true);
    expect(needsApprovals(p, { currencies: [{ currency: 'EUR', rows: 1, amount: '1.00' }] })).toBe(true);
  });

  it("with --above: a payout today's count already holds, as it is, is counted once (a resumed run), changed it is counted", () => {
    const counted = [
      { reference: 'R1', currency: 'USD', amount: '60.00' },
      { reference: 'R2', currency: 'USD', amount: '60.00' },
    ];
    const p = policy({ above: { USD: '150' }, sentToday: { USD: '120.00' }, countedToday: counted });
    expect(needsApprovals(p, { ...usd('120.00', 2), payouts: counted })).toBe(false);
    expect(needsApprovals(p, { ...usd('660.00', 2), payouts: [counted[0]!, { ...counted[1]!, amount: '600.00' }] })).toBe(true);
    expect(needsApprovals(p, { ...usd('60.00'), payouts: [{ reference: 'R3', currency: 'USD', amount: '60.00' }] })).toBe(true);
  });

  it('the guard says which policy refuses, and nothing when approved', () => {
    expect(policyGuard(policy()).policy!(usd('1.00'))).toMatch(/^this account's approval policy needs 2 approvals of Alice: make a plan/);
    expect(policyGuard(policy(), { ok: false, message: '1 valid approval of 2 required' }).policy!(usd('1.00'))).toContain(
      ': 1 valid approval of 2 required',
    );
    expect(policyGuard(policy(), { ok: true, message: '' }).policy!(usd('1.00'))).toBeUndefined();
  });

  it("the day's count: a reference it holds is counted once as it was, never as another amount (a rejected row edited, sent again)", () => {
    const held = [{ reference: 'R1', currency: 'USD', amount: '1.00' }];
    const above = { USD: '1000' };
    expect(countUnapproved(held, { payouts: held, above })).toMatchObject({ taken: true, totals: { USD: '1' } });
    const raised = countUnapproved(held, { payouts: [{ reference: 'R1', currency: 'USD', amount: '999.00' }], above });
    expect(raised).toMatchObject({ taken: false, totals: { USD: '1' } });
  });
});

it("a policy change shows its approvers' keys, and a key not the one in force, to those who sign it", () => {
  const [alice, bob, mallory] = [newKeyPair(), newKeyPair(), newKeyPair()];
  const listed = (name: string, k: typeof alice) => ({ name, publicKey: k.publicKey, fingerprint: k.fingerprint });
  const inForce = [listed('Alice', alice), listed('Bob', bob)];
  // (the same names, one more rule: Bob's key is now Mallory's, and the list says Bob's fingerprint)
  const next = {
    requireApprovals: 2,
    approvers: [listed('Alice', alice), { ...listed('Bob', mallory), fingerprint: bob.fingerprint }],
    expireAfterMs: 86_400_000,
  };
  const proposal = {
    ...policy(),
    kind: 'payout-batch-policy-change' as const,
    store: 'host' as const,
    baseVersion: 1,
    from: '2 approvals of Alice, Bob',
    policy: next,
    proposedAt: '2026-01-02T00:00:00.000Z',
    proposedBy: 'mallory@host',
  };
  const text = proposalText(proposal, inForce);
  expect(text).toContain(`Alice key ${alice.fingerprint}`);
  expect(text).toContain(`Bob key ${mallory.fingerprint}, not ${bob.fingerprint} as in force`);
});

it("a policy change signed longer ago than the policy's approvals expire does not count, as a plan's approval would not", async () => {
  const [alice, bob] = [newKeyPair(), newKeyPair()];
  const approvers = [alice, bob].map((k, i) => ({ name: ['Alice', 'Bob'][i]!, publicKey: k.publicKey, fingerprint: k.fingerprint }));
  const current = policy({ approvers, expireAfterMs: 7 * 86_400_000 });
  const written: unknown[] = [];
  const store: PolicyStore = {
    where: 'memory',
    read: async (): Promise<PolicyRecord> => ({ version: 1, history: [], policy: current }),
    write: async (next) => {
      written.push(next);
      return { version: 2, history: [] };
    },
  };
  const path = join(mkdtempSync(join(tmpdir(), 'pb-proposal-')), 'policy-change.json');
  const signAll = async () => {
    for (const [name, k] of [
      ['Alice', alice],
      ['Bob', bob],
    ] as const)
      await addApproval(approvalsPathFor(path), signPlan(proposalPayload(loadProposal(path)), name, k.privatePem, 'key'));
  };
  // a removal both signed eight days ago, then let lie
  vi.useFakeTimers({ now: Date.now() - 8 * 86_400_000, toFake: ['Date'] });
  try {
    await writeProposal(path, { current, store: 'host', next: null, by: 'runner@host' });
    await signAll();
  } finally {
    vi.useRealTimers();
  }
  await expect(applyProposal(store, loadProposal(path))).rejects.toThrow(/0 of the 2 approvals .*last 7d only/);
  expect(written).toEqual([]);
  await signAll();
  await expect(applyProposal(store, loadProposal(path))).resolves.toMatchObject({ tally: expect.stringContaining('(Alice, Bob)') });
  expect(written).toEqual([null]);
});

it('parseDuration reads days, hours and minutes, and refuses anything else', () => {
  expect(parseDuration('7d')).toBe(7 * 86_400_000);
  expect(parseDuration('12h')).toBe(12 * 3_600_000);
  expect(parseDuration('90m')).toBe(90 * 60_000);
  for (const bad of ['0d', '7', '1w', '-1d']) expect(() => parseDuration(bad)).toThrow(/write a duration/);
});

describe('proposalText', () => {
  const proposal = (store: 'host' | 'team') =>
    ({
      account: 'http://127.0.0.1:4010',
      store,
      baseVersion: 1,
      from: 'two approvals',
      proposedBy: 'a@h',
      proposedAt: 't',
    }) as Parameters<typeof proposalText>[0];
  it('names the account and where its policy is kept, without stray spaces', () => {
    expect(proposalText(proposal('host'))).toMatch(/^change the approval policy of http:\/\/127\.0\.0\.1:4010, version 1: two approvals,/);
    expect(proposalText(proposal('team'))).toMatch(/of http:\/\/127\.0\.0\.1:4010 \(in the team ledger\), version 1/);
  });
});

it("the day's count in a file, its last line torn by a disk that filled: read without it, and the next payout on a line of its own", async () => {
  const ledger = new FileLedger('https://api.example.com', mkdtempSync(join(tmpdir(), 'pb-unapproved-')));
  const day = '2026-11-30';
  writeFileSync(join(ledger.dir, `unapproved-${day}.jsonl`), '{"reference":"U-1","currency":"USD","amount":"40"}\n{"reference":"U-2","cur');
  const take = (reference: string) => ({ payouts: [{ reference, currency: 'USD', amount: '30' }], above: { USD: '100' } });
  expect(await ledger.unapproved(day, take('U-3'))).toMatchObject({ taken: true, totals: { USD: '70' } });
  expect((await ledger.unapproved(day)).recorded.map((p) => p.reference)).toEqual(['U-1', 'U-3']);
  expect((await ledger.unapproved(day, take('U-4'))).totals).toEqual({ USD: '100' });
});
