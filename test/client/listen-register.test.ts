// `listen --register URL`: the webhook's secret, and the URL's password and token, are neither printed
// nor logged, whether the service registers the URL (echoing it) or refuses it quoting the request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { cleanEnv, tempDirs } from '../engine/helpers.ts';

const SECRET = 'whsec_ListenSecret0123456789';
const PASSWORD = 'HookPassword42';
const TOKEN = 'HookToken9876543';
const HOOK = `https://hooks:${PASSWORD}@hooks.example.com/in?token=${TOKEN}`;

const dirs = tempDirs('pb-listen-register-');
let service: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (service ? service.close(r) : r(undefined)));
  service = undefined;
  await dirs.remove();
});

/** The service's webhook routes: no subscription yet; the POST answered `answer(its body)`. */
async function serviceAnswering(answer: (body: string) => [number, unknown]): Promise<string> {
  service = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const [status, json] = req.method === 'GET' ? [200, { data: [] }] : answer(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((r) => service!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
}

async function listenRegister(baseUrl: string, secretFile = 'webhook.secret'): Promise<{ code: number; out: string }> {
  const dir = await dirs.make();
  await writeFile(join(dir, 'webhook.secret'), `${SECRET}\r\n`, { mode: 0o600 });
  const chunks: Buffer[] = [];
  const sink = new PassThrough().on('data', (c: Buffer) => chunks.push(c));
  const args = ['listen', '--port', '0', '--secret-file', secretFile, '--register', HOOK, '--base-url', baseUrl];
  const code = await main([...args, '--log-level', 'trace', '--log-format', 'json'], {
    stdout: sink,
    stderr: sink,
    stdin: Readable.from([]),
    env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), PAYOUT_BATCH_DEBUG: '1' }),
    cwd: dir,
    // stopped at once: the registration comes before the wait
    stopSignal: Promise.resolve(),
  });
  return { code, out: Buffer.concat(chunks).toString('utf8') };
}

const expectNone = (out: string) => {
  for (const s of [SECRET, PASSWORD, TOKEN]) expect(out, out).not.toContain(s);
};

describe('listen --register', () => {
  it('registered: the URL shown without its password and token', async () => {
    const url = await serviceAnswering((body) => [201, { id: 'wh_1', ...(JSON.parse(body) as object) }]);
    const { code, out } = await listenRegister(url);
    expect(code, out).toBe(0);
    expect(out).toContain('Subscription created: https://***@hooks.example.com/in?*** (id wh_1)');
    expectNone(out);
  });

  it('refused, the service quoting the request: nothing of it printed', async () => {
    const url = await serviceAnswering((body) => [
      400,
      { statusCode: 400, error: 'VALIDATION_ERROR', message: [`bad request ${body}`], errors: [{ field: 'secret', message: body }] },
    ]);
    const { code, out } = await listenRegister(url);
    expect(code, out).toBe(2);
    expect(out).toMatch(/registering the webhook failed: .*\[redacted\]/);
    expectNone(out);
  });

  it('the secret itself given where its file goes: never quoted, the mistake said', async () => {
    const url = await serviceAnswering(() => [500, {}]);
    for (const given of [SECRET, `/nowhere/${SECRET}`]) {
      const { code, out } = await listenRegister(url, given);
      expect(code, out).toBe(2);
      expect(out).toContain('--secret-file names no file');
      expectNone(out);
    }
  });
});
