import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWatchConfig } from '../../src/watch/config.ts';

const folder = (approvers = 'approvers.json') => {
  const d = mkdtempSync(join(tmpdir(), 'pb-watch-trust-'));
  mkdirSync(join(d, 'inbox'));
  writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', requireApprovals: 2, approvers }));
  writeFileSync(join(d, 'approvers.json'), '{"approvers":[]}\n');
  return d;
};

describe('who may change what a watch pays', () => {
  it('refuses a configuration or approvers list writable by group or others: whoever drops files must not name their approvers', () => {
    const d = folder();
    expect(() => readWatchConfig(d)).not.toThrow();
    chmodSync(join(d, 'approvers.json'), 0o664);
    expect(() => readWatchConfig(d)).toThrow(/approvers\.json is writable by its group \(mode 664\)/);
    chmodSync(join(d, 'approvers.json'), 0o644);
    chmodSync(join(d, 'payout-batch.json'), 0o646);
    expect(() => readWatchConfig(d)).toThrow(/payout-batch\.json is writable by others \(mode 646\)/);
  });

  it('refuses an approvers list that is a link (into the inbox, where anyone who drops files writes)', () => {
    const d = folder('list.json');
    writeFileSync(join(d, 'inbox', 'mine.json'), '{"approvers":[]}\n');
    symlinkSync(join(d, 'inbox', 'mine.json'), join(d, 'list.json'));
    expect(() => readWatchConfig(d)).toThrow(/list\.json is a symbolic link/);
  });
});
