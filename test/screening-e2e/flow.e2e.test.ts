// Issue 42 end to end, with real processes against a sandbox over HTTP: the sample payroll and the
// sample sanctions list (samples/sanctions) through screen, plan, approve and run; a clearance
// signed and used, then voided by a changed account; a stale list refused under the account's
// policy. Payouts are counted at the sandbox. The step each test is about runs as a process; the
// steps that set it up, refusals before anything is sent and reads of what screen counts, run main()
// in this process (under the host folder of policies of the scene's installation, when it has one:
// mocked here).
import { copyFileSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { onTerminal } from '../cli/pty.ts';
import { until } from '../ops/helpers.ts';
import { install, type Installation } from '../approvals/install.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { testDatabase, withoutPassword, withPostgres } from '../pg/database.ts';

/** The host folder of policies main() reads in this process: the scene's installation's (empty: the package's own). */
const host = vi.hoisted(() => ({ folder: '' }));
vi.mock('../../src/package-root.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/package-root.ts')>();
  return { ...real, packageJson: () => ({ ...real.packageJson(), ...(host.folder && { payoutBatch: { hostFolder: host.folder } }) }) };
});

const LIST = join(ROOT, 'samples/sanctions/sdn.csv');
const sample = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8').trim().split('\n');
/** Sample rows 1-11 (NGN) and 14-21 (USD): two of them on the sample list, 001 (its name reversed) and 021 (a legal form). */
const ROWS = [...sample.slice(1, 12), ...sample.slice(14, 22)];
const HELD = ['001', '021'];

const dirs = tempDirs('pb-screening-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: defaultSeed(), shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

let scenes = 0;
/**
 * A folder with the batch (references of its own), the CLI against the sandbox (of `inst`, an
 * installation whose host folder of policies no other test shares), and approvers Alice and Bob listed.
 */
async function scene(inst?: Installation) {
  const dir = await dirs.make();
  const prefix = `S${++scenes}`;
  const batch = (rows = ROWS) =>
    [sample[0], ...rows]
      .join('\n')
      .replace(/PAYROLL-2025-01-/g, `${prefix}-`)
      .replace(/documents\//g, `${join(ROOT, 'samples/documents')}/`) + '\n';
  writeFileSync(join(dir, 'payroll.csv'), batch());
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', sb.url, '--rate', '100'];
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env, bin: inst?.bin });
  /** The same in this process, for steps that set a scene up and what is not about a process. */
  const inProcess = (...args: string[]) => {
    host.folder = inst?.hostFolder ?? '';
    return runMain(args, { cwd: dir, env });
  };
  const list: { name: string; publicKey: string }[] = [];
  for (const name of ['Alice', 'Bob']) {
    const k = newKeyPair();
    writeFileSync(join(dir, `${name}.pem`), k.privatePem, { mode: 0o600 });
    list.push({ name, publicKey: k.publicKey });
  }
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify(list));
  const results = () => parse<Record<string, string>>(readFileSync(join(dir, 'payroll.results.csv'), 'utf8'), { columns: true, bom: true });
  /** `approve PATH` as Alice, her key checked against approvers.json (in this process). */
  const approve = (path: string) =>
    inProcess('approve', path, '--as', 'Alice', '--key-file', 'Alice.pem', '--approvers', 'approvers.json', '--yes');
  /** `plan` of the batch against the sample list, written to payroll.plan.json (in this process). */
  const planHeld = () =>
    inProcess(
      'plan',
      join(dir, 'payroll.csv'),
      '--out',
      join(dir, 'payroll.plan.json'),
      '--sanctions-list',
      LIST,
      '--prepared-by',
      'Dan',
      ...service,
    );
  return {
    dir,
    prefix,
    env,
    service,
    cli,
    inProcess,
    planHeld,
    approve,
    results,
    rewrite: (rows: string[]) => writeFileSync(join(dir, 'payroll.csv'), batch(rows)),
  };
}

