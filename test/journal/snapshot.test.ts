// A journal snapshot is a cache of the fold of the journal's first N bytes: folding from it and
// then the lines after N must give exactly the states (and counts) of folding every line, and a
// snapshot that is not provably that fold must never be used.
import { copyFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { JournalWriter } from '../../src/journal/journal.ts';
import { foldJournalFile, type JournalLine } from '../../src/journal/rows.ts';
import { SNAPSHOT_VERSION, encodeSnapshot, loadSnapshot, prefixSha256, snapshotPathFor } from '../../src/journal/snapshot.ts';
import { body, dir, mixedJournal, removeDirs, snap } from './journals.ts';

afterAll(removeDirs);

/** Writes the snapshot a run would write after the journal's first `bytes` bytes; false when there is none to write. */
async function snapshotAt(journal: string, bytes: number): Promise<boolean> {
  const prefix = join(await dir(), 'prefix.jsonl');
  writeFileSync(prefix, readFileSync(journal).subarray(0, bytes));
  const r = foldJournalFile(prefix, { snapshot: false });
  const lines = encodeSnapshot(r.folded, r, { bytes, sha256: prefixSha256(journal, bytes)! });
  if (lines === undefined) return false;
  writeFileSync(snapshotPathFor(journal), lines.join(''));
  return true;
}

/** Byte offsets just after each newline of a file. */
const lineEnds = (path: string): number[] => {
  const b = readFileSync(path);
  const out: number[] = [];
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) out.push(i + 1);
  return out;
};

function expectSameFold(path: string, snapshotBytes: number): void {
  const whole = foldJournalFile(path, { snapshot: false });
  const r = foldJournalFile(path);
  expect(r.snapshotBytes).toBe(snapshotBytes);
  expect(r.folded).toEqual(whole.folded);
  expect([...r.folded.rows.keys()]).toEqual([...whole.folded.rows.keys()]); // reports and results follow this order
  expect({ events: r.events, skipped: r.skipped, tornTail: r.tornTail }).toEqual({
    events: whole.events,
    skipped: whole.skipped,
    tornTail: whole.tornTail,
  });
}

describe('journal snapshots: the same fold from fewer lines', () => {
  it('a snapshot after any line of a journal of every kind of line gives the fold of every line', async () => {
    const path = await mixedJournal();
    // states the columns do not hold: a status detail and information requests, documents, a patch error
    const w = JournalWriter.open(path);
    w.append({ t: 'created', ref: 'X1', attempt: 1, key: 'k-X1-1', requestId: 'qx', payout: snap('px'), at: 'now' });
    w.append({
      t: 'status',
      ref: 'X1',
      payoutId: 'px',
      status: 'ADDITIONAL_INFO_REQUIRED',
      statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
      informationRequests: '[{"id":"ir1"}]',
      source: 'webhook',
      at: 'later',
      changedAt: '2026-02-01T00:00:00Z',
    });
    w.append({ t: 'doc', ref: 'X1', doc: 'merged:/a.pdf|/b.pdf', url: 'http://u/x' });
    w.append({ t: 'quote', ref: 'Q1', attempt: 1, rate: 1.1 }); // a quote missing fields: kept whole
    w.close();
    const ends = lineEnds(path);
    expect(ends.length).toBeGreaterThan(30);
    for (const bytes of ends) {
      expect(await snapshotAt(path, bytes)).toBe(true);
      expectSameFold(path, bytes);
    }
    const { folded } = foldJournalFile(path);
    expect(folded.rows.get('U1')).toMatchObject({ phase: 'unknown', body: body('U1'), error: { status: 503 } });
    expect(folded.rows.get('X1')?.payout).toMatchObject({ status: 'ADDITIONAL_INFO_REQUIRED', informationRequests: '[{"id":"ir1"}]' });
    expect(folded.rows.get('X1')?.docs).toEqual({ 'merged:/a.pdf|/b.pdf': 'http://u/x' });
    expect(folded.rows.get('Q1')?.quote).toEqual({ attempt: 1, rate: 1.1 });
  });

  it('property: random journals, a snapshot after a random line, then more lines', async () => {
    const refs = ['A', 'B', 'C', 'Zoë'];
    const ref = fc.constantFrom(...refs);
    const n = fc.integer({ min: 1, max: 3 });
    const amount = fc.oneof(fc.constantFrom(0, 0.1, 12.5, 1e21, -3), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const status = fc.constantFrom('PENDING', 'PROCESSING', 'ADDITIONAL_INFO_REQUIRED', 'SUCCESSFUL', 'FAILED');
    const error = fc.record({ status: fc.constantFrom(400, 409, 503), message: fc.string() }, { requiredKeys: ['message'] });
    const line: fc.Arbitrary<JournalLine | string> = fc.oneof(
      fc.record({ t: fc.constant('run' as const), at: fc.constant('t'), command: fc.constant('run'), pid: n }),
      fc.record({ t: fc.constant('run-end' as const), at: fc.constant('t'), exitCode: n }),
      fc.record({
        t: fc.constant('quote' as const),
        ref,
        attempt: n,
        rate: amount,
        fee: amount,
        totalDeductible: amount,
        destinationAmount: amount,
      }),
      fc.record({ t: fc.constant('doc' as const), ref, doc: fc.string(), url: fc.string() }),
      fc.record(
        {
          t: fc.constant('initiating' as const),
          ref,
          row: n,
          attempt: n,
          key: fc.string(),
          body: fc.string(),
          dup: fc.option(n, { nil: undefined }),
          at: fc.constant('t'),
        },
        { requiredKeys: ['t', 'ref', 'row', 'attempt', 'key', 'body', 'at'] },
      ),
      fc.record({
        t: fc.constant('created' as const),
        ref,
        attempt: n,
        key: fc.string(),
        requestId: fc.string(),
        at: fc.constant('t'),
        payout: fc.record({
          ...Object.fromEntries(Object.entries(snap('p')).map(([k, v]) => [k, fc.constant(v)])),
          id: fc.constantFrom('p1', 'p2'),
          status,
          sourceAmount: amount,
        }) as fc.Arbitrary<ReturnType<typeof snap>>,
      }),
      fc.record({
        t: fc.constantFrom('rejected' as const, 'unknown' as const, 'conflict' as const),
        ref,
        attempt: n,
        key: fc.string(),
        error,
        at: fc.constant('t'),
      }),
      fc.record({
        t: fc.constant('patched' as const),
        ref,
        payoutId: fc.string(),
        documents: fc.array(fc.string(), { maxLength: 2 }),
        at: fc.constant('t'),
      }),
      fc.record({ t: fc.constant('patch-failed' as const), ref, payoutId: fc.string(), error, at: fc.constant('t') }),
      fc.record(
        {
          t: fc.constant('status' as const),
          ref,
          payoutId: fc.constantFrom('p1', 'p2'),
          status,
          statusDetail: fc.option(fc.constant('ADDITIONAL_INFO_UNDER_REVIEW'), { nil: undefined }),
          informationRequests: fc.option(fc.constant('[]'), { nil: undefined }),
          changedAt: fc.constantFrom('2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z'),
          source: fc.constant('get' as const),
          at: fc.constant('t'),
        },
        { requiredKeys: ['t', 'ref', 'payoutId', 'status', 'changedAt', 'source', 'at'] },
      ),
      fc.constantFrom('not json', '42', '{"no-type":1}', ''), // damaged and blank lines
    );
    const d = await dir();
    let k = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 40 }), fc.nat(), async (lines, at) => {
        const path = join(d, `j${k++}.jsonl`);
        writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
        const ends = lineEnds(path);
        const bytes = ends[at % ends.length]!;
        expect(await snapshotAt(path, bytes)).toBe(true);
        expectSameFold(path, bytes);
      }),
      { numRuns: 150 },
    );
  });

  it('a state a column cannot give back (NaN after a damaged line) is not snapshotted: the journal is folded whole', async () => {
    const path = join(await dir(), 'j.jsonl');
    writeFileSync(path, '{"t":"initiating","ref":"A","row":2,"key":"k","body":"{}","at":"t"}\n'); // no attempt: Math.max gives NaN
    expect(foldJournalFile(path).folded.rows.get('A')?.attempt).toBeNaN();
    expect(await snapshotAt(path, readFileSync(path).length)).toBe(false);
  });
});

