// The API key never leaves through what the service says back (issue 17, items 4, 5, 6): an echo
// of the key, in any case, encoded or cut short, anywhere in an error body, is scrubbed before it
// reaches an error, the journal, the results file or stderr; a key file's content is never quoted;
// the key never goes over plain http to another machine.
import { parse } from 'csv-parse/sync';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiKey, ClientConfigError, loadApiKey, parseKeyFile } from '../../src/client/api-key.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { connect } from '../../src/client/connect.ts';
import { PayoutApiError } from '../../src/client/errors.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, cleanEnv, filesUnder, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';
import { PAYOUT, json, scriptedFetch } from './fake-fetch.ts';
import { echoes, keyFormsIn } from './key-forms.ts';

const dirs = tempDirs('pb-secrets-');
let sb: LocalSandbox | undefined;
let proxy: Server | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
  proxy = undefined;
  await dirs.remove();
});

/** Fails when some 12 characters of a form of the key, in any case or encoding, are in the text. */
function expectNoKey(text: string, key: string, what: string) {
  expect(keyFormsIn(text, key), `${what} holds the key`).toEqual([]);
}

/** A 400 whose every string echoes the key, every form of it (key-forms.ts), as field errors, an array message and deep inside. */
function echoBody(key: string) {
  const e = echoes(key);
  return {
    statusCode: 400,
    // (the message reaches the results file, the journal and the logs whole; field errors the first three)
    message: Object.entries(e).map(([form, echo]) => `key sent ${form}: ${echo}`),
    error: 'VALIDATION_ERROR',
    errors: [
      ...Object.entries(e)
        .reverse()
        .map(([form, echo]) => ({ field: 'beneficiary.accountNumber', message: `sent ${form}: ${echo}` })),
      { field: `header ${e.truncated}`, message: `url ${e.urlEncoded}` },
    ],
    details: { nested: [{ deep: `cut ${e.truncated}`, hex: e.hex, offset: e.base64AfterKeyEquals }] },
  };
}

describe('item 4: the key echoed in an error body', () => {
  it('is scrubbed from the error: message, array message, field errors, code, in any case and encoding', async () => {
    const key = 'sk_sandbox_Mixed/Case+Key=2025';
    const { fetch } = scriptedFetch([json(400, echoBody(key))]);
    const c = new PayoutClient({ baseUrl: 'https://x.test', apiKey: new ApiKey(key), fetch });
    const e = await c.listWallets().then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(PayoutApiError);
    const err = e as PayoutApiError;
    expectNoKey(JSON.stringify(err.toJSON()) + err.message, key, 'the error');
    expect(err.fieldErrors).toHaveLength(Object.keys(echoes(key)).length + 1);
    expect(err.message).toContain('[redacted]');
  });

  it('is scrubbed from every string of a body the service answered with success', async () => {
    const key = 'sk_sandbox_acme_primary';
    const { fetch } = scriptedFetch([json(200, { ...PAYOUT, payoutRef: `PO ${key.toUpperCase()}` })]);
    const c = new PayoutClient({ baseUrl: 'https://x.test', apiKey: new ApiKey(key), fetch });
    expect((await c.getPayout(PAYOUT.id)).payoutRef).toBe('PO [redacted]');
    expect(new ApiKey(key).scrubDeep({ a: [{ b: `x ${key.slice(0, 12)}y` }] })).toEqual({ a: [{ b: 'x [redacted]y' }] });
  });

  it('end to end: a gateway echoing every form of the key to quote, upload-url and initiate: in no file, log or output', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    // The gateway answers 400 with the echo to every initiate and upload-url, and to the quote of
    // every quote: so in the run (which quotes nothing) row 1 (with a document) fails at its
    // upload, rows 2 to 4 at their initiate; `plan --out` fails at its quotes. Everything else
    // goes to the sandbox.
    const echoed: string[] = [];
    proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const route = req.url!.replace(/\?.*$/, '').split('/').pop()!;
        if (req.method === 'POST' && (route === 'initiate' || route === 'upload-url' || route === 'quote')) {
          echoed.push(route);
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(echoBody(KEY)));
          return;
        }
        const target = new URL(sb!.url);
        const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.end(body);
      });
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 4, documentsEvery: 4 });
    const state = join(dir, 'state');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state });
    const r = await runCli(['run', 'payroll.csv', '--yes', '--base-url', url, '--rate', '100', '--log-level', 'debug'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(1);
    expect(echoed.sort()).toEqual(['initiate', 'initiate', 'initiate', 'upload-url']);
    const results = await readFile(join(dir, 'payroll.results.csv'), 'utf8');
    expectNoKey(results, KEY, 'the results file');
    const rows = parse<Record<string, string>>(results, { columns: true, bom: true });
    expect(rows.map((x) => x.errorCode)).toEqual(['VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect(results).toContain('[redacted]');
    // The logs: JSON lines on stderr, a line per row not created.
    expectNoKey(r.stdout + r.stderr, KEY, 'the output');
    expect(r.stderr.match(/"msg":"row not created"/g)).toHaveLength(4);
    // The journal, in the account's ledger in the state folder: each rejection is there.
    const journals = (await filesUnder(state)).filter((f) => f.endsWith('.journal.jsonl'));
    expect(journals).toHaveLength(1);
    const journal = await readFile(journals[0]!, 'utf8');
    expectNoKey(journal, KEY, 'the journal');
    expect(journal.match(/"t":"rejected"/g)).toHaveLength(4);
    // The HTML report of the results file.
    const report = await runCli(['report', 'payroll.results.csv', '--out', 'report.html'], { cwd: dir, env });
    expect(report.code, report.stderr).toBe(0);
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    expectNoKey(html, KEY, 'the report');
    expect(html).toContain('VALIDATION_ERROR');
    expectNoKey(report.stdout + report.stderr, KEY, 'the output of report');
    // The quote of a plan file: its failure is shown and kept, the key nowhere (a ledger that never sent the file:
    // `plan` plans no row the service refused, as `run` never resends one)
    const fresh = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state-2') });
    const plan = await runCli(['plan', 'payroll.csv', '--out', 'p.json', '--base-url', url, '--rate', '100'], { cwd: dir, env: fresh });
    expect(echoed.filter((e) => e === 'quote').length).toBeGreaterThan(0);
    expect(plan.stdout).toMatch(/quote failed on row 3: .*\[redacted\]/);
    expectNoKey(plan.stdout + plan.stderr, KEY, 'the output of plan');
    for (const f of await filesUnder(dir)) expectNoKey(await readFile(f, 'utf8'), KEY, f);
  });
});

