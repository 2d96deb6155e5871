// The team ledger's rows (src/ledger/postgres.ts) against a real PostgreSQL: what the
// database itself refuses, whatever a process read before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as store from '../../src/ledger/postgres.ts';
import { ledgerProcesses, withPostgres } from '../pg/database.ts';

describe.runIf(withPostgres)('the team ledger rows', () => {
  const processes = ledgerProcesses();
  const connect = processes.connect;
  beforeAll(processes.init);
  afterAll(processes.closeAll);
  const batch = (batchId: string, refs: string[]) => ({
    account: 'http://127.0.0.1:1',
    batchId,
    file: `/f/${batchId}.csv`,
    command: 'run',
    host: 'h',
    pid: 1,
    refs,
  });

  it('a reference is held by one live batch: the second reservation fails on the primary key, not on a read', async () => {
    const [a, b] = [await connect(), await connect()];
    await a.tx((q) => store.reserve(q, a, batch('aaaa', ['R1', 'R2'])));
    await expect(b.tx((q) => store.reserve(q, b, batch('bbbb', ['R2', 'R3'])))).rejects.toMatchObject({ code: '23505' });
    // nothing of the refused one stays: R3 is free
    await b.tx((q) => store.reserve(q, b, batch('cccc', ['R3'])));
    expect(await a.tx((q) => store.stillHeld(q, a.holder, 'http://127.0.0.1:1', 'aaaa', 'R2'))).toBe(true);
    expect(await b.tx((q) => store.stillHeld(q, b.holder, 'http://127.0.0.1:1', 'bbbb', 'R2'))).toBe(false);
  });

  it("a dead process's reservations are cleared by the next: its session lock went with it", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.tx((q) => store.reserve(q, a, batch('dddd', ['D1'])));
    await b.tx((q) => store.clearDeadHolders(q, 'http://127.0.0.1:1'));
    expect(await b.tx((q) => store.heldElsewhere(q, 'http://127.0.0.1:1', 'eeee', ['D1']))).toHaveLength(1);
    expect(await b.holderAlive(a.holder)).toBe(true);
    // a process that dies: the server ends its session (and so releases its lock), its rows stay
    await b.query(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND objid = $1::bigint::oid",
      [a.lockId],
    );
    await expect.poll(() => b.holderAlive(a.holder)).toBe(false);
    await b.tx((q) => store.clearDeadHolders(q, 'http://127.0.0.1:1'));
    expect(await b.tx((q) => store.heldElsewhere(q, 'http://127.0.0.1:1', 'eeee', ['D1']))).toHaveLength(0);
  });

  it('lines come back in the order written, after the id a reader has (append-only: schema.test.ts)', async () => {
    const a = await connect();
    await store.appendLines(a, 'acct', a.holder, [
      { batch: 'ffff', line: '{"t":"batch"}' },
      { batch: 'ffff', line: '{"t":"initiating","ref":"F1"}' },
    ]);
    const lines = await store.linesOf(a, 'acct', 'ffff', 0);
    expect(lines.map((l) => l.line)).toEqual(['{"t":"batch"}', '{"t":"initiating","ref":"F1"}']);
    expect(await store.batchesOf(a, 'acct')).toEqual(['ffff']);
    expect((await store.linesOf(a, 'acct', 'ffff', lines[0]!.id)).map((l) => l.line)).toEqual(['{"t":"initiating","ref":"F1"}']);
  });
});
