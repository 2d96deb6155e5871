// readAppended: what other processes appended to a journal while a run holds it open. Only complete
// lines are taken; a line still being written is left for the next call, never lost or torn.
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAppended } from '../../src/journal/journal.ts';

describe('readAppended', () => {
  it('returns the complete lines after an offset and where to go on; a line without its newline waits', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'pb-appended-')), 'j.jsonl');
    writeFileSync(path, '{"t":"batch"}\n');
    const start = Buffer.byteLength('{"t":"batch"}\n');
    expect(readAppended(path, start)).toEqual({ events: [], next: start });

    appendFileSync(path, '{"t":"status","ref":"Zoë-1","status":"PROCESSING"}\nnot json\n{"t":"status","ref":"R-2"');
    const first = readAppended(path, start);
    expect(first.events).toEqual([{ t: 'status', ref: 'Zoë-1', status: 'PROCESSING' }]);
    // The damaged line is passed over; the unfinished one is not consumed.
    expect(first.next).toBe(start + Buffer.byteLength('{"t":"status","ref":"Zoë-1","status":"PROCESSING"}\nnot json\n'));

    appendFileSync(path, ',"status":"SUCCESSFUL"}\n');
    const second = readAppended(path, first.next);
    expect(second.events).toEqual([{ t: 'status', ref: 'R-2', status: 'SUCCESSFUL' }]);
    expect(readAppended(path, second.next)).toEqual({ events: [], next: second.next });
  });

  it('a missing journal has nothing appended', () => {
    expect(readAppended(join(tmpdir(), 'pb-no-such-journal.jsonl'), 10)).toEqual({ events: [], next: 10 });
  });
});
