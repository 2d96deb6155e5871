// The signals of src/signals/signals.ts in this process, against a receiver on 127.0.0.1: what
// reaches it, and what the log says of a URL that carries a secret.
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { signalsFor } from '../../src/signals/signals.ts';
import { cleanEnv, generateCsv, runMain, tempDirs } from '../engine/helpers.ts';

let server: Server | undefined;
const dirs = tempDirs('pb-signals-');
afterAll(() => dirs.remove());
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

type Hit = { path: string; authorization?: string; body: string };
async function receiver(): Promise<{ port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, hits };
}

describe('signals', () => {
  it('a ping URL with user:password@ pings with them as Basic credentials, and the log never shows them', async () => {
    const rx = await receiver();
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (l: string) => void lines.push(l) } });
    const signals = signalsFor({ pingUrl: `http://hc:s3cr3t-t0ken@127.0.0.1:${rx.port}/ping/uuid-1` }, 'run', logger);
    await signals.start();
    await signals.end({ exitCode: 0, failed: false });
    expect(lines.join('')).not.toContain('s3cr3t-t0ken');
    const basic = `Basic ${Buffer.from('hc:s3cr3t-t0ken').toString('base64')}`;
    expect(rx.hits.map(({ path, authorization }) => ({ path, authorization }))).toEqual([
      { path: '/ping/uuid-1/start', authorization: basic },
      { path: '/ping/uuid-1', authorization: basic },
    ]);
  });

  it.each([
    ['a batch file that is not there', ['missing.csv', '-y'], 2, 'missing.csv: no such file'],
    ['no terminal and no --yes', ['payroll.csv'], 3, 'not a terminal, so nobody can confirm'],
  ])('run refused before sending (%s): the failure ping and the alert say why', async (_, args, code, why) => {
    const rx = await receiver();
    const dir = await dirs.make();
    await writeFile(join(dir, 'payroll.csv'), generateCsv({ rows: 1, currencies: ['GBP'] }));
    const url = `http://127.0.0.1:${rx.port}`;
    const r = await runMain(
      ['run', ...args.map((a) => (a.endsWith('.csv') ? join(dir, a) : a)), '--ping-url', `${url}/p`, '--notify-url', `${url}/hook`],
      {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BASE_URL: 'http://127.0.0.1:9', PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
      },
    );
    expect(r.code, r.stderr).toBe(code);
    expect(rx.hits.map((h) => h.path)).toEqual(['/p/start', `/p/${code}`, '/hook']);
    expect(rx.hits[1]!.body).toContain(why);
    expect((JSON.parse(rx.hits[2]!.body) as { text: string }).text).toContain(why);
  });
});

// Plain http to another machine would carry a ping's or alert's credentials (user:password@, a query, the path's token)
// and the alert's amounts in clear: refused as the options are read, before any run, as the client refuses its base URL.
describe('a ping or alert URL over plain http to another machine', () => {
  async function withFetchSeen(f: (sent: string[]) => Promise<void>): Promise<void> {
    const sent: string[] = [];
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation((u) => {
      sent.push(u instanceof Request ? u.url : u instanceof URL ? u.href : u);
      return Promise.resolve(new Response(null, { status: 200 }));
    });
    try {
      await f(sent);
    } finally {
      spy.mockRestore();
    }
  }
  const run = async (...flags: string[]) => {
    const dir = await dirs.make();
    return runMain(['run', 'missing.csv', '-y', ...flags], { cwd: dir, env: cleanEnv({ PAYOUT_BASE_URL: 'http://127.0.0.1:9' }) });
  };

  it.each([
    ['--ping-url', 'http://hc:s3cr3t-t0ken@pings.example.com/ping/uuid-s3cr3t', 'http://***@pings.example.com/...'],
    ['--notify-url', 'http://hooks.example.com/hook?token=s3cr3t-t0ken', 'http://hooks.example.com/...?***'],
    ['--ping-url', 'http://pings.example.com/ping/uuid-s3cr3t', 'http://pings.example.com/...'],
  ])('%s %s: refused before the run (exit 2), masked, nothing sent', async (flag, url, shown) => {
    await withFetchSeen(async (sent) => {
      const r = await run(flag, url);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${flag} ${shown}: `);
      expect(r.stderr).toContain('use https://');
      expect(r.stderr).not.toContain('missing.csv');
      expect(r.stderr).not.toContain('s3cr3t');
      expect(sent).toEqual([]);
    });
  });

  it("a watch configuration's pingUrl is named as its key", async () => {
    await withFetchSeen(async (sent) => {
      const dir = await dirs.make();
      const pingUrl = 'http://hc:s3cr3t-t0ken@pings.example.com/ping/uuid-s3cr3t';
      await writeFile(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'local', pingUrl }));
      const r = await runMain(['watch', dir, '--once'], { cwd: dir, env: cleanEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/pingUrl of the watch configuration \(payout-batch\.json\) http:\/\/\*\*\*@pings\.example\.com\/\.\.\.: /);
      expect(r.stderr).not.toContain('s3cr3t');
      expect(sent).toEqual([]);
    });
  });

  it('https to another machine is sent, credentials and all', async () => {
    await withFetchSeen(async (sent) => {
      const r = await run('--ping-url', 'https://hc:pw@pings.example.com/ping/1');
      expect(r.stderr).toContain('missing.csv');
      expect(sent).toEqual(['https://pings.example.com/ping/1/start', 'https://pings.example.com/ping/1/2']);
    });
  });
});
