// scanJournal cuts each chunk at its newline bytes and decodes each complete line (a character cut
// across reads is joined before it is decoded). It must read exactly what decoding the whole file as UTF-8 text (TextDecoder)
// and splitting it on newlines reads, whatever the read size: lines and multi-byte characters cut
// across reads, a line longer than the buffer, a BOM, CRLF, blank and damaged lines, invalid
// UTF-8, a torn tail.
import { writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanJournal, type JournalEvent } from '../../src/journal/journal.ts';
import { mulberry32 } from '../../src/sandbox/faults.ts';

/** The reader as it was: the whole file as text, one line per newline, the rest torn. */
function reference(bytes: Uint8Array): { events: JournalEvent[]; skipped: number; tornTail: boolean } {
  const text = new TextDecoder('utf-8').decode(bytes);
  const lines = text.split('\n');
  const rest = lines.pop()!;
  const events: JournalEvent[] = [];
  let skipped = 0;
  const take = (line: string) => {
    if (line.trim() === '') return;
    try {
      const v = JSON.parse(line) as JournalEvent;
      if (v && typeof v === 'object' && typeof v.t === 'string') events.push(v);
      else skipped++;
    } catch {
      skipped++;
    }
  };
  lines.forEach(take);
  if (rest.length > 0) take(rest);
  return { events, skipped, tornTail: rest.length > 0 };
}

/** A small deterministic PRNG (the sandbox's mulberry32), so a failure replays. */
const rng = mulberry32;

const WORDS = ['Zoë', '東京', '😀 emoji', 'a\\"b', 'tab\t', 'line\nbreak', 'ß', '\u00a0', '\u2028'];

function randomJournal(seed: number): Buffer {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const parts: Buffer[] = [];
  if (r() < 0.3) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
  const lines = 5 + Math.floor(r() * 60);
  for (let i = 0; i < lines; i++) {
    const k = r();
    let line: Buffer;
    if (k < 0.6)
      line = Buffer.from(
        JSON.stringify({
          t: pick(['quote', 'initiating', 'created', 'status']),
          ref: `R${i}`,
          body: pick(WORDS).repeat(1 + Math.floor(r() * 30)),
        }),
      );
    else if (k < 0.65)
      line = Buffer.from(JSON.stringify({ t: 'initiating', ref: `L${i}`, body: 'x'.repeat(200 + Math.floor(r() * 400)) })); // longer than small buffers
    else if (k < 0.7) line = Buffer.from('');
    else if (k < 0.75) line = Buffer.from('  \r');
    else if (k < 0.8) line = Buffer.from(JSON.stringify({ t: 'run', at: 'x' }) + '\r');
    else if (k < 0.85)
      line = Buffer.from('{"t":"created","ref":"T' + i + '","attem'); // torn, repaired
    else if (k < 0.9)
      line = Buffer.concat([Buffer.from('{"t":"doc","ref":"B'), Buffer.from([0xff, 0xc3, 0xe6, 0x9d]), Buffer.from('","doc":"x"}')]); // invalid UTF-8 inside
    else if (k < 0.95) line = Buffer.from(pick(['42', '"text"', '{"no":1}', 'null', '[]']));
    else line = Buffer.from(JSON.stringify({ t: 'doc', ref: `E${i}`, doc: 'é'.repeat(7) }));
    parts.push(line);
    if (i < lines - 1 || r() < 0.6) parts.push(Buffer.from('\n'));
    else if (r() < 0.5) parts.push(Buffer.from([0xe6, 0x9d])); // a tail cut inside a character
  }
  return Buffer.concat(parts);
}

describe('scanJournal: reading in chunks reads what the text reader read', () => {
  it('on 300 random journals, at read sizes from 4 bytes to 1 MiB', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-scan-'));
    const path = join(dir, 'j.jsonl');
    let torn = 0;
    let skippedAny = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const bytes = randomJournal(seed);
      writeFileSync(path, bytes);
      const want = reference(bytes);
      if (want.tornTail) torn++;
      if (want.skipped) skippedAny++;
      for (const size of [4, 5, 7, 16, 61, 256, 1 << 20]) {
        const events: JournalEvent[] = [];
        const got = scanJournal(path, (e) => events.push(e), size);
        expect({ events, skipped: got.skipped, tornTail: got.tornTail }, `seed ${seed}, read size ${size}`).toEqual(want);
        expect(got.events).toBe(want.events.length);
      }
    }
    // the generator did reach the cases that matter
    expect(torn).toBeGreaterThan(50);
    expect(skippedAny).toBeGreaterThan(200);
  });

  it('a BOM alone, a lone newline, and an empty file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-scan-'));
    const cases: [string, Buffer, { events: number; skipped: number; tornTail: boolean }][] = [
      ['empty', Buffer.alloc(0), { events: 0, skipped: 0, tornTail: false }],
      ['newline', Buffer.from('\n'), { events: 0, skipped: 0, tornTail: false }],
      ['bom', Buffer.from([0xef, 0xbb, 0xbf]), { events: 0, skipped: 0, tornTail: false }],
      ['bom line', Buffer.from('\ufeff{"t":"run"}\n'), { events: 1, skipped: 0, tornTail: false }],
      ['two bytes', Buffer.from('{}'), { events: 0, skipped: 1, tornTail: true }],
    ];
    for (const [name, bytes, want] of cases) {
      const path = join(dir, `${name}.jsonl`);
      writeFileSync(path, bytes);
      expect(
        scanJournal(path, () => undefined, 4),
        name,
      ).toEqual(want);
      expect(
        scanJournal(path, () => undefined),
        name,
      ).toEqual(want);
    }
  });
});
