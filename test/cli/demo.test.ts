import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('payout-batch demo (npm run demo)', () => {
  it('initiates one payout with its invoice on the embedded sandbox, idempotently, and debits the quoted total', async () => {
    const { stdout, stderr } = await run(process.execPath, ['src/cli/bin.js', 'demo', '--json'], { timeout: 60_000 });
    expect(stderr).toBe('');
    const outcome = JSON.parse(stdout);
    expect(outcome.payout.status).toBe('SUCCESSFUL');
    expect(outcome.payout.supportingDocuments).toHaveLength(1);
    expect(outcome.replayedSameId).toBe(true);
    expect(outcome.balanceMatches).toBe(true);
    expect(outcome.walletBefore).not.toBe(outcome.walletAfter);
  });

  it('tells the story in plain lines and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['src/cli/bin.js', 'demo'], { timeout: 60_000 });
    expect(stdout).toMatch(/Wallets of the business:/);
    expect(stdout).toMatch(/Methods from USD to NGN in NGA/);
    expect(stdout).toMatch(/the same payout came back, none was added/);
    expect(stdout).toMatch(/PENDING -> PROCESSING -> SUCCESSFUL/);
  });
});
