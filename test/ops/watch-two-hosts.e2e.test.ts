// Two `watch` hosts on one team ledger (issue 30): two processes, each with its own HOME, watch
// folder and state folder, given the same files (the shared inbox as each host sees it) and one
// PostgreSQL ledger, against one sandbox. Each file is run once: its rows are sent once at the
// sandbox, it ends in done/ on one host only, and the other host says where it was claimed.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv, initiates, tempDirs } from '../engine/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';
import { allPayouts, cleanEnv, runCli, startSb } from './helpers.ts';

const FILES = ['north.csv', 'south.csv', 'east.csv'];
const ROWS = 2;

describe.runIf(withPostgres)('two watch hosts on one team ledger', () => {
  let sb: LocalSandbox;
  let url: string;
  const dirs = tempDirs('pb-watch-hosts-');
  beforeAll(async () => {
    [sb, url] = await Promise.all([startSb({ monthlyQuota: null }), testDatabase()]);
  });
  afterAll(async () => {
    await sb?.close();
    await dirs.remove();
  });

  it('runs each file once: done/ on one host, the other says where it was claimed', async () => {
    const root = await dirs.make();
    // The configuration names the ledger without its password (refused there): PGPASSWORD gives it.
    const ledger = new URL(url);
    const password = decodeURIComponent(ledger.password);
    ledger.password = '';
    const hosts = ['alpha', 'beta'].map((h) => join(root, h));
    // Which ledger: --ledger, else the configuration's, else $PAYOUT_BATCH_LEDGER_URL. Each host is
    // given one it must not use (nothing listens there): alpha in the variable, beta in its configuration too.
    const nowhere = 'postgres://payout@127.0.0.1:1/nowhere';
    const flags = [[], ['--ledger', ledger.toString()]];
    hosts.forEach((dir, h) => {
      mkdirSync(join(dir, 'inbox'), { recursive: true });
      const config = {
        environment: 'sandbox',
        baseUrl: sb.url,
        settleSeconds: 1,
        requireReady: true,
        rate: 200,
        ledger: [ledger.toString(), nowhere][h],
      };
      writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify(config));
      FILES.forEach((name, f) => {
        const csv = generateCsv({ rows: ROWS, currencies: ['GBP'], prefix: `HOST${f}`, amount: (i) => `${20 + f * 10 + i}.00` });
        writeFileSync(join(dir, 'inbox', name), csv);
        writeFileSync(join(dir, 'inbox', `${name}.ready`), '');
      });
    });
    const runs = await Promise.all(
      hosts.map((dir, h) =>
        runCli(['watch', dir, '--once', ...flags[h]!], {
          cwd: dir,
          env: cleanEnv({
            HOME: join(dir, 'home'),
            PAYOUT_BATCH_STATE_DIR: join(dir, 'state'),
            PGPASSWORD: password,
            PAYOUT_BATCH_LEDGER_URL: nowhere,
          }),
        }),
      ),
    );
    const logs = runs.map((r) => r.stdout + r.stderr);
    for (const r of runs) expect([0, 3], r.stdout + r.stderr.slice(-3000)).toContain(r.code);

    // Each row sent once (an initiate the service would answer from its idempotency is still a second run).
    expect(initiates(sb)).toHaveLength(FILES.length * ROWS);
    expect(new Set((await allPayouts(sb)).map((p) => p.sourceAmount)).size).toBe(FILES.length * ROWS);

    const claims = (dir: string, sub: string) => readdirSync(join(dir, sub)).map((id) => ({ id, dir: join(dir, sub, id) }));
    for (const name of FILES) {
      const done = hosts.flatMap((dir, h) =>
        claims(dir, 'done')
          .filter((c) => c.id.endsWith(`-${name}`))
          .map((c) => ({ ...c, h })),
      );
      expect(done, name).toHaveLength(1);
      const other = 1 - done[0]!.h;
      const [copy] = claims(hosts[other]!, 'failed').filter((c) => c.id.endsWith(`-${name}`));
      const summary = JSON.parse(readFileSync(join(copy!.dir, name.replace('.csv', '.summary.json')), 'utf8'));
      expect(summary).toMatchObject({ outcome: 'failed', kind: 'refused', claimedElsewhere: { claim: done[0]!.id, name } });
      expect(summary.reason).toContain(`claim ${done[0]!.id}`);
      expect(logs[other]).toMatch(new RegExp(`claimed elsewhere.*${done[0]!.id}|${done[0]!.id}.*claimed elsewhere`));
    }
    expect(readdirSync(join(hosts[0]!, 'processing')).concat(readdirSync(join(hosts[1]!, 'processing')))).toEqual([]);
  });

  it('the retry it prints for a failed row names the team ledger of its configuration, and works as printed', async () => {
    const dir = await dirs.make();
    const ledger = new URL(url);
    const env = cleanEnv({ HOME: join(dir, 'home'), PGPASSWORD: decodeURIComponent(ledger.password) });
    ledger.password = '';
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    const config = { environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, rate: 200, allowPartial: true, ledger: ledger.toString() };
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify(config));
    const lines = generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'TEAMRETRY', amount: (i) => `${300 + i}.00` }).split('\n');
    lines[1] = lines[1]!.replace(',601613,', ',60161,'); // a sort code one digit short: invalid
    writeFileSync(join(dir, 'inbox', 'pay.csv'), lines.join('\n'));
    const watched = await runCli(['watch', dir, '--once'], { cwd: dir, env });
    expect(watched.code, watched.stdout + watched.stderr.slice(-2000)).toBe(1);
    const retry = /`(payout-batch retry [^`]+)`/.exec(watched.stdout)?.[1];
    expect(retry, watched.stdout).toContain(`--ledger ${ledger.toString()}`);

    const results = retry!.split(' ')[2]!;
    writeFileSync(results, readFileSync(results, 'utf8').replace(',60161,', ',601613,'));
    const before = initiates(sb).length;
    const retried = await runCli([...retry!.split(' ').slice(1), '--yes', '--no-report'], { cwd: dir, env });
    expect(retried.code, retried.stderr.slice(-2000)).toBe(0);
    expect(initiates(sb).length - before).toBe(1);
  });
});
