// A clearance's maker never counts as its approver (issue 42): not by the name it was made under,
// and not by a key the maker signed it with, whatever name that key signs under later (as a
// plan's maker, approvals/sign.ts makerKeys).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addApproval, approvalsPathFor, type Approver, newKeyPair } from '../../src/approvals/approvals-file.ts';
import { CLEARANCE_KIND, clearancePayload, clearancesIn, loadClearance, writeClearance } from '../../src/approvals/clearance.ts';
import { signPlan } from '../../src/approvals/sign.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const clearanceIn = async (dir: string, madeBy: string, expiresAt = new Date(Date.now() + 86_400_000).toISOString()) =>
  writeClearance(dir, {
    kind: CLEARANCE_KIND,
    v: 1,
    reference: 'PAY-1',
    payee: 'digest',
    payeeText: 'Ana Lopez, ****1234',
    list: 'ofac-sdn',
    entryId: '36',
    entryName: 'LOPEZ, Anna',
    entryDigest: 'digest',
    reason: 'another person: born 1990, not 1961',
    expiresAt,
    madeAt: new Date().toISOString(),
    madeBy,
  });

describe('a clearance approved by its maker (approvals/clearance.ts)', () => {
  const alice = newKeyPair();
  const bob = newKeyPair();
  const approvers: Approver[] = [
    { name: 'alice', publicKey: alice.publicKey, fingerprint: alice.fingerprint },
    { name: 'bob', publicKey: bob.publicKey, fingerprint: bob.fingerprint },
  ];
  const signAs = async (path: string, name: string, pem: string) =>
    addApproval(approvalsPathFor(path), signPlan(clearancePayload(loadClearance(path)), name, pem, 'test'));

  it('counts a listed approver who is not its maker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-clear-'));
    dirs.push(dir);
    const path = await clearanceIn(dir, 'carol');
    await signAs(path, 'bob', bob.privatePem);
    expect(clearancesIn(dir, approvers, 1).map((c) => [c.signedBy, c.problem])).toEqual([[['bob'], undefined]]);
  });

  it('does not count the key its maker signed it with, under any name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-clear-'));
    dirs.push(dir);
    // alice makes it under another name and signs it as its maker, then approves it as herself
    const path = await clearanceIn(dir, 'carol');
    await signAs(path, 'carol', alice.privatePem);
    await signAs(path, 'alice', alice.privatePem);
    const [c] = clearancesIn(dir, approvers, 1);
    expect(c!.signedBy).toEqual([]);
    expect(c!.problem).toMatch(/0 of 1/);
    // a second approver's signature still counts
    await signAs(path, 'bob', bob.privatePem);
    expect(clearancesIn(dir, approvers, 1)[0]!.signedBy).toEqual(['bob']);
  });

  it("under an account's policy, counts none its maker did not sign", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-clear-'));
    dirs.push(dir);
    const path = await clearanceIn(dir, 'carol');
    await signAs(path, 'bob', bob.privatePem);
    const [unsigned] = clearancesIn(dir, approvers, 1, true);
    expect(unsigned!.problem).toMatch(/not signed by its maker/);
    const carol = newKeyPair();
    await signAs(path, 'carol', carol.privatePem);
    expect(clearancesIn(dir, approvers, 1, true).map((c) => [c.signedBy, c.problem])).toEqual([[['bob'], undefined]]);
  });

  it('counts none whose expiry is not a time: it never clears for good', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-clear-'));
    dirs.push(dir);
    const path = await clearanceIn(dir, 'carol', 'next year');
    await signAs(path, 'bob', bob.privatePem);
    expect(clearancesIn(dir, approvers, 1)[0]!.problem).toMatch(/expired/);
  });

  it("counts none whose expiry names no zone: read in the host's, it would clear the payee in Los Angeles and not in Kiritimati", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-clear-'));
    dirs.push(dir);
    const zoneless = new Date(Date.now() + 6 * 3_600_000).toISOString().slice(0, 19); // in 6 hours, UTC
    const path = await clearanceIn(dir, 'carol', zoneless);
    await signAs(path, 'bob', bob.privatePem);
    const was = process.env.TZ;
    const problems = ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati'].map((zone) => {
      process.env.TZ = zone; // (Node reads it again when it is set)
      try {
        return clearancesIn(dir, approvers, 1)[0]!.problem;
      } finally {
        if (was === undefined) delete process.env.TZ;
        else process.env.TZ = was;
      }
    });
    expect(problems).toEqual([`expired ${zoneless}`, `expired ${zoneless}`, `expired ${zoneless}`]);
  });
});
