import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { DEFAULT_KEYS } from './helpers.ts';
import { PassThrough } from 'node:stream';

const root = new URL('../..', import.meta.url).pathname;

describe('payout-batch sandbox', () => {
  it('starts on --port 0, prints its URL and keys, serves requests, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['dist/bin.js', 'sandbox', '--port', '0', '--quiet'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 20_000);
        child.stdout.on('data', () => {
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      expect(out).toContain(DEFAULT_KEYS.acmePrimary);
      expect(out).toContain(DEFAULT_KEYS.globex);
      expect(out).toContain('Acme Trading Ltd');
      const r = await fetch(`${url}/v1/payout-api/payouts/wallets`, { headers: { 'x-api-key': DEFAULT_KEYS.globex } });
      expect(r.status).toBe(200);
      expect((await r.json()).data.map((w: { currency: string }) => w.currency)).toEqual(['USD', 'EUR']);
      const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(out).toContain('Sandbox stopped.');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('refuses a bad seed file with a message naming the file and the field, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-seed-'));
    const file = join(dir, 'seed.json');
    writeFileSync(
      file,
      JSON.stringify({ businesses: [{ name: 'X', keys: ['sk_test_xxxxx'], wallets: [{ currency: 'USD', balance: '12.345' }] }] }),
    );
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const io = { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, cwd: root, stopSignal: Promise.resolve() };
    const code = await main(['sandbox', '--port', '0', '--seed', file], io);
    expect(code).toBe(2);
    expect(err).toContain(file);
    expect(err).toContain('businesses[0].wallets[0].balance');
    expect(err).not.toMatch(/\n\s+at /);
    writeFileSync(file, '{ not json');
    err = '';
    expect(await main(['sandbox', '--seed', file], io)).toBe(2);
    expect(err).toContain('is not valid JSON');
  });

  it('a --port another program holds: exit 2, saying to pick another or 0', async () => {
    const held = createServer().listen(0, '127.0.0.1');
    await once(held, 'listening');
    const { port } = held.address() as AddressInfo;
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const io = { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, cwd: root, stopSignal: Promise.resolve() };
    try {
      expect(await main(['sandbox', '--port', String(port), '--quiet'], io)).toBe(2);
      expect(err).toContain(`port ${port} on 127.0.0.1 is in use; pick another with --port, or --port 0 for a free one`);
      expect(err).not.toMatch(/\n\s+at /);
    } finally {
      held.close();
    }
  });

  it('runs in process with flags, until the stop signal, then closes', async () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    let stop!: () => void;
    const stopSignal = new Promise<void>((r) => (stop = r));
    const io = { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {}, cwd: root, stopSignal };
    const running = main(
      ['sandbox', '--port', '0', '--rate-limit', 'off', '--quota', '50', '--latency', '0-5', '--auto-advance', '10,10', '--quiet'],
      io,
    );
    const url = await new Promise<string>((resolve) => {
      const check = () => {
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]!);
        else setTimeout(check, 10);
      };
      check();
    });
    expect(out).toContain('rate limit: off/s per key, quota: 50/month');
    expect((await fetch(`${url}/v1/payout-api/payouts/pairs`, { headers: { 'x-api-key': DEFAULT_KEYS.acmePrimary } })).status).toBe(200);
    stop();
    expect(await running).toBe(0);
    await expect(fetch(`${url}/v1/payout-api/payouts/pairs`)).rejects.toThrow();
    const bad = { ...io, stderr: new PassThrough() };
    let err = '';
    bad.stderr.on('data', (c: Buffer) => (err += c.toString()));
    expect(await main(['sandbox', '--latency', 'slow'], bad)).toBe(2);
    expect(err).toContain('--latency');
  });
});
