// The core returns values: `prepareRun` gives the plan and what the guards made of it, sending
// nothing; `execute(prepared)` sends (or refuses) and returns the result; progress is a stream of
// events. No callback into the caller decides anything.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { execute, prepareRun, type EngineEvents } from '../../src/engine/pipeline.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from './helpers.ts';
import { connectionTo, startSb, unattended, writeBatch } from '../ops/helpers.ts';

const dirs = tempDirs('pb-prepare-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('prepare, then execute', () => {
  it('a plan that needs a person: prepared with nothing sent, and refused by execute unless confirmed', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const initiates = () => sb!.requestLog().filter((x) => x.route === 'initiate').length;
    const prepared = await prepareRun({ ...unattended({}, { yes: false, interactive: true }), file, conn: connectionTo(sb) });
    expect(prepared.plan?.toSend).toHaveLength(2);
    expect(prepared).toMatchObject({ confirm: true, notes: [] });
    expect(prepared.refused).toBeUndefined();
    expect(initiates()).toBe(0);
    const r = await execute(prepared);
    expect(r).toMatchObject({ kind: 'refused', refused: ['declined at the confirmation: nothing was sent'], resultsWritten: false });
    expect(initiates()).toBe(0);
    await expect(execute(prepared)).rejects.toThrow(/executed once/);
  });

  it('confirmed: the rows go, and the progress comes as events (the preflight, then each row)', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const events: EngineEvents = new EventEmitter();
    const seen: string[] = [];
    events.on('event', (e) => seen.push(e.type));
    const prepared = await prepareRun({ ...unattended({ events }, { yes: false, interactive: true }), file, conn: connectionTo(sb) });
    expect(seen).toContain('preflight');
    expect(seen).not.toContain('row-done');
    const r = await execute(prepared, { confirmed: true });
    expect(r.kind).toBe('ok');
    expect(r.summary.created).toBe(2);
    expect(seen.filter((t) => t === 'row-done')).toHaveLength(2);
  });

  it('the guards refuse at prepare time (a control total), and execute sends nothing whatever the answer', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const prepared = await prepareRun({ ...unattended({}, { expectRows: 5 }), file, conn: connectionTo(sb) });
    expect(prepared.refused).toEqual(['--expect-rows 5, but the batch pays 2 rows']);
    const r = await execute(prepared, { confirmed: true });
    expect(r).toMatchObject({ kind: 'refused', refused: ['--expect-rows 5, but the batch pays 2 rows'] });
    expect(sb.requestLog().filter((x) => x.route === 'initiate')).toHaveLength(0);
  });

  it('the service failing at the preflight: prepared as halted, nothing sent; run again once it answers, each row paid once', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const initiates = () => sb!.requestLog().filter((x) => x.route === 'initiate').length;
    sb.setFaults({ errorBeforeEffect: 1, routes: ['wallets'] });
    const prepared = await prepareRun({ ...unattended({}), file, conn: connectionTo(sb) });
    expect([prepared.plan, prepared.confirm]).toEqual([undefined, false]);
    const r = await execute(prepared, { confirmed: true });
    expect(r).toMatchObject({ kind: 'halted', halted: expect.stringMatching(/^preflight: .*50\d/) });
    expect(initiates()).toBe(0);
    sb.setFaults({});
    const again = await execute(await prepareRun({ ...unattended({}), file, conn: connectionTo(sb) }));
    expect([again.kind, initiates()]).toEqual(['ok', 2]);
  });
});
