// Issue 43, items 18–20: `watch --once` as cron runs it, with a dead man's switch, a metrics file
// and an alert, all against a receiver on 127.0.0.1. A tick that pays its file pings start and
// success and writes the metrics; a tick whose file is refused pings start and its exit code, posts
// the alert, and keeps the last success's time; a receiver that fails changes no exit code.
// No Prometheus text-format parser is installed: `parseProm` below reads the format's lines
// (HELP, TYPE, samples with escaped label values) and refuses anything else.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv } from '../engine/helpers.ts';
import { KEY, cleanEnv, runCli, startSb, until, workDir } from './helpers.ts';

interface Hit {
  path: string;
  body: string;
}
let sb: LocalSandbox | undefined;
let server: Server | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A receiver recording every request; it answers `status()`. */
async function receiver(status: () => number = () => 200): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', body });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The Prometheus text format (exposition format 0.0.4), strictly: a sample's metric must be TYPEd first, no series twice. */
function parseProm(text: string): Sample[] {
  const samples: Sample[] = [];
  const typed = new Set<string>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][\w:]*) (.+)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') typed.add(meta[2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not the text format: ${line}`);
    const labels: Record<string, string> = {};
    const rest = (m[2] ?? '').replace(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)",?/g, (_, k: string, v: string) => {
      labels[k] = v.replace(/\\(.)/g, (__, c: string) => (c === 'n' ? '\n' : c));
      return '';
    });
    if (rest !== '') throw new Error(`bad labels: ${line}`);
    if (!typed.has(m[1]!)) throw new Error(`no TYPE before ${m[1]}`);
    const value = Number(m[3]);
    if (Number.isNaN(value)) throw new Error(`not a value: ${line}`);
    const id = `${m[1]}${JSON.stringify(labels)}`;
    if (seen.has(id)) throw new Error(`series twice: ${id}`);
    seen.add(id);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}
const one = (s: Sample[], name: string) => s.filter((x) => x.name === `payout_batch_${name}`);

describe('watch --once with --ping-url, a metrics file and --notify-url', () => {
  it('pings start and success or the exit code, writes the metrics, alerts on a refused file; a failing receiver changes nothing', async () => {
    sb = await startSb();
    const rx = await receiver();
    const dir = await workDir('pb-signals-');
    writeFileSync(
      join(dir, 'payout-batch.json'),
      JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 1, rate: 200, metricsFile: 'metrics/payouts.prom' }),
    );
    mkdirSync(join(dir, 'inbox'));
    mkdirSync(join(dir, 'metrics'));
    const drop = (name: string, csv: string) => {
      writeFileSync(join(dir, 'inbox', name), csv);
      writeFileSync(join(dir, 'inbox', `${name}.ready`), '');
    };
    const tick = (ping: string, notify: string) =>
      runCli(['watch', dir, '--once', '--ping-url', ping, '--notify-url', notify], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
        timeoutMs: 60_000,
      });
    const metrics = () => parseProm(readFileSync(join(dir, 'metrics', 'payouts.prom'), 'utf8'));

    // 1. A file paid whole: start, then success; no alert.
    drop('good.csv', generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'SIG', amount: () => '10.50' }));
    const ok = await tick(`${rx.url}/ping/abc`, `${rx.url}/hook`);
    expect(ok.code, ok.stderr.slice(-2000)).toBe(0);
    expect(rx.hits.map((h) => h.path)).toEqual(['/ping/abc/start', '/ping/abc']);
    let m = metrics();
    expect(one(m, 'exit_code').map((s) => s.value)).toEqual([0]);
    expect(one(m, 'rows').reduce((n, s) => n + s.value, 0)).toBe(3);
    expect(one(m, 'amount').find((s) => s.labels.currency === 'GBP' && s.labels.total === 'debited')!.value).toBeGreaterThanOrEqual(31.5);
    expect(one(m, 'requests_used')[0]!.value).toBeGreaterThan(0);
    expect(one(m, 'requests_left')[0]!.value).toBe(10_000 - one(m, 'requests_used')[0]!.value);
    expect(one(m, 'duration_seconds')[0]!.value).toBeGreaterThan(0);
    expect(m.every((s) => s.labels.source === 'payouts')).toBe(true);
    const success = one(m, 'last_success_timestamp_seconds')[0]!.value;
    expect(success).toBeGreaterThan(Date.now() / 1000 - 600);

    // 2. A file with an invalid row is refused whole (exit 3): start, then /3, and the alert.
    rx.hits.length = 0;
    drop('broken.csv', generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'BAD', amount: (i) => (i === 1 ? 'abc' : '10.00') }));
    const bad = await tick(`${rx.url}/ping/abc`, `${rx.url}/hook`);
    expect(bad.code, bad.stderr.slice(-2000)).toBe(3);
    expect(rx.hits.map((h) => h.path)).toEqual(['/ping/abc/start', '/ping/abc/3', '/hook']);
    const alert = JSON.parse(rx.hits[2]!.body) as Record<string, unknown>;
    expect(alert).toMatchObject({ command: 'watch', exitCode: 3 });
    expect(alert.text).toMatch(/^payout-batch watch .* exit 3\n.*broken\.csv: failed: refused/s);
    expect(rx.hits[1]!.body).toBe(alert.text);
    m = metrics();
    expect(one(m, 'exit_code').map((s) => s.value)).toEqual([3]);
    expect(one(m, 'last_success_timestamp_seconds')[0]!.value).toBe(success);
    for (const h of rx.hits) expect(h.body).not.toContain(KEY);

    // 3. The receiver answers 500: logged, and the exit code is the run's (0, an empty tick).
    const down = await receiver(() => 500);
    const quiet = await tick(`${down.url}/ping/abc`, `${down.url}/hook`);
    expect(quiet.code).toBe(0);
    expect(down.hits.map((h) => h.path)).toEqual(['/ping/abc/start', '/ping/abc']);
    expect(quiet.stderr).toContain('ping not sent');
    expect(quiet.stderr).not.toContain('/ping/abc');
  });

  it('left running (no --once): each tick pings start and its end, until stopped', async () => {
    sb = await startSb();
    const rx = await receiver();
    const dir = await workDir('pb-signals-');
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, pollSeconds: 0.2, rate: 200 }));
    let stop = () => {};
    const running = runCli(['watch', dir, '--ping-url', `${rx.url}/p`], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
      onSpawn: (c) => (stop = () => c.kill('SIGTERM')),
      timeoutMs: 60_000,
    });
    await until(() => rx.hits.filter((h) => h.path === '/p').length >= 2, 30_000, 'two ticks');
    stop();
    expect((await running).code).toBe(0);
    const paths = rx.hits.map((h) => h.path);
    // the process's start, then start and end of each tick, then the process's end
    expect(paths.slice(0, 4)).toEqual(['/p/start', '/p/start', '/p', '/p/start']);
    expect(paths.at(-1)).toBe('/p');
  });
});
