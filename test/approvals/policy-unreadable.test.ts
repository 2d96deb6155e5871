// A host folder or policy file this user may not look at is not "no policy": the account's policy
// could be there, so nothing is sent until the user can read it.
import { describe, expect, it, vi } from 'vitest';

const denied = vi.hoisted(() => ({ path: '' }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const lstatSync = ((path: string, ...rest: unknown[]) => {
    if (denied.path && String(path).startsWith(denied.path))
      throw Object.assign(new Error(`EACCES: permission denied, lstat '${path}'`), { code: 'EACCES' });
    return (fs.lstatSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.lstatSync;
  return { ...fs, lstatSync, default: { ...fs, lstatSync } };
});

const { hostFolder, policyInForce } = await import('../../src/approvals/account-policy.ts');

describe('policyInForce, the host folder not readable by this user', () => {
  it('refuses, naming the folder, instead of reading no policy', async () => {
    denied.path = hostFolder();
    await expect(policyInForce('http://127.0.0.1:4791')).rejects.toMatchObject({ name: 'PolicyError' });
    await expect(policyInForce('http://127.0.0.1:4791')).rejects.toThrow(new RegExp(`${hostFolder()}.*EACCES`));
  });
});
