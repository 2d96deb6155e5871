// `listen` with the sandbox delivering real signed webhooks over HTTP to 127.0.0.1: a bad
// signature is refused and nothing applied; a replayed delivery (the sandbox's own retry after a
// lost answer, and a replay after a restart) is applied once; an older status delivered late
// is ignored. A small proxy in front of the listener loses answers or deliveries on purpose.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSubscription, startListener, type RunningListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { KEY, ROOT, cleanEnv, ledgerJournals, connectionTo, paidBatch, setStatus, startSb, until } from './helpers.ts';

const SECRET = 'whsec_test_0123456789abcdef';
let sb: LocalSandbox | undefined;
let listener: RunningListener | undefined;
let proxy: Server | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  proxy = undefined;
  await sb?.close();
  sb = undefined;
});

type Policy = (delivery: { id: string; body: string; newStatus?: string; nth: number }) => 'forward' | 'lose-answer' | 'refuse';

/** Forwards deliveries to `target`; 'lose-answer' forwards but tells the sandbox 503, 'refuse' does not forward. */
async function startProxy(target: string, policy: Policy): Promise<string> {
  const seen = new Map<string, number>();
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void forward());
    const forward = async () => {
      const body = Buffer.concat(chunks);
      const id = String(req.headers['x-service-delivery-id'] ?? '');
      const nth = (seen.get(id) ?? 0) + 1;
      seen.set(id, nth);
      let newStatus: string | undefined;
      try {
        newStatus = JSON.parse(body.toString()).data?.newStatus;
      } catch {
        /* not JSON */
      }
      const what = policy({ id, body: body.toString(), newStatus, nth });
      if (what === 'refuse') {
        res.writeHead(503).end();
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const h of ['x-service-delivery-id', 'x-service-signature']) if (req.headers[h]) headers[h] = String(req.headers[h]);
      const r = await fetch(target, { method: 'POST', headers, body });
      await r.arrayBuffer();
      res.writeHead(what === 'lose-answer' ? 503 : r.status).end();
    };
  });
  await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
}

