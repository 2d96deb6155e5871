// `payout-batch sandbox --shapes`, and $PAYOUT_SANDBOX_SHAPES for it and for the sandbox that
// `--env local` embeds (src/cli/command.ts parseShapes). In process: main() with its own streams.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { makeLogger, openConnection } from '../../src/cli/options.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { ACME, P } from './helpers.ts';

const root = new URL('../..', import.meta.url).pathname;

function io(env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: '', err: '' };
  stdout.on('data', (c: Buffer) => (text.out += c.toString()));
  stderr.on('data', (c: Buffer) => (text.err += c.toString()));
  let stop!: () => void;
  const stopSignal = new Promise<void>((r) => (stop = r));
  return { io: { stdout, stderr, stdin: new PassThrough(), env, cwd: root, stopSignal }, text, stop };
}

/** Runs `payout-batch sandbox ARGS` until it prints its URL; returns the URL and a function that stops it. */
async function serve(args: string[], env: NodeJS.ProcessEnv = {}) {
  const t = io(env);
  const running = main(['sandbox', '--port', '0', '--quiet', ...args], t.io);
  const url = await new Promise<string>((resolve, reject) => {
    void running.then((code) => reject(new Error(`exited ${code}: ${t.text.err}`)));
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(t.text.out);
      if (m) resolve(m[1]!);
      else setTimeout(check, 10);
    };
    check();
  });
  return {
    url,
    out: t.text.out,
    stop: async () => {
      t.stop();
      return running;
    },
  };
}

const wallets = async (url: string) => (await fetch(`${url}${P}/wallets`, { headers: { 'x-api-key': ACME } })).json();

describe('payout-batch sandbox --shapes', () => {
  it('answers in the variant reading with --shapes variant, and says so', async () => {
    const s = await serve(['--shapes', 'variant']);
    try {
      expect(s.out).toContain('shapes: variant');
      const w = await wallets(s.url);
      expect(w).toMatchObject({ statusCode: 200, message: expect.any(String) });
      expect(typeof w.data[0].balance).toBe('string');
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it('takes $PAYOUT_SANDBOX_SHAPES when no flag is given; the flag wins', async () => {
    const fromEnv = await serve([], { PAYOUT_SANDBOX_SHAPES: 'variant' });
    try {
      expect(fromEnv.out).toContain('shapes: variant');
    } finally {
      await fromEnv.stop();
    }
    const flag = await serve(['--shapes', 'strict'], { PAYOUT_SANDBOX_SHAPES: 'variant' });
    try {
      expect(flag.out).toContain('shapes: strict');
      expect(typeof (await wallets(flag.url)).data[0].balance).toBe('number');
    } finally {
      await flag.stop();
    }
  });

  it('refuses another value of the flag or the variable as a usage error (exit 2)', async () => {
    const bad = io();
    expect(await main(['sandbox', '--port', '0', '--shapes', 'loose'], bad.io)).toBe(2);
    expect(bad.text.err).toContain('--shapes is strict or variant (got "loose")');
    const badEnv = io({ PAYOUT_SANDBOX_SHAPES: 'loose' });
    expect(await main(['sandbox', '--port', '0'], badEnv.io)).toBe(2);
    expect(badEnv.text.err).toContain('PAYOUT_SANDBOX_SHAPES is strict or variant');
  });
});

describe('$PAYOUT_SANDBOX_SHAPES and --env local', () => {
  const connectLocal = async (env: NodeJS.ProcessEnv) => {
    const t = io({ PAYOUT_BATCH_STATE_DIR: mkdtempSync(join(tmpdir(), 'shapes-state-')), ...env });
    return openConnection({ env: 'local', 'log-level': 'silent' }, t.io, makeLogger({ 'log-level': 'silent' }, t.io, 'test'));
  };

  it('starts the embedded sandbox in the reading the variable names, strict without it', async () => {
    for (const [env, shapes] of [
      [{ PAYOUT_SANDBOX_SHAPES: 'variant' }, 'variant'],
      [{}, 'strict'],
    ] as const) {
      const conn = await connectLocal(env);
      try {
        expect((conn.sandbox as LocalSandbox).shapes).toBe(shapes);
      } finally {
        await conn.close();
      }
    }
  });

  it('refuses another value as a usage error (exit 2), before anything starts', async () => {
    await expect(connectLocal({ PAYOUT_SANDBOX_SHAPES: 'lenient' })).rejects.toMatchObject({ name: 'UsageError', exitCode: 2 });
    const t = io({ PAYOUT_SANDBOX_SHAPES: 'lenient', PAYOUT_BATCH_STATE_DIR: mkdtempSync(join(tmpdir(), 'shapes-state-')) });
    expect(await main(['account', '--env', 'local'], t.io)).toBe(2);
    expect(t.text.err).toContain('PAYOUT_SANDBOX_SHAPES is strict or variant (got "lenient")');
  });
});
