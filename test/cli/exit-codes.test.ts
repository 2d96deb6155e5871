// The core returns how a run ended and throws typed errors; exit codes are decided only in src/cli
// (exit-codes.ts, render.ts handleEngineError), and an unexpected error is never taken for a usage
// mistake (a RangeError used to become exit 2, "unusable input", whatever threw it).
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ExitCode, exitCodeOf } from '../../src/cli/exit-codes.ts';
import { exitReasonText, handleEngineError } from '../../src/cli/render.ts';
import type { PipelineResult } from '../../src/engine/pipeline.ts';
import type { CliIO } from '../../src/cli/command.ts';
import { BatchRefused, BatchUnusable, FailedAfterSending } from '../../src/engine/engine-errors.ts';

function io(): CliIO & { err: () => string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (b: Buffer) => (text += b.toString()));
  return {
    stdout: new PassThrough(),
    stderr,
    stdin: new PassThrough(),
    env: {},
    cwd: '/',
    stopSignal: new Promise(() => {}),
    err: () => text,
  };
}

describe('exit codes, from one table', () => {
  it("maps each kind of a run's end, and a stop on request whatever the kind", () => {
    expect(exitCodeOf({ kind: 'ok' })).toBe(ExitCode.OK);
    expect(exitCodeOf({ kind: 'rows-failed' })).toBe(ExitCode.ROWS_FAILED);
    expect(exitCodeOf({ kind: 'unusable' })).toBe(ExitCode.UNUSABLE_INPUT);
    expect(exitCodeOf({ kind: 'refused' })).toBe(ExitCode.REFUSED);
    expect(exitCodeOf({ kind: 'halted' })).toBe(ExitCode.SERVICE_UNAVAILABLE);
    expect(exitCodeOf({ kind: 'halted', stopped: true })).toBe(ExitCode.INTERRUPTED);
  });

  it("the engine's typed errors: unusable 2, refused 3, failed after sending 4, each with its message", () => {
    const a = io();
    expect(handleEngineError(new BatchUnusable('BATCH_ID', '--batch-id must be short'), a)).toBe(ExitCode.UNUSABLE_INPUT);
    expect(a.err()).toBe('payout-batch: --batch-id must be short\n');
    expect(handleEngineError(new BatchRefused('another run holds it', 'busy'), io())).toBe(ExitCode.REFUSED);
    expect(handleEngineError(new FailedAfterSending('/j', new Error('disk full')), io())).toBe(ExitCode.SERVICE_UNAVAILABLE);
  });

  it('a RangeError is a bug, not a usage mistake: it is thrown on as it is (no exit 2 that hides it)', () => {
    const bug = new RangeError('attempt must be a positive integer, not 0');
    let thrown: unknown;
    try {
      handleEngineError(bug, io());
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBe(bug);
  });
});

describe('what a run that created nothing says next', () => {
  const ended = (byStatus: Record<string, number>) =>
    exitReasonText({
      summary: { notCreated: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus, outcomes: {} },
      resultsPath: 'pay.results.csv',
    } as unknown as PipelineResult);

  it('409 on every row (a second state folder, a re-saved copy): already paid or used with other content, not "fix rows and retry"', () => {
    const text = ended({ CONFLICT: 3 });
    expect(text).toMatch(/^3 CONFLICT: already paid at this account, or the reference was used with other content/);
    expect(text).not.toMatch(/fix rows/);
  });

  it('a row refused on its own still says to fix it and retry', () => {
    expect(ended({ CONFLICT: 1, FAILED_TO_SEND: 1 })).toMatch(/fix rows and run `payout-batch retry pay\.results\.csv`/);
  });

  it('rows only not due yet (exit 5): run the same command again on their day, not "fix rows and retry" (retry leaves them out)', () => {
    const text = exitReasonText({
      kind: 'not-finished',
      summary: { notCreated: 2, byStatus: { NOT_SENT: 2 }, outcomes: {} },
      resultsPath: 'pay.results.csv',
    } as unknown as PipelineResult);
    expect(text).toMatch(/^2 NOT_SENT: not due yet \(pain\.001 ReqdExctnDt\).*run the same command again on or after that day/);
    expect(text).not.toMatch(/fix rows/);
  });
});
