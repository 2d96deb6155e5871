// An approver's private key given where its file's path goes (`approve --key-file`, `plan
// --approver-key`): never quoted back, as the API key and the webhook secret are not.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, runMain, tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-approver-key-given-');
afterEach(() => dirs.remove());

/** The base64 line of a fresh Ed25519 private key's PEM: what a copy and paste would give. */
const pemLine = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().split('\n')[1]!;

describe('a private key given as the name of its file', () => {
  for (const [what, args] of [
    ['approve --key-file', (k: string) => ['approve', 'p.json', '--as', 'Alice', '--key-file', k, '--yes']],
    [
      'plan --approver-key',
      (k: string) => ['plan', 'payroll.csv', '--out', 'p.json', '--as', 'Alice', '--approver-key', k, '--env', 'local'],
    ],
  ] as const) {
    it(what, async () => {
      const key = pemLine();
      const r = await runMain(args(key), { cwd: await dirs.make(), env: cleanEnv() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout + r.stderr).not.toContain(key.slice(16));
      expect(r.stderr).toContain('names no file');
    });
  }
});
