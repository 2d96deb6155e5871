// `ledger import`'s rule (ledger/import.ts): which journals of a file ledger go in, which
// are already there, and the references that refuse their batch (the others go in); then the same on a database.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import type { Queryable } from '../../src/ledger/schema.ts';
import { FileLedger, ledgerDirFor } from '../../src/ledger/file.ts';
import { importJournals, journalLines, planImport, readFileLedgers, type FileJournal } from '../../src/ledger/import.ts';
import { appendLines, PgLedgers } from '../../src/ledger/postgres.ts';
import { describePlan } from '../../src/cli/commands/ledger.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const ACCOUNT = 'https://gateway.sandbox.example.com';
const batchId = (c: string) => c.repeat(64);

/** The lines of a batch's journal: its header, then each reference in the phase given. */
function journal(id: string, rows: Record<string, 'created' | 'initiating' | 'rejected' | 'quote'>, account = ACCOUNT): FileJournal {
  const at = '2026-01-01T00:00:00.000Z';
  const lines = [
    { t: 'batch', v: 1, batchId: id, batchIdSource: 'content', env: 'custom', file: `/pay/${id[0]}.csv`, fileSha256: id, createdAt: at },
  ];
  for (const [ref, phase] of Object.entries(rows)) {
    if (phase === 'quote') {
      lines.push({ t: 'quote', ref, attempt: 1, destinationAmount: 10 } as never);
      continue;
    }
    lines.push({ t: 'initiating', ref, row: 1, attempt: 1, key: `k-${ref}`, body: '{}', at } as never);
    if (phase === 'created')
      lines.push({
        t: 'created',
        ref,
        attempt: 1,
        key: `k-${ref}`,
        requestId: 'r',
        at,
        payout: { id: `p-${ref}`, status: 'PENDING' },
      } as never);
    if (phase === 'rejected') lines.push({ t: 'rejected', ref, attempt: 1, key: `k-${ref}`, error: { message: 'no' }, at } as never);
  }
  return { account, batchId: id, path: `/state/${id.slice(0, 16)}.journal.jsonl`, lines: lines.map((l) => JSON.stringify(l)) };
}
const held = (...js: FileJournal[]) => {
  const m = new Map<string, Map<string, string[]>>();
  for (const j of js) m.set(j.account, (m.get(j.account) ?? new Map<string, string[]>()).set(j.batchId, j.lines));
  return m;
};

describe('the import plan', () => {
  it("inserts new batches, skips one held with the same lines, adds the lines a held batch's file learnt since", () => {
    const a = journal(batchId('a'), { R1: 'created' });
    const b = journal(batchId('b'), { R2: 'created' });
    const plan = planImport(held(a, { ...b, lines: b.lines.slice(0, 1) }), [a, b, journal(batchId('c'), { R3: 'initiating' })]);
    expect(plan.same.map((j) => j.batchId)).toEqual([batchId('a')]);
    expect(plan.differing).toEqual([]);
    expect(plan.insert.map((j) => [j.batchId, j.lines])).toEqual([
      [batchId('b'), b.lines.slice(1)],
      [batchId('c'), journal(batchId('c'), { R3: 'initiating' }).lines],
    ]);
    expect(plan.conflicts).toEqual([]);
  });

  it('skips a batch the database holds with lines learnt since (a status), as it was read here; refuses one whose lines differ', () => {
    const a = journal(batchId('a'), { R1: 'created' });
    const later = JSON.stringify({
      t: 'status',
      ref: 'R1',
      payoutId: 'p-R1',
      status: 'SUCCESSFUL',
      source: 'get',
      at: '2026-01-02T00:00:00.000Z',
    });
    const plan = planImport(held({ ...a, lines: [...a.lines, later] }), [a, { ...a, lines: [...a.lines.slice(0, 1), later] }]);
    expect(plan.same).toEqual([a]);
    expect(plan.differing).toHaveLength(1);
  });

  it('refuses a reference another batch of the account sent, naming both batches; a refused or quoted one, or another account, is no conflict', () => {
    const other = journal(batchId('b'), { PAID: 'created', OPEN: 'initiating', NO: 'rejected', Q: 'created' });
    const mine = journal(batchId('a'), { PAID: 'initiating', OPEN: 'created', NO: 'created', Q: 'quote' });
    const elsewhere = journal(batchId('c'), { PAID: 'created' }, 'https://other.example.com');
    const plan = planImport(held(other, elsewhere), [mine]);
    expect(plan.conflicts).toEqual([
      {
        account: ACCOUNT,
        ref: 'PAID',
        batch: { batchId: batchId('a'), file: '/pay/a.csv' },
        other: { batchId: batchId('b'), file: '/pay/b.csv', phase: 'created' },
      },
      {
        account: ACCOUNT,
        ref: 'OPEN',
        batch: { batchId: batchId('a'), file: '/pay/a.csv' },
        other: { batchId: batchId('b'), file: '/pay/b.csv', phase: 'initiating' },
      },
    ]);
  });

  it('checks the journals imported together against each other', () => {
    const plan = planImport(new Map(), [journal(batchId('a'), { R: 'created' }), journal(batchId('b'), { R: 'initiating' })]);
    expect(plan.conflicts.map((c) => [c.ref, c.batch.batchId[0], c.other.batchId[0]])).toEqual([['R', 'b', 'a']]);
  });
});