const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const inbox = (dir: string) =>
  readFileSync(join(dir, 'inbox.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const journalStatusLines = (_dir: string) => {
  return readFileSync(ledgerJournals()[0]!, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((l) => l.t === 'status');
};

async function setup(o: { listenerSecret?: string; policy?: Policy } = {}) {
  sb = await startSb({ webhookRetryDelaysMs: [300, 300, 300] });
  const batch = await paidBatch(sb, { rows: 2 });
  const stateDir = join(batch.dir, 'listen-state');
  listener = await startListener({ port: 0, secret: o.listenerSecret ?? SECRET, stateDir, results: [batch.results] });
  const url = o.policy ? await startProxy(listener.url, o.policy) : listener.url;
  await registerSubscription(connectionTo(sb).client, url, SECRET);
  return { ...batch, stateDir };
}

const statusOf = async (results: string, i: number) => (await readResults(results)).rows[i]!.result;

describe('payout-batch listen', () => {
  it('applies the status changes the sandbox delivers, forward, with informationRequests and statusDetail', async () => {
    const { results, ids } = await setup();
    await setStatus(sb!, ids[0]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    await until(async () => (await statusOf(results, 0)).status === 'ADDITIONAL_INFO_REQUIRED', 5000, 'AIR applied');
    expect(JSON.parse((await statusOf(results, 0)).informationRequests!)).toEqual([{ title: 'Invoice', type: 'FILE' }]);
    await setStatus(sb!, ids[0]!, 'PENDING');
    await until(async () => (await statusOf(results, 0)).statusDetail === 'ADDITIONAL_INFO_UNDER_REVIEW', 5000, 'under review');
    expect((await statusOf(results, 0)).informationRequests).toBeUndefined();
    expect((await statusOf(results, 1)).status).toBe('PENDING');
  });

  it('a delivery with a bad signature is refused (401) and nothing is applied', async () => {
    const { results, ids, stateDir } = await setup({ listenerSecret: 'another-secret-entirely' });
    await setStatus(sb!, ids[0]!, 'PROCESSING');
    await until(() => sb!.deliveries().length >= 2, 5000, 'the sandbox to try twice');
    expect(sb!.deliveries().every((d) => d.status === 401)).toBe(true);
    // A forged body with the signature of another body, sent by hand.
    const genuine = JSON.stringify({
      eventType: 'payout.status.changed',
      deliveryId: '11111111-1111-4111-8111-111111111111',
      occurredAt: new Date().toISOString(),
      data: { payoutId: ids[1], businessId: 'b', oldStatus: 'PENDING', newStatus: 'PROCESSING', changedAt: new Date().toISOString() },
    });
    const forged = genuine.replace('PROCESSING', 'REJECTED');
    const r = await fetch(listener!.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-delivery-id': '11111111-1111-4111-8111-111111111111',
        'x-service-signature': sign(genuine, 'another-secret-entirely'),
      },
      body: forged,
    });
    expect(r.status).toBe(401);
    const unsigned = await fetch(listener!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: genuine });
    expect(unsigned.status).toBe(401);
    await listener!.idle();
    expect((await statusOf(results, 0)).status).toBe('PENDING');
    expect((await statusOf(results, 1)).status).toBe('PENDING');
    expect(inbox(stateDir).filter((l) => l.t === 'delivery')).toHaveLength(0);
    expect(listener!.stats()).toMatchObject({ accepted: 0, applied: 0 });
    expect(listener!.stats().rejected).toBeGreaterThanOrEqual(4);
  });

  it('a replayed delivery is applied once: the sandbox resends after a lost answer, and a replay after a restart is still dropped', async () => {
    const { dir, results, ids, stateDir } = await setup({
      policy: ({ newStatus, nth }) => (newStatus === 'PROCESSING' && nth === 1 ? 'lose-answer' : 'forward'),
    });
    await setStatus(sb!, ids[0]!, 'PROCESSING');
    await until(() => listener!.stats().duplicates >= 1, 5000, 'the sandbox to resend the delivery');
    await listener!.idle();
    expect((await statusOf(results, 0)).status).toBe('PROCESSING');
    const attempts = sb!.deliveries().filter((d) => d.eventType === 'payout.status.changed');
    expect(attempts.length).toBe(2);
    expect(new Set(attempts.map((a) => a.deliveryId)).size).toBe(1);
    expect(listener!.stats()).toMatchObject({ accepted: 1, duplicates: 1, applied: 1 });
    expect(journalStatusLines(dir).map((l) => l.status)).toEqual(['PROCESSING']);

    // Restart on the same state folder, then replay the recorded delivery byte for byte.
    await listener!.close();
    listener = await startListener({ port: 0, secret: SECRET, stateDir, results: [results] });
    const recorded = inbox(stateDir).find((l) => l.t === 'delivery')!;
    const r = await fetch(listener.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-delivery-id': recorded.deliveryId,
        'x-service-signature': sign(recorded.raw),
      },
      body: recorded.raw,
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ received: true, duplicate: true });
    await listener.idle();
    expect(listener.stats()).toMatchObject({ accepted: 0, duplicates: 1, applied: 0 });
    expect(inbox(stateDir).filter((l) => l.t === 'delivery')).toHaveLength(1);
    expect(journalStatusLines(dir)).toHaveLength(1);
  });

  it('an older status delivered after a newer one (out of order) is ignored', async () => {
    const { results, ids, stateDir } = await setup({
      policy: ({ newStatus, nth }) => (newStatus === 'PROCESSING' && nth === 1 ? 'refuse' : 'forward'),
    });
    await setStatus(sb!, ids[0]!, 'PROCESSING');
    await setStatus(sb!, ids[0]!, 'SUCCESSFUL');
    await until(() => listener!.stats().accepted >= 2, 5000, 'both deliveries');
    await listener!.idle();
    const order = inbox(stateDir)
      .filter((l) => l.t === 'delivery')
      .map((l) => JSON.parse(l.raw).data.newStatus);
    expect(order).toEqual(['SUCCESSFUL', 'PROCESSING']);
    expect((await statusOf(results, 0)).status).toBe('SUCCESSFUL');
    expect(
      inbox(stateDir)
        .filter((l) => l.t === 'applied')
        .map((l) => l.rows),
    ).toEqual([1, 0]);
  });

  it('starts on an inbox of 50,000 applied deliveries under a 64 MB heap: the inbox is read, not held; one never applied is applied', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 1 });
    writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`, { mode: 0o600 });
    const stateDir = join(dir, 'listen-state');
    mkdirSync(stateDir, { mode: 0o700 });
    const delivery = (i: number, payoutId: string, newStatus: string, statusDetail: string) => {
      const at = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
      const data = { payoutId, businessId: 'biz_acme', oldStatus: 'PENDING', newStatus, newStatusDetail: statusDetail, changedAt: at };
      const raw = JSON.stringify({ eventType: 'payout.status.changed', deliveryId: `d${i}`, occurredAt: at, data });
      return JSON.stringify({
        t: 'delivery',
        deliveryId: `d${i}`,
        eventType: 'payout.status.changed',
        receivedAt: at,
        eventKey: `k${i}`,
        raw,
      });
    };
    const fd = openSync(join(stateDir, 'inbox.jsonl'), 'w', 0o600);
    const n = 50_000; // about 70 MB: more than the heap holds
    for (let i = 0; i < n; i++)
      writeSync(
        fd,
        `${delivery(i, `po_other_${i}`, 'PROCESSING', 'x'.repeat(1200))}\n${JSON.stringify({ t: 'applied', deliveryId: `d${i}`, rows: 0 })}\n`,
      );
    writeSync(fd, `${delivery(n, ids[0]!, 'PROCESSING', 'at the bank')}\n`); // recorded, then the listener stopped
    closeSync(fd);
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'dist/bin.js'),
        'listen',
        '--port',
        '0',
        '--secret-file',
        'webhook.secret',
        '--results',
        results,
        '--state-dir',
        stateDir,
      ],
      { cwd: dir, env: cleanEnv({ NODE_OPTIONS: '--max-old-space-size=64' }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let ended = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    const exited = new Promise<number | string | null>((r) =>
      child.on('close', (code, signal) => {
        ended = true;
        r(code ?? signal);
      }),
    );
    try {
      await until(async () => ended || (await statusOf(results, 0)).status === 'PROCESSING', 30_000, 'the delivery applied');
    } finally {
      child.kill('SIGTERM');
    }
    expect(stderr).not.toContain('heap out of memory');
    expect(await exited).toBe(0);
    expect(await statusOf(results, 0)).toMatchObject({ status: 'PROCESSING', statusDetail: 'at the bank' });
    expect(stdout).toMatch(/Stopped: 0 accepted, 0 replays dropped, 0 refused, 1 applied/);
  });

  it('the CLI: --register creates the subscription, applies deliveries, logs wallet events as JSON, never prints the secret, stops cleanly', async () => {
    sb = await startSb({ webhookRetryDelaysMs: [300] });
    const { dir, results, ids } = await paidBatch(sb, { rows: 1 });
    writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`, { mode: 0o600 });
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', () => r()));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'dist/bin.js'),
        'listen',
        '--port',
        String(port),
        '--secret-file',
        'webhook.secret',
        '--register',
        `http://127.0.0.1:${port}/hooks`,
        '--results',
        results,
        '--base-url',
        sb.url,
        '--state-dir',
        'listen-state',
      ],
      { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    try {
      await until(() => stdout.includes('Subscription created'), 15_000, 'the subscription');
      const subs = (await (await fetch(`${sb.url}/v1/payout-api/webhooks`, { headers: { 'x-api-key': KEY } })).json()) as {
        data: { url: string; hasSecret: boolean }[];
      };
      expect(subs.data).toMatchObject([{ url: `http://127.0.0.1:${port}/hooks`, hasSecret: true }]);
      await setStatus(sb, ids[0]!, 'PROCESSING');
      await until(async () => (await statusOf(results, 0)).status === 'PROCESSING', 5000, 'PROCESSING applied');
      const wallets = (await (await fetch(`${sb.url}/v1/payout-api/payouts/wallets`, { headers: { 'x-api-key': KEY } })).json()) as {
        data: { walletId: string; currency: string }[];
      };
      const gbp = wallets.data.find((w) => w.currency === 'GBP')!;
      await fetch(`${sb.url}/_sandbox/wallets/${gbp.walletId}/credit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '10.00', reference: 'TOPUP-1' }),
      });
      await until(() => stderr.includes('wallet credited'), 5000, 'the wallet event');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/Stopped: 2 accepted, 0 replays dropped, 0 refused, 2 applied/);
    const logs = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(logs.find((l) => l.msg === 'status moved')).toMatchObject({ command: 'listen', payoutId: ids[0], to: 'PROCESSING', row: 2 });
    expect(logs.find((l) => l.msg === 'wallet credited')).toMatchObject({ currency: 'GBP', amount: 10, reference: 'TOPUP-1' });
    expect(stdout + stderr).not.toContain(SECRET);
    expect(stdout + stderr).not.toContain(KEY);
  });
});