describe('journal snapshots: used only while provably the fold of the journal', () => {
  /** A journal with a snapshot after its 20th line, and that snapshot's text. */
  const withSnapshot = async () => {
    const path = await mixedJournal();
    const bytes = lineEnds(path)[20]!;
    expect(await snapshotAt(path, bytes)).toBe(true);
    expect(foldJournalFile(path).snapshotBytes).toBe(bytes);
    return { path, bytes, text: readFileSync(snapshotPathFor(path), 'utf8') };
  };

  /** The same lines as mixedJournal's after a first line of its own: other bytes throughout. */
  const otherJournal = async () => {
    const path = join(await dir(), 'other.jsonl');
    writeFileSync(
      path,
      `${JSON.stringify({ t: 'run', at: 'other', command: 'run', pid: 9 })}\n${readFileSync(await mixedJournal(), 'utf8')}`,
    );
    return path;
  };

  it('a line before the snapshot edited: the edit is read, the snapshot is not', async () => {
    const { path } = await withSnapshot();
    const edited = readFileSync(path, 'utf8').replace('"rate":1.25', '"rate":9.25');
    writeFileSync(path, edited);
    expectSameFold(path, 0);
    expect(foldJournalFile(path).folded.rows.get('C1')?.quote?.rate).toBe(9.25);
  });

  it('the journal truncated, or replaced by another', async () => {
    const a = await withSnapshot();
    truncateSync(a.path, a.bytes - 1);
    expectSameFold(a.path, 0);
    const b = await withSnapshot();
    copyFileSync(await otherJournal(), b.path);
    expectSameFold(b.path, 0);
  });

  it('a snapshot beside another journal, a damaged snapshot, another version, or not a snapshot', async () => {
    const { path, text } = await withSnapshot();
    const other = await otherJournal();
    writeFileSync(snapshotPathFor(other), text);
    expectSameFold(other, 0);
    // a value changed in a column, still valid JSON: the sha256 of the lines no longer matches
    const head = text.slice(0, text.indexOf('\n') + 1);
    const states = text.slice(head.length);
    const changed = states.replace('"k-C1-1"', '"k-C1-9"');
    expect(changed).not.toBe(states);
    writeFileSync(snapshotPathFor(path), head + changed);
    expectSameFold(path, 0);
    writeFileSync(snapshotPathFor(path), head.replace(`"v":${SNAPSHOT_VERSION}`, `"v":${SNAPSHOT_VERSION + 1}`) + states);
    expectSameFold(path, 0);
    // the head claims other journal bytes: they do not hash to what it records
    const bytes = /"bytes":(\d+)/.exec(head)![1]!;
    writeFileSync(snapshotPathFor(path), head.replace(`"bytes":${bytes}`, `"bytes":${Number(bytes) - 1}`) + states);
    expectSameFold(path, 0);
    for (const junk of ['', 'not json', '{"v":1}\n{}', text.slice(0, text.length / 2)]) {
      writeFileSync(snapshotPathFor(path), junk);
      expect(loadSnapshot(path)).toBeUndefined();
      expectSameFold(path, 0);
    }
  });
});