// (First in the file: its 31 s wait for the clearance to expire idles this worker while
// approvals/policy-holds.e2e, which starts beside it (the suite's two longest files), runs its
// other tests; that file waits on its own expiry last. Both waits at once left a core unused.)
it('a clearance that expires while the run waits at its confirmation no longer lets its row go: nothing is sent', async () => {
  const { dir, env, prefix, service, approve } = await scene();
  const ref = `${prefix}-001`;
  // made 30 seconds ago for a minute (30 for the run to reach its question on a busy machine): in force when the run starts, expired by the time it is answered
  const madeAt = Date.now() - 30_000;
  vi.useFakeTimers({ toFake: ['Date'], now: madeAt });
  try {
    const clear = ['--sanctions-list', LIST, '--clear', ref, '--entry', 'ofac-sdn:90001', '--reason', 'born 1990, the listed person 1961'];
    const made = await runMain(['screen', join(dir, 'payroll.csv'), ...clear, '--expires', '1m', '--as', 'Dan'], { cwd: dir, env }); // prettier-ignore
    expect(made.code, made.stderr).toBe(0);
  } finally {
    vi.useRealTimers();
  }
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  expect((await approve(join('clearances', clearance!))).code).toBe(0);
  const before = initiates(sb).length;
  const expired = async () => {
    await until(() => Date.now() > madeAt + 61_000, 45_000, 'the clearance to expire');
    return 'y\r';
  };
  const args = ['run', 'payroll.csv', '--allow-partial', '--sanctions-list', LIST, '--approvers', 'approvers.json', ...service];
  const t = await onTerminal(args, { env, cwd: dir, answer: expired });
  expect(t.atQuestion).toContain(`Send ${ROWS.length - 1} payouts`);
  expect(t.code, t.output).toBe(3);
  expect(t.output).toMatch(/sanctions clearance of row 2 expired/);
  expect(initiates(sb)).toHaveLength(before);
});

