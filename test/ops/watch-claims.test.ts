// The watch claims of the team ledger (src/ledger/postgres.ts) against a real PostgreSQL: one claim
// per content and account whichever process asks first, even at once; a dead holder's claim taken
// over by one process only; an ended claim kept unless the caller may run it again.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimRequest } from '../../src/ledger/account-ledger.ts';
import { claimContent, claimOf, endClaim } from '../../src/ledger/postgres.ts';
import { ledgerProcesses, withPostgres } from '../pg/database.ts';
import { until } from './helpers.ts';

describe.runIf(withPostgres)('watch claims in the team ledger', () => {
  /** A watch process on the ledger (its own session lock). */
  const processes = ledgerProcesses('watch');
  const proc = processes.connect;
  let n = 0;
  /** The same content claimed from a new claim folder (host `h`). */
  const ask = (host: string, sha256 = 'a'.repeat(64), account = 'http://127.0.0.1:1'): ClaimRequest => ({
    account,
    sha256,
    claim: `claim-${++n}-${host}`,
    name: 'payroll.csv',
    host,
  });

  beforeAll(processes.init);
  afterEach(processes.closeAll);

  it('gives a content to the first process; the others learn who holds it, per account', async () => {
    const [a, b] = [await proc(), await proc()];
    const sha = 'b'.repeat(64);
    const first = ask('host-a', sha);
    expect(await claimContent(a, first)).toEqual({ held: true });
    expect(await claimContent(a, first)).toEqual({ held: true }); // its own again (a resumed claim)
    const other = await claimContent(b, ask('host-b', sha));
    expect(other).toMatchObject({ held: false, by: { host: 'host-a', claim: first.claim, name: 'payroll.csv', state: 'running' } });
    // another claim folder of the same process is not the claim either
    expect(await claimContent(a, ask('host-a', sha))).toMatchObject({ held: false });
    // another account: its own claim
    expect(await claimContent(b, ask('host-b', sha, 'http://127.0.0.1:2'))).toEqual({ held: true });
  });

  it('of processes asking at once, exactly one holds it', async () => {
    const procs = await Promise.all([proc(), proc(), proc(), proc()]);
    const sha = 'c'.repeat(64);
    const answers = await Promise.all(procs.map((p, i) => claimContent(p, ask(`host-${i}`, sha))));
    expect(answers.filter((x) => x.held)).toHaveLength(1);
  });

  it("takes over a running claim once its holder is gone, one taker only; keeps a live one's", async () => {
    const a = await proc();
    const sha = 'd'.repeat(64);
    const first = ask('host-a', sha);
    await claimContent(a, first);
    const [b, c] = [await proc(), await proc()];
    expect(await claimContent(b, ask('host-b', sha))).toMatchObject({ held: false }); // alive
    // a killed process: its session ends (its holder row stays), so its advisory lock goes
    await b.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::bigint::oid`, [a.lockId]);
    await until(async () => !(await b.holderAlive(a.holder)));
    const answers = await Promise.all([claimContent(b, ask('host-b', sha)), claimContent(c, ask('host-c', sha))]);
    const won = answers.filter((x) => x.held);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ replaced: { host: 'host-a', claim: first.claim, state: 'running' } });
    const now = await claimOf(b, first.account, sha);
    expect(now?.holder).toBe(answers[0].held ? b.holder : c.holder);
  });

  it('records the end; an ended claim is run again only when the caller may (failed, nothing sent)', async () => {
    const [a, b] = [await proc(), await proc()];
    const done = ask('host-a', 'e'.repeat(64));
    await claimContent(a, done);
    expect(await endClaim(b, done, 'done')).toBe(false); // not b's
    expect(await endClaim(a, done, 'done')).toBe(true);
    expect(await endClaim(a, done, 'failed')).toBe(false); // ended once
    let asked = 0;
    const no = await claimContent(b, ask('host-b', done.sha256), { mayRetake: () => (asked++, false) });
    expect(no).toMatchObject({ held: false, by: { state: 'done', claim: done.claim } });
    expect(asked).toBe(1);
    expect((await claimOf(a, done.account, done.sha256))?.endedAt).toMatch(/^\d{4}-/);

    const refused = ask('host-a', 'f'.repeat(64));
    await claimContent(a, refused);
    await endClaim(a, refused, 'failed');
    const again = ask('host-b', refused.sha256);
    expect(await claimContent(b, again, { mayRetake: (c) => c.state === 'failed' })).toMatchObject({
      held: true,
      replaced: { state: 'failed', claim: refused.claim },
    });
    expect(await claimOf(b, again.account, again.sha256)).toMatchObject({ claim: again.claim, host: 'host-b', state: 'running' });
  });
});
