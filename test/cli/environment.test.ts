// The connection flags the tool repeats in the commands it prints, so each works as printed
// (issue 31, item 2), and run --plan's environment taken from the plan (pure parts).
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { connectionHint, withPlanEnvironment } from '../../src/cli/options.ts';
import type { CliIO } from '../../src/cli/command.ts';

const io = (cwd: string) => ({ cwd, env: {} }) as unknown as CliIO;
describe('hints that work as printed', () => {
  it('repeats --env and --base-url as given, nothing when the environment came from the variables', () => {
    expect(connectionHint({ env: 'local' })).toBe(' --env local');
    expect(connectionHint({ 'base-url': 'http://127.0.0.1:4010' })).toBe(' --base-url http://127.0.0.1:4010');
    expect(connectionHint({})).toBe('');
  });
});

describe('withPlanEnvironment', () => {
  it('takes a plan it cannot read as it is (the engine says why)', () => {
    const args = { plan: 'missing.json', env: 'sandbox' };
    expect(withPlanEnvironment(args, io(tmpdir()))[0]).toBe(args);
  });
});