it('screen: the sample payroll against the sample list holds the five payees it collides with, and no other', async () => {
  const dir = await dirs.make();
  const r = await runCli(['screen', join(ROOT, 'samples/payroll-2025-01.csv'), '--sanctions-list', LIST, '--json'], {
    cwd: dir,
    env: cleanEnv(),
  });
  expect(r.code, r.stderr).toBe(1);
  const out = JSON.parse(r.stdout) as {
    held: { reference: string; row: number; hits: { entryId: string; on: string }[] }[];
    screened: number;
    lists: { entries: number; digest: string; format: string }[];
  };
  expect(out.screened).toBe(52);
  expect(out.lists).toEqual([expect.objectContaining({ format: 'ofac-sdn', entries: 7, digest: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
  // tokens reversed (001), a look-alike letter (012), a legal form (021), accents (038), a listed BIC (048)
  expect(out.held.map((h) => [h.reference.slice(-3), h.hits.map((x) => `${x.entryId}:${x.on}`)])).toEqual([
    ['001', ['90001:name']],
    ['012', ['90003:name']],
    ['021', ['90004:name']],
    ['038', ['90002:name']],
    ['048', ['90005:bic']],
  ]);
  // a list that cannot be read is an error, never an empty list
  const missing = await runMain(['screen', join(ROOT, 'samples/payroll-2025-01.csv'), '--sanctions-list', join(dir, 'nope.csv')], {
    cwd: dir,
    env: cleanEnv(),
  });
  expect(missing.code).toBe(2);
});

it('run: held rows are never sent; the others only with --allow-partial, and the results say HELD_SCREENING', async () => {
  const { prefix, service, cli, inProcess, results } = await scene();
  const before = initiates(sb).length;
  const refused = await inProcess('run', 'payroll.csv', '--yes', '--sanctions-list', LIST, ...service);
  expect(refused.code, refused.stderr).toBe(3);
  expect(refused.stderr).toContain('2 rows are held by sanctions screening');
  expect(initiates(sb)).toHaveLength(before);

  const r = await cli('run', 'payroll.csv', '--yes', '--allow-partial', '--sanctions-list', LIST, ...service);
  expect(r.code, r.stderr).toBe(1); // (rows not sent: the held ones)
  // one initiate per row sent, and every row but the held ones has its payout
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  const rows = results();
  expect(rows.filter((x) => x.payoutId).map((x) => x.reference!.slice(-3))).toEqual(
    ROWS.map((l) => l.slice(16, 19)).filter((n) => !HELD.includes(n)),
  );
  for (const h of HELD) {
    const row = rows.find((x) => x.reference === `${prefix}-${h}`)!;
    expect(row.status).toBe('HELD_SCREENING');
    expect(row.errorMessage).toContain('held by sanctions screening: ofac-sdn');
    expect(row.payoutId).toBe('');
  }
});

it('a pain.001 transfer made on behalf of a listed payer (UltmtDbtr), to a clean payee, is held until a clearance naming it', async () => {
  const { dir, prefix, service, cli, inProcess, approve, results } = await scene();
  const rows = sampleRows()
    .filter((r) => ['PAYROLL-2025-01-002', 'PAYROLL-2025-01-003'].includes(r.reference!))
    .map((r) => ({ ...r, reference: r.reference!.replace('PAYROLL-2025-01-', `${prefix}-`) }));
  // (the first transfer only, on behalf of a name on the sample list; both payees are clean)
  const payer = '<UltmtDbtr><Nm>Adaeze Okafor</Nm><PstlAdr><TwnNm>Lagos</TwnNm><Ctry>NG</Ctry></PstlAdr></UltmtDbtr>';
  writeFileSync(join(dir, 'payroll.xml'), pain001(rows, 'pain.001.001.09').replace('<Cdtr>', `${payer}<Cdtr>`));
  const before = initiates(sb).length;
  const docs = ['--documents', join(ROOT, 'samples/documents')];
  const r = await inProcess('run', 'payroll.xml', ...docs, '--yes', '--allow-partial', '--sanctions-list', LIST, ...service);
  expect(r.code, r.stderr).toBe(1);
  expect(initiates(sb)).toHaveLength(before + 1);
  const [held, sent] = results();
  expect([held!.reference, held!.status, held!.payoutId]).toEqual([`${prefix}-002`, 'HELD_SCREENING', '']);
  // the hit names the payer it is sent on behalf of, not the payee
  expect(held!.errorMessage).toContain('ofac-sdn 90001 "OKAFOR, Adaeze"');
  expect(held!.errorMessage).toContain('the payer it is sent on behalf of (UltmtDbtr) "Adaeze Okafor"');
  expect([sent!.reference, sent!.payoutId]).toEqual([`${prefix}-003`, expect.stringMatching(/./)]);

  // cleared as a payee's hit is: the clearance names that payer to its signers, and once signed the row goes
  const clear = ['--clear', `${prefix}-002`, '--entry', 'ofac-sdn:90001', '--reason', 'another company', '--as', 'Dan'];
  expect((await inProcess('screen', 'payroll.xml', '--sanctions-list', LIST, ...clear)).code).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances'));
  const made = JSON.parse(readFileSync(join(dir, 'clearances', clearance!), 'utf8')) as { payeeText: string };
  expect(made.payeeText).toMatch(/, on behalf of Adaeze Okafor$/);
  expect((await approve(join('clearances', clearance!))).code).toBe(0);
  const again = await cli('run', 'payroll.xml', ...docs, '--yes', '--sanctions-list', LIST, '--approvers', 'approvers.json', ...service);
  expect(again.code, again.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + 2);
  expect(results()[0]!.screeningClearance).toContain('ofac-sdn:90001, signed by Alice');
});

it('retry without --sanctions-list sends no row the screening held: they stay HELD_SCREENING', async () => {
  const { prefix, service, cli, inProcess } = await scene();
  const before = initiates(sb).length;
  const r = await inProcess('run', 'payroll.csv', '--yes', '--allow-partial', '--sanctions-list', LIST, ...service);
  expect(r.code, r.stderr).toBe(1);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  const again = await cli('retry', 'payroll.results.csv', '--yes', ...service);
  expect(again.code, again.stderr).toBe(1);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  const retried = parse<Record<string, string>>(readFileSync(again.stdout.match(/results\s+(\S+)/)![1]!, 'utf8'), {
    columns: true,
    bom: true,
  });
  expect(HELD.map((h) => retried.find((x) => x.reference === `${prefix}-${h}`)!.status)).toEqual(['HELD_SCREENING', 'HELD_SCREENING']);
});

it('run again without --sanctions-list sends no row an earlier run held, also one refused whole, nor another batch', async () => {
  const { dir, prefix, service, cli, inProcess, results } = await scene();
  const before = initiates(sb).length;
  const held = () => HELD.map((h) => results().find((x) => x.reference === `${prefix}-${h}`)!);
  // refused whole (no --allow-partial): nothing sent, but the hold is kept
  expect((await inProcess('run', 'payroll.csv', '--yes', '--sanctions-list', LIST, ...service)).code).toBe(3);
  const r = await cli('run', 'payroll.csv', '--yes', '--allow-partial', ...service);
  expect(r.code, r.stderr).toBe(1);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  expect(held().map((x) => [x.status, x.payoutId])).toEqual(HELD.map(() => ['HELD_SCREENING', '']));
  expect(held()[0]!.errorMessage).toContain('--sanctions-list');
  // (and without --allow-partial the batch is refused, as a run that holds them now)
  const again = await inProcess('run', 'payroll.csv', '--yes', ...service);
  expect(again.code, again.stderr).toBe(3);
  expect(again.stderr).toContain('2 rows are held by sanctions screening');
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  // screened again, the rows are judged afresh: still on the list, still held
  expect((await inProcess('run', 'payroll.csv', '--yes', '--sanctions-list', LIST, ...service)).code).toBe(3);
  // the held rows alone in another file (another batch) are held too
  const lines = readFileSync(join(dir, 'payroll.csv'), 'utf8').trim().split('\n');
  writeFileSync(join(dir, 'held.csv'), [lines[0], ...lines.filter((l) => HELD.some((h) => l.startsWith(`${prefix}-${h},`)))].join('\n'));
  const other = await inProcess('run', 'held.csv', '--yes', ...service);
  expect(other.code, other.stderr).toBe(3);
  expect(other.stderr).toContain('2 references of this file (' + HELD.map((h) => `${prefix}-${h}`).join(', '));
  expect(other.stderr).toContain('held by sanctions screening in another batch');
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
});

it.runIf(withPostgres)('the team ledger keeps a hold too: written there, or brought by ledger import', async () => {
  const before = initiates(sb).length;
  const sent = before + 2 * (ROWS.length - HELD.length);
  for (const imported of [false, true]) {
    const { prefix, env, service, cli, inProcess, results } = await scene();
    const ledger = withoutPassword(await testDatabase());
    env.PGPASSWORD = ledger.PGPASSWORD;
    const team = ['--ledger', ledger.url];
    // (the run that holds them in this process when it keeps them in the state folder; with the ledger's password, a process)
    const r = await (imported ? inProcess : cli)(
      'run',
      'payroll.csv',
      '--yes',
      '--allow-partial',
      '--sanctions-list',
      LIST,
      ...service,
      ...(imported ? [] : team),
    );
    expect(r.code, r.stderr).toBe(1);
    const im = imported && (await cli('ledger', 'import', '--from-state-dir', 'state', ...team, ...service.slice(0, 2)));
    if (im) expect(im.code, im.stderr).toBe(0);
    const again = await cli('run', 'payroll.csv', '--yes', '--allow-partial', ...team, ...service);
    expect(again.code, again.stderr).toBe(1);
    expect(HELD.map((h) => results().find((x) => x.reference === `${prefix}-${h}`)!.status)).toEqual(HELD.map(() => 'HELD_SCREENING'));
  }
  expect(initiates(sb)).toHaveLength(sent);
});

it('plan, approve, run --plan: the signed plan records the screening; other lists are not the approved plan', async () => {
  const { dir, service, cli, inProcess, planHeld, approve } = await scene();
  const plan = await planHeld();
  expect(plan.code, plan.stderr).toBe(1); // (rows held)
  expect(plan.stdout).toMatch(/^ {2}HELD {9}row 2 S\d+-001: ofac-sdn 90001/m);
  const file = JSON.parse(readFileSync(join(dir, 'payroll.plan.json'), 'utf8')) as {
    screening: { lists: { digest: string }[]; held: unknown[] };
  };
  expect(file.screening.lists).toHaveLength(1);
  expect(file.screening.held).toHaveLength(2);
  const approved = await approve('payroll.plan.json');
  expect(approved.code, approved.stderr).toBe(0);
  // what the approver reads before signing: the list and the rows it holds back
  expect(approved.stdout).toMatch(/screened against sdn\.csv \(7 entries, .*\): 2 held and not paid \(S\d+-001, S\d+-021\)/);
  const before = initiates(sb).length;
  const gate = ['--require-approvals', '1', '--approvers', 'approvers.json', '--yes'];
  // another list (the same entries and one more): not what was approved
  const other = join(dir, 'other');
  mkdirSync(other);
  writeFileSync(
    join(other, 'sdn.csv'),
    readFileSync(LIST, 'utf8').replace('\x1a', '') +
      '90008,"SOMEONE ELSE","individual","SDGT","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","-0- "\r\n\x1a',
  );
  for (const f of ['alt.csv', 'add.csv']) copyFileSync(join(ROOT, 'samples/sanctions', f), join(other, f));
  for (const lists of [['--sanctions-list', join(other, 'sdn.csv')], []]) {
    const r = await inProcess('run', '--plan', 'payroll.plan.json', ...gate, '--allow-partial', ...lists, ...service);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toContain('the plan was screened against');
  }
  // the approved lists, but without --allow-partial: the held rows are not left out silently
  const partial = await inProcess('run', '--plan', 'payroll.plan.json', ...gate, '--sanctions-list', LIST, ...service);
  expect(partial.code).toBe(3);
  expect(partial.stderr).toContain('pass --allow-partial');
  expect(initiates(sb)).toHaveLength(before);
  const r = await cli('run', '--plan', 'payroll.plan.json', ...gate, '--allow-partial', '--sanctions-list', LIST, ...service);
  expect(r.code, r.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
});

it('a plan run that left the held rows out: a retry without --sanctions-list sends none of them', async () => {
  const { prefix, service, cli, inProcess, planHeld, approve, results } = await scene();
  await planHeld();
  expect((await approve('payroll.plan.json')).code).toBe(0);
  const gate = ['--require-approvals', '1', '--approvers', 'approvers.json', '--yes'];
  const before = initiates(sb).length;
  const r = await inProcess('run', '--plan', 'payroll.plan.json', ...gate, '--allow-partial', '--sanctions-list', LIST, ...service);
  expect(r.code, r.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
  // the rows the plan left out say why: held, as a run's results say
  const held = () => HELD.map((h) => results().find((x) => x.reference === `${prefix}-${h}`)!.status);
  expect(held()).toEqual(['HELD_SCREENING', 'HELD_SCREENING']);
  const again = await cli('retry', 'payroll.results.csv', '--yes', ...service);
  expect(initiates(sb), again.stdout + again.stderr).toHaveLength(before + ROWS.length - HELD.length);
  expect(again.code, again.stderr).toBe(1); // (they stay HELD_SCREENING, as after a run's retry)
});

/** `screen --clear REF` of the sample list's entry 90001 (the first row's hit), as a compliance officer writes it. */
const clearFirst = (cli: Awaited<ReturnType<typeof scene>>['cli'], dir: string, ref: string, ...more: string[]) =>
  cli(
    'screen',
    join(dir, 'payroll.csv'),
    '--sanctions-list',
    LIST,
    '--clear',
    ref,
    '--entry',
    'ofac-sdn:90001',
    '--reason',
    'born 1990, the listed person 1961',
    ...more,
  );

it('a clearance its maker signed with their key: that key counts for nobody, under any name', async () => {
  const { dir, prefix, inProcess, approve } = await scene();
  // Alice makes it under another name, signing it with her key as its maker, then approves it as herself
  const made = await clearFirst(inProcess, dir, `${prefix}-001`, '--as', 'Dan', '--approver-key', 'Alice.pem');
  expect(made.code, made.stderr).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  expect((await approve(join('clearances', clearance!))).code).toBe(0);
  const listed = await inProcess('screen', '--clearances', '--approvers', 'approvers.json');
  expect(listed.stdout).toContain('signed by nobody: does not count (0 of 1 approvals');
});

it('a clearance approvers signed lets its row go, the results name it; a changed account voids it', async () => {
  const { dir, prefix, service, cli, inProcess, approve, results, rewrite } = await scene();
  const ref = `${prefix}-001`;
  const screen = (...more: string[]) =>
    inProcess('screen', join(dir, 'payroll.csv'), '--sanctions-list', LIST, '--approvers', 'approvers.json', '--json', ...more);
  const made = await clearFirst(inProcess, dir, ref, '--expires', '90d', '--as', 'Dan');
  expect(made.code, made.stderr).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  // not in force until an approver signs it
  expect((JSON.parse((await screen()).stdout) as { held: { reference: string }[] }).held.map((h) => h.reference)).toContain(ref);
  const signed = await approve(join('clearances', clearance!));
  expect(signed.code, signed.stderr).toBe(0);
  const listed = await inProcess('screen', '--clearances', '--approvers', 'approvers.json');
  expect(listed.stdout).toContain(`clear ${ref}`);
  expect(listed.stdout).toContain('signed by Alice: counts');
  const now = JSON.parse((await screen()).stdout) as { held: { reference: string }[]; cleared: { row: number }[] };
  expect(now.held.map((h) => h.reference)).toEqual([`${prefix}-021`]);
  expect(now.cleared).toEqual([{ row: 2, clearances: [clearance!.replace('.clearance.json', '')] }]);

  const before = initiates(sb).length;
  const r = await cli(
    'run',
    'payroll.csv',
    '--yes',
    '--allow-partial',
    '--sanctions-list',
    LIST,
    '--approvers',
    'approvers.json',
    ...service,
  );
  expect(r.code, r.stderr).toBe(1);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - 1);
  const row = results().find((x) => x.reference === ref)!;
  expect(row.payoutId).not.toBe('');
  expect(results().find((x) => x.reference === `${prefix}-021`)!.status).toBe('HELD_SCREENING');
  expect(row.screeningClearance).toContain('ofac-sdn:90001, signed by Alice');

  // the same payee with another account: the clearance bound the old one
  rewrite(ROWS.map((l) => (l.startsWith('PAYROLL-2025-01-001,') ? l.replace('0123456785', '0123456792') : l)));
  const again = JSON.parse((await screen()).stdout) as { held: { reference: string }[] };
  expect(again.held.map((h) => h.reference)).toContain(ref);
});

it("screen counts a clearance as the account's policy does, not by the list it is given", async () => {
  const { dir, prefix, service, cli, inProcess } = await scene(install(await dirs.make()));
  const set = await inProcess('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', ...service);
  expect(set.code, set.stderr).toBe(0);
  writeFileSync(join(dir, 'Dan.pem'), newKeyPair().privatePem, { mode: 0o600 });
  const ref = `${prefix}-001`;
  const made = await clearFirst(inProcess, dir, ref, '--as', 'Dan', '--approver-key', 'Dan.pem');
  expect(made.code, made.stderr).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  const approve = (name: string) =>
    inProcess(
      'approve',
      join('clearances', clearance!),
      '--as',
      name,
      '--key-file',
      `${name}.pem`,
      '--approvers',
      'approvers.json',
      '--yes',
    );
  expect((await approve('Alice')).code).toBe(0);
  // one approval of a listed approver: enough by --approvers alone, not under the policy (2), as run counts it
  const listed = await cli('screen', '--clearances', '--approvers', 'approvers.json', ...service);
  expect(listed.stdout).toContain("Counted as the account's policy counts them: 2 of Alice, Bob.");
  expect(listed.stdout).toContain('signed by Alice: does not count (1 of 2 approvals');
  const screen = async () =>
    JSON.parse(
      (await inProcess('screen', 'payroll.csv', '--sanctions-list', LIST, '--approvers', 'approvers.json', '--json', ...service)).stdout,
    ) as {
      held: { reference: string }[];
    };
  expect((await screen()).held.map((h) => h.reference)).toContain(ref);
  expect((await approve('Bob')).code).toBe(0);
  expect((await inProcess('screen', '--clearances', ...service)).stdout).toContain('signed by Alice, Bob: counts');
  expect((await screen()).held.map((h) => h.reference)).not.toContain(ref);
});

it("a list older than the account's policy allows refuses the run, and so does no list at all", async () => {
  const { dir, service, cli, inProcess } = await scene(install(await dirs.make()));
  await writeBatch(dir, 'usd.csv', { rows: 2, currencies: ['USD'], prefix: `OLD${scenes}` });
  const set = await inProcess(
    'policy',
    'set',
    '--require-approvals',
    '1',
    '--approvers',
    'approvers.json',
    '--above',
    'USD:1000000',
    '--screening-max-age',
    '1d',
    ...service,
  );
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toContain('payees screened against sanctions lists at most 1d old');
  const old = join(dir, 'old');
  mkdirSync(old);
  for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) {
    copyFileSync(join(ROOT, 'samples/sanctions', f), join(old, f));
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
    utimesSync(join(old, f), threeDaysAgo, threeDaysAgo);
  }
  const before = initiates(sb).length;
  const stale = await cli('run', 'usd.csv', '--yes', '--sanctions-list', join(old, 'sdn.csv'), ...service);
  expect(stale.code, stale.stdout + stale.stderr).toBe(3);
  expect(stale.stderr).toContain("older than the 24h this account's policy allows");
  const none = await inProcess('run', 'usd.csv', '--yes', ...service);
  expect(none.code).toBe(3);
  expect(none.stderr).toContain('give --sanctions-list');
  const plan = await inProcess('plan', 'usd.csv', '--sanctions-list', join(old, 'sdn.csv'), ...service);
  expect(plan.code).toBe(3);
  expect(plan.stdout).toContain('older than the 24h');
  // screen says so too, rather than "No payee held."
  const screened = await inProcess('screen', 'usd.csv', '--sanctions-list', join(old, 'sdn.csv'), ...service);
  expect(screened.code, screened.stdout).toBe(3);
  expect(screened.stderr).toContain('older than the 24h');
  expect((await inProcess('screen', 'usd.csv', ...service)).stderr).toContain('give --sanctions-list');
  expect(initiates(sb)).toHaveLength(before);
  // a fresh list: sent
  const now = join(dir, 'now');
  mkdirSync(now);
  for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) copyFileSync(join(ROOT, 'samples/sanctions', f), join(now, f));
  const fresh = await cli('run', 'usd.csv', '--yes', '--sanctions-list', join(now, 'sdn.csv'), ...service);
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + 2);
});

it('watch refuses a file with any payee on a sanctions list whole, even under "allowPartial"', async () => {
  const { dir, prefix, cli } = await scene();
  const watch = join(dir, 'watch');
  mkdirSync(join(watch, 'inbox'), { recursive: true });
  copyFileSync(join(dir, 'payroll.csv'), join(watch, 'inbox', 'payroll.csv'));
  writeFileSync(join(watch, 'inbox', 'payroll.csv.ready'), '');
  const config = {
    environment: 'sandbox',
    baseUrl: sb.url,
    settleSeconds: 0,
    allowPartial: true,
    allowDocumentsOutside: true,
    sanctionsLists: [LIST],
  };
  writeFileSync(join(watch, 'payout-batch.json'), JSON.stringify(config));
  const before = initiates(sb).length;
  const w = await cli('watch', watch, '--once');
  expect(w.stdout + w.stderr).toContain('payroll.csv is refused whole: 2 rows are held by sanctions screening');
  expect(readdirSync(join(watch, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(before);
  // the same folder and list, the file without its two listed payees: paid
  writeFileSync(
    join(watch, 'inbox', 'clean.csv'),
    [sample[0], ...ROWS.filter((l) => !/-0(01|21),/.test(l))]
      .join('\n')
      .replace(/PAYROLL-2025-01-/g, `${prefix}W-`)
      .replace(/documents\//g, `${join(ROOT, 'samples/documents')}/`) + '\n',
  );
  writeFileSync(join(watch, 'inbox', 'clean.csv.ready'), '');
  const ok = await cli('watch', watch, '--once');
  expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + ROWS.length - HELD.length);
});