describe('reading a file ledger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-import-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every complete event as written, without the BOM, blank lines or a torn last line', () => {
    expect(journalLines('\uFEFF{"t":"batch","x":1.50}\n\n{"t":"run"}\nnot json\n{"t":"initia')).toEqual([
      '{"t":"batch","x":1.50}',
      '{"t":"run"}',
    ]);
  });

  it("knows a folder's account from the accounts it may be, the header's account, or `local`; says which folders it cannot place", () => {
    const write = (folder: string, j: FileJournal) => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `${j.batchId.slice(0, 16)}.journal.jsonl`), j.lines.join('\n') + '\n');
    };
    write(ledgerDirFor(dir, ACCOUNT), journal(batchId('a'), { R: 'created' }));
    write(ledgerDirFor(dir, 'https://unknown.example.com'), journal(batchId('b'), { R: 'created' }));
    const named = journal(batchId('c'), {});
    named.lines[0] = JSON.stringify({ ...(JSON.parse(named.lines[0]!) as object), account: 'https://named.example.com' });
    write(ledgerDirFor(dir, 'https://named.example.com'), named);
    write(join(dir, 'ledgers', 'local'), journal(batchId('d'), {}));
    const { journals, unknown } = readFileLedgers(dir, [ACCOUNT]);
    expect(journals.map((j) => [j.batchId[0], j.account]).sort()).toEqual([
      ['a', ACCOUNT],
      ['c', 'https://named.example.com'],
      ['d', 'local'],
    ]);
    expect(journals.find((j) => j.batchId === batchId('a').slice(0, 16))!.lines).toEqual(journal(batchId('a'), { R: 'created' }).lines);
    expect(unknown).toEqual([ledgerDirFor(dir, 'https://unknown.example.com').split('/').pop()]);
  });

  it('imports a journal whose header line is damaged, by its file name (what it sent is known all the same); names each damaged line', () => {
    const other = mkdtempSync(join(dir, 'damaged-'));
    const folder = ledgerDirFor(other, ACCOUNT);
    mkdirSync(folder, { recursive: true });
    const j = journal(batchId('e'), { R9: 'initiating' });
    const path = join(folder, `${batchId('e').slice(0, 16)}.journal.jsonl`);
    writeFileSync(path, ['{"t":"batch","batchId":', j.lines[1], '{"t":"creat', j.lines[1], ''].join('\n'));
    writeFileSync(join(folder, `${batchId('f').slice(0, 16)}.journal.jsonl`), ''); // (created, nothing written yet)
    const { journals, damaged } = readFileLedgers(other, [ACCOUNT]);
    expect(journals.map((x) => [x.account, x.batchId, x.lines])).toEqual([[ACCOUNT, batchId('e').slice(0, 16), [j.lines[1], j.lines[1]]]]);
    expect(damaged).toEqual([1, 3].map((line) => ({ path, line })));
    expect(planImport(new Map(), [...journals, journal(batchId('g'), { R9: 'created' })]).conflicts.map((c) => c.ref)).toEqual(['R9']);
  });

  it('refuses, naming it, a state folder a run is sending from: its journal would go in part-written, the rest sent on the folder alone', async () => {
    const other = mkdtempSync(join(dir, 'live-'));
    const folder = ledgerDirFor(other, ACCOUNT);
    const j = journal(batchId('d'), { R1: 'created', R2: 'initiating' });
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${batchId('d').slice(0, 16)}.journal.jsonl`), j.lines.join('\n') + '\n');
    const live = await new FileLedger(ACCOUNT, folder).reserve({
      batchId: batchId('d'),
      file: '/pay/d.csv',
      command: 'run',
      fresh: ['R3'],
    });
    expect(() => readFileLedgers(other, [ACCOUNT])).toThrow(
      /a run is sending from .* right now: \/pay\/d\.csv \(batch d{16}, `run` by pid/,
    );
    await live.release();
    expect(readFileLedgers(other, [ACCOUNT]).journals.map((x) => x.batchId)).toEqual([batchId('d').slice(0, 16)]);
  });
});

describe.runIf(withPostgres)('importing into the database', () => {
  let db: TeamDb;
  let url = '';
  beforeAll(async () => {
    db = await TeamDb.open((url = await testDatabase()), { command: 'test' });
  });
  afterAll(() => db?.close());
  const rows = async () =>
    (
      await db.query<{ batch_id: string; origin: string; line: string }>(
        'SELECT batch_id, origin, line FROM payout_batch.journal_lines ORDER BY id',
      )
    ).rows;

  it('writes each line in order once, skips it the second time; a batch with a conflicting reference stays out whole, the others go in', async () => {
    const a = journal(batchId('a'), { R1: 'created', R2: 'rejected' });
    expect((await importJournals(db, [a], 'import one')).insert).toHaveLength(1);
    expect(await rows()).toEqual(a.lines.map((line) => ({ batch_id: batchId('a'), origin: 'import one', line })));
    const again = await importJournals(db, [a], 'import two');
    expect([again.insert.length, again.same.length]).toEqual([0, 1]);
    const [b, c] = [journal(batchId('b'), { R3: 'created' }), journal(batchId('c'), { R4: 'created', R1: 'initiating' })];
    const refused = await importJournals(db, [b, c], 'three');
    expect(refused.conflicts.map((x) => [x.ref, x.batch.batchId, x.other.batchId])).toEqual([['R1', batchId('c'), batchId('a')]]);
    expect(refused.insert.map((j) => j.batchId)).toEqual([batchId('b')]);
    // (the team ledger knows what b sent, whatever c's conflict: none of c, the reference it sent first included)
    expect((await rows()).map((r) => r.line)).toEqual([...a.lines, ...b.lines]);
    const twice = await importJournals(db, [b, c], 'four');
    expect([twice.insert.length, twice.same.length, twice.conflicts.length]).toEqual([0, 1, 1]);
  });

  it('importing again what is there reads no line back (one row per batch, not one per line), and still tells other lines apart', async () => {
    const refs = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`BIG${i}`, 'created' as const]));
    const big = journal(batchId('d'), refs);
    expect((await importJournals(db, [big], 'first')).insert).toHaveLength(1);
    let rowsRead = 0;
    const counting = {
      tx: <T>(body: (q: Queryable) => Promise<T>) =>
        db.tx((q) =>
          body({
            query: (async (text: string, values?: unknown[]) => {
              const r = await q.query(text, values);
              rowsRead += r.rows.length;
              return r;
            }) as Queryable['query'],
          }),
        ),
    };
    const again = await importJournals(counting, [big], 'second');
    expect([again.insert.length, again.same.length, again.differing.length]).toEqual([0, 1, 0]);
    expect(big.lines.length).toBeGreaterThan(3000);
    // the advisory lock's row, and one row per batch the database holds of the account
    expect(rowsRead).toBeLessThanOrEqual(10);
    // the team learnt a status of it since: importing the folder again still imports its new batches
    const status = { t: 'status', ref: 'BIG1', payoutId: 'p-BIG1', status: 'SUCCESSFUL', source: 'get', at: '2026-01-02T00:00:00.000Z' };
    await db.tx((q) => appendLines(q, ACCOUNT, 'status', [{ batch: big.batchId, line: JSON.stringify(status) }]));
    const grown = await importJournals(counting, [big, journal(batchId('e'), { NEW1: 'created' })], 'fourth');
    expect([grown.insert.length, grown.same.length, grown.differing.length]).toEqual([1, 1, 0]);
    const edited = { ...big, lines: big.lines.map((l, i) => (i === 5 ? l.replace('BIG2', 'BIX2') : l)) };
    expect((await importJournals(counting, [edited], 'third')).differing).toHaveLength(1);
  });

  it.each([
    [
      'a reference a live run of another batch holds: it found it sent nowhere, and would send it again',
      'x',
      'y',
      'LIVE1',
      `in the ledger, by batch ${batchId('x').slice(0, 16)} (/pay/x.csv, being sent)`,
    ],
    [
      'a journal of the batch a live run holds: the run read that batch before the import, and would send its references again',
      'z',
      'z',
      'SAME1',
      'in the ledger, by a run of that same batch, sending it now: import again once that run ends',
    ],
  ])('refuses %s', async (_why, held, imported, ref, said) => {
    const run = new PgLedgers(await TeamDb.open(url, { command: 'run' }));
    const origin = `import ${ref}`;
    try {
      const live = await run.of(ACCOUNT).reserve({ batchId: batchId(held), file: `/pay/${held}.csv`, command: 'run', fresh: [ref] });
      const plan = await importJournals(db, [journal(batchId(imported), { [ref]: 'created' })], origin);
      expect(plan.conflicts.map((c) => [c.ref, c.other.batchId.slice(0, 16), c.other.file, c.other.phase])).toEqual([
        [ref, batchId(held).slice(0, 16), `/pay/${held}.csv`, 'being sent'],
      ]);
      expect(describePlan(plan)).toContain(
        `reference ${ref} sent by batch ${batchId(imported).slice(0, 16)} (/pay/${imported}.csv) and, ${said}\n`,
      );
      expect((await rows()).filter((r) => r.origin === origin)).toEqual([]);
      await live.release();
      expect((await importJournals(db, [journal(batchId(imported), { [ref]: 'created' })], origin)).insert).toHaveLength(1);
    } finally {
      await run.close();
    }
  });
});
