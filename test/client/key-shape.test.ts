// Text that can never be an API key (over 1024 characters, control characters, several words) is
// refused as the key is read, naming where it came from and never quoting it: before, one 8 MB line
// was sent as x-api-key, the server answered 431 and the command exited 4 after 10 s of retries.
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientConfigError, loadApiKey, parseKeyFile } from '../../src/client/api-key.ts';
import { cleanEnv, runMain, tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-key-shape-');
afterEach(() => dirs.remove());

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ClientConfigError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('a key that cannot be one', () => {
  it('a key file: too long, control characters, words; the file named, what a key is said, nothing quoted', () => {
    const long = `sk_sandbox_${'Zq9'.repeat(400)}`;
    for (const text of [
      `${long}\n`,
      `environment=sandbox\nkey=${long}\n`,
      'sk_sandbox_Zq9\u0007Zq9Zq9\n',
      'Zq9Zq9Zq9Zq9 and more words\n',
    ]) {
      const m = refusal(() => parseKeyFile(text, '/k/acme.key'));
      expect(m).toMatch(/^key file \/k\/acme\.key: the key /);
      expect(m).toContain('an API key is one word of at most 1024 visible ASCII characters');
      expect(m).not.toContain('Zq9');
    }
    // 1024 characters is still a key
    expect(parseKeyFile(`${long.slice(0, 1024)}\n`, '/k/acme.key').reveal()).toHaveLength(1024);
  });

  it('$PAYOUT_API_KEY: named, not quoted', async () => {
    const e = (await loadApiKey({ env: { PAYOUT_API_KEY: 'Zq9'.repeat(400) }, cwd: '/' }).catch((x: unknown) => x)) as Error;
    expect(e).toBeInstanceOf(ClientConfigError);
    expect(e.message).toMatch(/^\$PAYOUT_API_KEY: the key is over 1024 characters long/);
    expect(e.message).not.toContain('Zq9');
  });

  it('through the CLI: a key file of one 9 MB line exits 2 at once, nothing sent, nothing of it on stderr', async () => {
    let connections = 0;
    const server = createServer((_req, res) => res.writeHead(500).end()).on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const cwd = await dirs.make();
      await writeFile(join(cwd, 'acme.key'), `sk_sandbox_${'Zq9'.repeat(3 << 20)}\n`, { mode: 0o600 });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await runMain(['account', '--base-url', url, '--key-file', 'acme.key'], { cwd, env: cleanEnv() });
      expect(r.stderr).toContain(`key file ${join(cwd, 'acme.key')}: the key is over 1024 characters long`);
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain('Zq9');
      expect(connections).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
