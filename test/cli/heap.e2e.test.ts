// Issue 44: the CLI asks V8 to keep its heap small (src/cli/bin.ts). Watched from outside the bin
// as users run it: a --require hook records each V8 flag the process sets.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv } from '../engine/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-heap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOOK = `
const v8 = require('node:v8');
const { syncBuiltinESMExports } = require('node:module');
const { appendFileSync } = require('node:fs');
const set = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => {
  appendFileSync(process.env.PB_FLAGS_FILE, JSON.stringify({ flags }) + '\\n');
  return set(flags);
};
syncBuiltinESMExports();
`;

describe('the CLI process (issue 44)', () => {
  it('sets --optimize-for-size, and no other V8 flag', () => {
    const hook = join(dir, 'hook.cjs');
    const record = join(dir, 'flags.jsonl');
    writeFileSync(hook, HOOK);
    const r = spawnSync(process.execPath, ['--require', hook, join(ROOT, 'dist/bin.js'), '--version'], {
      encoding: 'utf8',
      env: cleanEnv({ PB_FLAGS_FILE: record }),
    });
    expect(r.status).toBe(0);
    const calls = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { flags: string });
    expect(calls.map((c) => c.flags)).toEqual(['--optimize-for-size']);
  });
});