describe('item 5: a key file is never quoted', () => {
  it('a key with "=" read as a setting: the error names the line, not its text', () => {
    const key = 'QmFzZTY0S2V5V2l0aFBhZGRpbmc=';
    const shown = (text: string) => {
      try {
        parseKeyFile(text, '/k/acme.key');
      } catch (e) {
        expect(e).toBeInstanceOf(ClientConfigError);
        return (e as Error).message;
      }
      throw new Error('not refused');
    };
    for (const text of [`${key}\nenvironment=sandbox\n`, `environment=sandbox\n${key}\n`, `${key}\n\n`]) {
      const m = shown(text);
      expectNoKey(m, key, 'the message');
      expect(m.toLowerCase()).not.toContain(key.slice(0, 8).toLowerCase());
      expect(m).toMatch(/line \d/);
    }
    expect(shown(`environment=${key}\n`)).not.toContain(key.slice(0, 8));
    // Written as key=..., such a key is read whole.
    expect(parseKeyFile(`key=${key}\n`, '/k/acme.key').reveal()).toBe(key);
  });

  it('through the CLI: nothing of the key on stderr', async () => {
    const dir = await dirs.make();
    const key = 'sk_sandbox_with=equals_0123456789';
    await writeFile(join(dir, 'acme.key'), `${key}\n`, { mode: 0o600 });
    await writeBatch(dir, 'payroll.csv', { rows: 1 });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    delete env.PAYOUT_API_KEY;
    const r = await runCli(['run', 'payroll.csv', '--yes', '--base-url', 'http://127.0.0.1:9', '--key-file', 'acme.key'], {
      cwd: dir,
      env,
    });
    expect(r.code).toBe(2);
    expectNoKey(r.stdout + r.stderr, key, 'the output');
    expect(r.stderr.toLowerCase()).not.toContain('sk_sandbox_with');
    expect(r.stderr).toMatch(/acme\.key, line 1: unknown setting/);
  });
});

it('the key itself given where its file goes (--key-file, $PAYOUT_API_KEY_FILE): never quoted, the mistake said', async () => {
  for (const key of ['sk_sandbox_given_as_a_path_0123456789', 'QmFzZTY0/S2V5V2l0aFBhZGRpbmc']) {
    for (const o of [{ keyFile: key, env: {} }, { env: { PAYOUT_API_KEY_FILE: key } }]) {
      const e = (await loadApiKey({ ...o, cwd: '/' }).catch((x: unknown) => x)) as Error;
      expect(e).toBeInstanceOf(ClientConfigError);
      expectNoKey(e.message, key, 'the message');
      expect(e.message).toContain('the key itself goes in $PAYOUT_API_KEY');
    }
  }
});

describe('item 6: plain http only to this machine', () => {
  it('connect refuses http:// to another host before any request', async () => {
    const calls: string[] = [];
    const fetch = (async (u: string | URL | Request) => {
      calls.push(typeof u === 'string' ? u : u instanceof URL ? u.href : u.url);
      return json(200, { data: [] });
    }) as typeof globalThis.fetch;
    for (const baseUrl of ['http://192.0.2.2:4741', 'http://example.test', 'http://[2001:db8::1]:80', 'http://10.0.0.1/api']) {
      const e = await connect({
        env: 'production',
        baseUrl,
        apiKey: new ApiKey('plain_key_0123456789'),
        vars: {},
        stateDir: false,
        client: { fetch },
      }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e, baseUrl).toBeInstanceOf(ClientConfigError);
      expect((e as ClientConfigError).reason).toBe('refused');
      expect((e as Error).message).toMatch(/plain http:\/\/.*use https:\/\//);
    }
    expect(calls).toEqual([]);
    // Loopback stays allowed (the sandbox, a local proxy).
    for (const baseUrl of ['http://127.0.0.1:1', 'http://127.8.9.10:1', 'http://localhost:1', 'http://[::1]:1', 'https://192.0.2.2']) {
      const c = await connect({ baseUrl, apiKey: new ApiKey('plain_key_0123456789'), vars: {}, stateDir: false, client: { fetch } });
      await c.close();
    }
  });

  it('the CLI exits 3 (refused) with the reason, and sends nothing', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1 });
    const state = join(dir, 'state');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_API_KEY: 'plain_key_0123456789' });
    const r = await runCli(['run', 'payroll.csv', '--yes', '--env', 'production', '--base-url', 'http://192.0.2.2:4741'], {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/refusing to send the API key over plain http:\/\/ to 192\.0\.2\.2:4741: use https:\/\//);
    // The client counts every request it starts (usage.json in the state folder): none.
    expect(await filesUnder(state).catch(() => [])).toEqual([]);
  });
});
